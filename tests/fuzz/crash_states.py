#!/usr/bin/env python3
"""ClusterFuzz's crash type and crash state, computed from a sanitizer log.

ClusterFuzz files one bug per crash state. We want a state per kind of
finding (fuzz/findings/finding_frames.h), so the tests compute the states
our targets' real abort output gets, by the rules of ClusterFuzz's stack
parser (google/clusterfuzz, src/clusterfuzz/stacktraces/__init__.py and
constants.py, at 77584976329599df63bf3a0404fde0d1572e3712). This is our own
implementation of the part of those rules that a Linux C++ target under
libFuzzer and ASan/UBSan meets; it was checked against the real parser on
the fixtures in tests/fuzz/crash_state_fixtures/.

The rules, in short:
  - A line that names a crash (a sanitizer's "ERROR: ...Sanitizer: TYPE on
    ... address", libFuzzer's deadly signal, timeout or exit, a glibc
    assertion) sets the crash type and starts the state afresh.
  - Stack frames after it ("#N 0xADDR in FUNC FILE:LINE:COL") are taken in
    order; frames of libc, the sanitizers, libFuzzer, the C++ runtime,
    allocation and abort functions are skipped; a frame of
    LLVMFuzzerTestOneInput is named after its file instead ("diff_fuzzer.cc").
  - A frame's name is cut at its first '(' or '[' (or else its first
    space), after dropping "(anonymous namespace)::".
  - The state is the first three names, each with a newline; addresses and
    long numbers become ADDRESS and NUMBER; each line is cut at 80
    characters.
  - ClusterFuzz computes the state from the stack without inlined frames:
    run targets with ASAN_OPTIONS' symbolize_inline_frames=false for logs
    this module reads.

Usage: crash_states.py LOG [FUZZ_TARGET]  prints the type and the state.
"""

import os
import re
import string
import sys

MAX_FRAMES = 3
LINE_LENGTH_CAP = 80

# Lines that name a crash: (regex, type or None to take it from a group).
_SANITIZER_ERROR = re.compile(
    r'.*ERROR: [a-zA-Z]+Sanitizer[: ]*(.*) on (?:unknown address |address |)(?:[xX0-9a-fA-F]+)')
_SANITIZER_SEGV = re.compile(r'.*[a-zA-Z]+Sanitizer.*(?:SEGV|access-violation) on unknown address ([xX0-9a-fA-F]+)')
_SEGV_ACCESS = re.compile(r'.*The signal is caused by a ([A-Z]+) memory access')
# "READ of size 4 at 0x...": the type gains "\nREAD 4" (sizes past 16: {*}).
_ACCESS = re.compile(r'[ ]*([^ ]*|Atomic [^ ]*) of size ([^ ]*) at ([^ ]*)')
_NULL_PAGE = 4096
_LIBFUZZER_CRASHES = [
    (re.compile(r'.*ERROR:\s*libFuzzer:\s*deadly signal'), 'Fatal-signal'),
    (re.compile(r'.*ERROR:\s*libFuzzer:\s*fuzz target exited'), 'Unexpected-exit'),
    (re.compile(r'.*ERROR:\s*libFuzzer:\s*timeout'), 'Timeout'),
    (re.compile(r'.*ERROR:\s*libFuzzer:\s*out-of-memory'), 'Out-of-memory'),
]
_GLIBC_ASSERT = re.compile(r'.*:\s*assertion [`\'"]?(.*?)[`\'"]? failed\.?$', re.IGNORECASE)
_ABORT_LIKE = re.compile(r'.*[a-zA-Z]+Sanitizer: (?:ABRT|breakpoint|ILL|TRAP) ')
# A crash type that an abort following it does not replace.
_KEEP_BEFORE_ABORT = {'ASSERT', 'Timeout', 'Out-of-memory', 'Stack-overflow'}

# Lines that are shown but not parsed.
_SKIPPED_LINE_PARTS = ['SUMMARY:', 'WARNING: AddressSanitizer', ':INFO:CONSOLE']
_DEADLYSIGNAL = re.compile(r'(Address|Leak|Memory|UndefinedBehavior|Thread)Sanitizer:DEADLYSIGNAL')

# After these, the state takes no more frames (a second stack: where the
# memory was allocated, freed, ...).
_STOP_MARKERS = ['Direct leak of', 'Uninitialized value was stored to memory at', 'allocated by thread',
                 'created by main thread at', 'located in stack of thread', 'previously allocated by',
                 'freed by thread', 'previously freed by']

# "#N 0xADDR REST": REST is "in FUNC[+OFF] FILE:LINE[:COL]", "in FUNC
# (MODULE+OFF)", "in FUNC" or "(MODULE+OFF)".
_FRAME = re.compile(r'\s*#(\d+)\s+([xX0-9a-fA-F]+)\s+(.*)$')
_FUNC_AND_FILE = re.compile(r'^in\s*(.*) ([^ ]+?):(\d+)(?::(\d+))?$')

# Frames that say nothing about the bug, as ClusterFuzz's ignore list has
# them for Linux C and C++: matched against "FUNC FILE:LINE:COL" (or
# "FUNC (MODULE+OFF)") from the start of the frame's text.
_IGNORED_NAMES = ['abort', 'exit', 'pthread_create', 'pthread_kill', 'raise', 'tgkill', '__chk_fail',
                  '__fortify_fail']  # whole frame (a name with no file)
_IGNORED_PREFIXES = [
    # string and memory functions
    'memcmp', '__memcmp', 'memcpy', '__memcpy', 'memmove', '__memmove', 'memset', '__memset', 'strcmp',
    '__strcmp', 'strcpy', '__strcpy', 'strdup', '__strdup', 'strlen', '__strlen', 'strncpy', '__strncpy',
    # allocation, process start and end
    'calloc', 'malloc', 'realloc', 'free', 'new', 'delete', 'operator', 'New', '__cxa_atexit', '__cxa_rethrow',
    '__cxa_throw', '__libc_', '__GI_', '__run_exit_handlers', '__pthread_kill', '_start', 'main', 'abort',
    'gsignal', 'exit_or_terminate_process', 'common_exit', 'scanf', 'std::__terminate',
    'demangling_terminate_handler', '__assert_', '<null>', 'Abort(',
    # sanitizer runtimes
    '__asan::', '__asan_', '_asan_', 'asan_', '__lsan::', '__lsan_', '_lsan_', '__msan::', '__msan_', '_msan_',
    '__tsan::', '__tsan_', '_tsan_', '__ubsan::', '__ubsan_', '_ubsan_', '__hwasan::', '__hwasan_', '_hwasan_',
    '__sanitizer::', '__sanitizer_', '_sanitizer_', '__interceptor_', '___interceptor_backtrace',
    'print_address_description',
    # libFuzzer and its entry point (a named frame of it is replaced first)
    'fuzzer::', 'LLVMFuzzerTestOneInput', 'TestOneProtoInput', 'ExitCallback', 'SignalHandler', 'SignalAction',
    'dump_stack', 'libgcc_s.so',
]
# Anywhere in the frame's text (names and paths).
_IGNORED_PARTS = ['assert', 'libpthread', 'logger', '/gcc/', '/glibc-', '/googletest/', '/libc++', 'libc++/',
                  '/libc/', '/llvm-build/', '/sanitizer_common/', '/jemalloc/', '/tcmalloc/', 'allocator_shim',
                  '+Unknown', '<unknown module>', '/memorycmp.c', 'third_party/fuzztest/', 'centipede::',
                  'fuzztest::internal::']
_IGNORED_WHOLE = ['<unknown>', '[vdso]', 'panic']
# In a symbolized stack: frames of the C and C++ runtime libraries.
_IGNORED_LIBRARIES = re.compile(r'.*(?:libc\.so|libc\+\+\.so|libc\+\+_shared\.so|libstdc\+\+\.so|libc-.*\.so)')


def _ignored(frame):
  frame = frame.replace('\\', '/')
  if len(frame) < 3:
    return True
  if frame in _IGNORED_NAMES or frame in _IGNORED_WHOLE or frame.startswith('linux-gate.so'):
    return True
  if any(frame.startswith(prefix) for prefix in _IGNORED_PREFIXES):
    return True
  if any(part in frame for part in _IGNORED_PARTS):
    return True
  return bool(_IGNORED_LIBRARIES.match(frame))


def frame_text(line):
  """The frame's text ("FUNC FILE:LINE:COL", ...) and its file, or None."""
  match = _FRAME.match(line)
  if not match:
    return None
  text = match.group(3).strip()
  file_name = None
  located = _FUNC_AND_FILE.match(text)
  if located:
    file_name = located.group(2)
  if text.startswith('in '):
    text = text[len('in '):].strip()
  elif text.startswith('(') and text.endswith(')'):
    text = text[1:-1]
  if text.startswith('LLVMFuzzerTestOneInput') and file_name:
    # The entry point says nothing; its file says which target.
    text = text.replace('LLVMFuzzerTestOneInput', os.path.basename(file_name), 1)
  return text


def frame_name(text):
  """What the state keeps of a frame: its name up to the first '(' or '['."""
  for noise in ['non-virtual thunk to ', '(anonymous namespace)::', '`anonymous namespace\'::']:
    text = text.replace(noise, '')
  text = text.split('!')[-1]
  cut = re.match(r'(.*?)[\(\[].*', text)
  if cut and cut.group(1):
    return cut.group(1).strip()
  return text.strip().split(' ')[0]


def _normalize(state):
  state = ''.join(c for c in state if c in string.printable)
  state = re.sub(r'\+0x[0-9a-fA-F]+\n', '\n', state)
  state = re.sub(r'0x[a-fA-F0-9]{4,}[U]*', 'ADDRESS', state)
  state = re.sub(r'''(?<![:0-9.])(?:[0-9.]{4,}|(?<=\ )[0-9]{2,}|(?<=[@#])[0-9]+)(?![A-Za-z0-9.])''', 'NUMBER',
                 state)
  return ''.join(line[:LINE_LENGTH_CAP] + '\n' for line in state.splitlines())


def parse(log, fuzz_target=None):
  """(crash type, crash state) of a sanitizer log; ('', '') for none."""
  crash_type = ''
  address = None
  state = ''
  frames = 0
  stopped = False
  for line in log.splitlines():
    if any(part in line for part in _SKIPPED_LINE_PARTS) or _DEADLYSIGNAL.search(line):
      continue
    if _ABORT_LIKE.match(line) and crash_type in _KEEP_BEFORE_ABORT:
      continue
    assertion = _GLIBC_ASSERT.match(line)
    if assertion:
      # The assertion's text is the state's first line.
      crash_type, state, frames, stopped = 'ASSERT', assertion.group(1) + '\n', 1, False
      continue
    segv = _SANITIZER_SEGV.match(line)
    if segv:
      crash_type, address, state, frames, stopped = 'UNKNOWN', segv.group(1), '', 0, False
      continue
    segv_access = _SEGV_ACCESS.match(line)
    if segv_access and crash_type == 'UNKNOWN':
      if segv_access.group(1) != 'UNKNOWN':
        crash_type += ' ' + segv_access.group(1)
      continue
    access = _ACCESS.match(line)
    if access and crash_type and not crash_type.startswith('UNKNOWN'):
      size = access.group(2)
      crash_type += '\n%s %s' % (access.group(1).upper(), '{*}' if size.isdigit() and int(size) > 16 else size)
      continue
    error = _SANITIZER_ERROR.match(line)
    if error:
      crash_type = error.group(1).lower().replace('_', '-').capitalize().replace('Int-divide-by-zero',
                                                                                   'Divide-by-zero')
      state, frames, stopped = '', 0, False
      continue
    named = [name for regex, name in _LIBFUZZER_CRASHES if regex.match(line)]
    if named:
      crash_type, state, frames, stopped = named[0], '', 0, False
      continue
    if state and any(marker in line for marker in _STOP_MARKERS):
      stopped = True
      continue
    if not crash_type:
      continue
    text = frame_text(line)
    if text is None or _ignored(text):
      continue
    if not stopped and frames < MAX_FRAMES:
      state += frame_name(text) + '\n'
      frames += 1
  state = _normalize(state)
  if crash_type and not state.strip():
    state = fuzz_target or 'NULL'
  if fuzz_target and crash_type in ('Out-of-memory', 'Timeout'):
    state = fuzz_target
  if crash_type.startswith('UNKNOWN') and address and int(address, 16) < _NULL_PAGE:
    crash_type = crash_type.replace('UNKNOWN', 'Null-dereference')
  if state and state != 'NULL' and not state.endswith('\n'):
    state += '\n'
  return crash_type, state


def main(argv):
  if len(argv) not in (2, 3):
    print(__doc__.strip().splitlines()[-1], file=sys.stderr)
    return 2
  with open(argv[1], encoding='utf-8', errors='replace') as f:
    crash_type, state = parse(f.read(), argv[2] if len(argv) == 3 else None)
  print('TYPE :', repr(crash_type))
  print('STATE:', repr(state))
  return 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
