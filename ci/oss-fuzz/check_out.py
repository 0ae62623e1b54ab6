#!/usr/bin/env python3
"""Checks a built $OUT the way OSS-Fuzz's check_build does, target by target.

OSS-Fuzz (google/oss-fuzz @ 955c6866, infra/base-images/base-runner/):
test_all.py finds the targets (executable ELF files holding
LLVMFuzzerTestOneInput, not llvm-symbolizer) and runs bad_build_check on
each, which runs the target in base-runner (check_startup_crash), rejects
it when it finds no instrumentation (check_engine) and checks its
architecture. run_fuzzer adds the [libfuzzer] section of <target>.options
(parse_options.py: configparser) and the dictionary. Here, for every
target:

  arch     an x86-64 ELF executable (check_architecture);
  NEEDED   `readelf -d` names only libraries base-runner provides (below);
           a missing one is what makes check_startup_crash fail there;
  options  <target>.options parses as OSS-Fuzz parses it, and names only
           flags this libFuzzer knows (`-help=1`);
  dict     the dictionary (options' `dict =`, else <target>.dict) is read
           by libFuzzer itself, every entry of it;
  seeds    every input of <target>_seed_corpus.zip runs, under `env -i`;
  fuzz     1000 generated inputs run (-seed=1337 -runs=1000), under
           `env -i`, and libFuzzer sees instrumentation (check_engine).

`env -i` leaves no LD_LIBRARY_PATH and nothing else of this shell: only
base-runner's sanitizer options and PATH=$OUT (for llvm-symbolizer, as
base-runner's PATH holds /out) are set. Exits 1 when a check fails.
"""
import argparse
import concurrent.futures
import configparser
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile

# What base-runner provides at run time. Its image is base-image (Ubuntu,
# glibc) plus binutils, file, git, rsync, unzip, jq, zip and language
# runtimes (google/oss-fuzz @ 955c6866: infra/base-images/base-image/
# Dockerfile, base-runner/Dockerfile, base-runner/install_deps.sh), so a
# target may need glibc's libraries and libgcc_s, which C++ exception
# unwinding uses (OSS-Fuzz's libc++ is static and built without LLVM's
# unwinder: base-clang/checkout_build_install_llvm.sh). A real OSS-Fuzz
# target needs exactly these (google/oss-fuzz PR #7942); libc++.so.1
# (PR #2697) or any distribution library (issue #8304) fails. Ubuntu's
# libstdc++ happens to be in the image, but ClusterFuzz's bots run another
# one (issue #5558): not allowed.
BASE_RUNNER_LIBRARIES = re.compile(
    r"^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|"
    r"libresolv\.so\.2|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2)$")

# base-runner's sanitizer options (infra/base-images/base-runner/Dockerfile),
# which match ClusterFuzz's: a run here behaves as a run there.
BASE_RUNNER_ENV = {
    "ASAN_OPTIONS": ":".join([
        "alloc_dealloc_mismatch=0", "allocator_may_return_null=1",
        "allocator_release_to_os_interval_ms=500", "check_malloc_usable_size=0",
        "detect_container_overflow=1", "detect_odr_violation=0", "detect_leaks=1",
        "detect_stack_use_after_return=1", "fast_unwind_on_fatal=0", "handle_abort=1",
        "handle_segv=1", "handle_sigill=1", "max_uar_stack_size_log=16",
        "print_scariness=1", "quarantine_size_mb=10", "strict_memcmp=1",
        "symbolize=1", "use_sigaltstack=1", "dedup_token_length=3"]),
    "UBSAN_OPTIONS": ("print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:"
                      "symbolize=1:dedup_token_length=3"),
}
# base-runner's FUZZER_ARGS.
FUZZER_ARGS = ["-rss_limit_mb=2560", "-timeout=25"]
# Sections ClusterFuzz reads from a .options file
# (google/clusterfuzz src/clusterfuzz/_internal/bot/fuzzers/options.py).
OPTIONS_SECTIONS = {"libfuzzer", "afl", "honggfuzz", "centipede", "asan", "msan", "ubsan",
                    "hwasan", "env"}
# bad_build_check's THRESHOLD_FOR_NUMBER_OF_EDGES: fewer is a warning there.
MIN_EDGES = 100
RUN_TIMEOUT_SECONDS = 600


class Target:
  """One fuzz target in $OUT and what the checks found."""

  def __init__(self, out, name):
    self.out, self.name, self.path = out, name, os.path.join(out, name)
    self.results = []  # (check, ok, text)
    self.libfuzzer_args = []
    self.dict_path = None

  def record(self, check, ok, text):
    self.results.append((check, ok, text))
    return ok

  @property
  def ok(self):
    return all(ok for _, ok, _ in self.results)


def find_targets(out):
  """test_all.py's find_fuzz_targets, for ELF files."""
  names = []
  for name in sorted(os.listdir(out)):
    path = os.path.join(out, name)
    if name == "llvm-symbolizer" or not os.path.isfile(path) or not os.access(path, os.X_OK):
      continue
    with open(path, "rb") as f:
      contents = f.read()
    if contents[:4] == b"\x7fELF" and b"LLVMFuzzerTestOneInput" in contents:
      names.append(name)
  return names


def check_architecture(target):
  with open(target.path, "rb") as f:
    header = f.read(20)
  machine = int.from_bytes(header[18:20], "little")
  return target.record("arch", header[4] == 2 and machine == 62,
                       "x86-64 ELF" if machine == 62 else f"e_machine {machine}, not x86-64")


def needed_libraries(path):
  listing = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True)
  return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", listing.stdout)


def needed_problems(libraries):
  """The NEEDED entries base-runner does not provide."""
  return [lib for lib in libraries if not BASE_RUNNER_LIBRARIES.match(lib)]


def check_needed(target):
  libraries = needed_libraries(target.path)
  missing = needed_problems(libraries)
  text = " ".join(libraries)
  if missing:
    text += f"  <- not in base-runner: {' '.join(missing)}"
  return target.record("NEEDED", not missing, text)


def libfuzzer_flags(target):
  """The flags `-help=1` lists for this target's libFuzzer."""
  run = subprocess.run(["env", "-i", target.path, "-help=1"], capture_output=True, text=True,
                       timeout=RUN_TIMEOUT_SECONDS, cwd=target.out)
  return set(re.findall(r"^ (\w+)\s", run.stdout + run.stderr, re.MULTILINE))


def parse_options(text, known_flags):
  """(libFuzzer args, problems) of an .options file, read as OSS-Fuzz reads it."""
  parser = configparser.ConfigParser()
  try:
    parser.read_string(text)
  except configparser.Error as error:
    return [], [f"does not parse: {error}".replace("\n", " ")]
  problems = [f"unknown section [{s}]" for s in parser.sections() if s not in OPTIONS_SECTIONS]
  args = []
  if parser.has_section("libfuzzer"):
    for key, value in parser["libfuzzer"].items():
      if key not in known_flags:
        problems.append(f"[libfuzzer] {key}: not a flag of this libFuzzer")
      args.append(f"-{key}={value}")
  return args, problems


def check_options(target, known_flags):
  path = target.path + ".options"
  dict_name = None
  if os.path.exists(path):
    with open(path, encoding="utf-8") as f:
      args, problems = parse_options(f.read(), known_flags)
    target.libfuzzer_args = [a for a in args if not a.startswith("-dict=")]
    dict_name = next((a[len("-dict="):] for a in args if a.startswith("-dict=")), None)
    target.record("options", not problems,
                  "; ".join(problems) if problems else " ".join(args) or "(no [libfuzzer] flags)")
  else:
    target.record("options", True, "(none)")
  # run_fuzzer's get_dictionary: the options' dict, else <target>.dict.
  if dict_name is None and os.path.exists(target.path + ".dict"):
    dict_name = target.name + ".dict"
  if dict_name is not None:
    target.dict_path = os.path.join(target.out, dict_name)
    if not os.path.exists(target.dict_path):
      target.record("dict", False, f"{dict_name}: not in $OUT")
      target.dict_path = None


def dictionary_entries(path):
  """Lines of a libFuzzer dictionary that are entries (not blank, not #)."""
  with open(path, encoding="latin-1") as f:
    return sum(1 for line in f if line.strip() and not line.lstrip().startswith("#"))


def run_env_i(target, args, workdir):
  """Runs the target under `env -i`; (exit status, output, seconds)."""
  command = ["env", "-i", f"PATH={target.out}"]
  command += [f"{key}={value}" for key, value in BASE_RUNNER_ENV.items()]
  command += [target.path] + FUZZER_ARGS + target.libfuzzer_args
  if target.dict_path:
    command.append(f"-dict={target.dict_path}")
  command += args
  start = time.monotonic()
  try:
    run = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_SECONDS, cwd=workdir)
    output, status = run.stdout.decode("utf-8", "replace"), run.returncode
  except subprocess.TimeoutExpired as expired:
    output = (expired.stdout or b"").decode("utf-8", "replace")
    status = f"killed after {RUN_TIMEOUT_SECONDS} s"
  return status, output, time.monotonic() - start


def failure_excerpt(output):
  """The lines of a failed run that say why."""
  lines = output.strip().splitlines()
  keep = [line for line in lines
          if re.search(r"ERROR|error|SUMMARY|runtime error|not found|No such", line)]
  return " | ".join(keep[:4] or lines[-1:])


def check_dictionary(target, workdir):
  """libFuzzer reads the dictionary at start-up: one run of no input shows
  how many entries it took."""
  if not target.dict_path:
    return
  rundir = os.path.join(workdir, "dict")  # apart from the seed run's profile
  os.mkdir(rundir)
  _, output, _ = run_env_i(target, ["-runs=0"], rundir)
  entries = dictionary_entries(target.dict_path)
  match = re.search(r"Dictionary: (\d+) entries", output)
  read = int(match.group(1)) if match else None
  name = os.path.basename(target.dict_path)
  if read is None:
    target.record("dict", False, f"{name}: libFuzzer did not read it: {failure_excerpt(output)}")
  else:
    target.record("dict", read == entries, f"{name}: libFuzzer read {read} of {entries} entries")


def check_seeds(target, workdir):
  archive = target.path + "_seed_corpus.zip"
  if not os.path.exists(archive):
    target.record("seeds", True, "(no seed corpus)")
    return
  seeds = os.path.join(workdir, "seeds")
  with zipfile.ZipFile(archive) as z:
    z.extractall(seeds)
  files = sorted(os.path.join(d, f) for d, _, fs in os.walk(seeds) for f in fs)
  status, output, seconds = run_env_i(target, files, workdir)
  executed = len(re.findall(r"^Executed .* in \d+ ms$", output, re.MULTILINE))
  ok = status == 0 and executed == len(files)
  text = f"env -i: {executed} of {len(files)} inputs ran, exit {status} ({seconds:.1f} s)"
  target.record("seeds", ok, text if ok else f"{text}: {failure_excerpt(output)}")


def check_fuzzing(target, workdir, runs):
  status, output, seconds = run_env_i(target, ["-seed=1337", f"-runs={runs}"], workdir)
  done = re.search(r"^Done (\d+) runs", output, re.MULTILINE)
  counters = re.search(r"INFO: Loaded \d+ modules?\s+\((\d+) (?:inline 8-bit counters|guards)",
                       output)
  edges = int(counters.group(1)) if counters else 0
  ok = status == 0 and done is not None and int(done.group(1)) == runs
  text = f"env -i: {done.group(0) if done else 'no Done line'}, exit {status} ({seconds:.1f} s)"
  # check_engine: without SanitizerCoverage libFuzzer fuzzes blind.
  text += f", {edges} edges"
  if "ERROR: no interesting inputs were found" in output or edges == 0:
    ok = False
    text += ": no coverage instrumentation"
  elif edges < MIN_EDGES:
    text += f" (warning: fewer than {MIN_EDGES}, as bad_build_check warns)"
  target.record("fuzz", ok, text if ok else f"{text}: {failure_excerpt(output)}")


def check_profile(target, workdir):
  """A SANITIZER=coverage target fuzzes nothing (no SanitizerCoverage: libFuzzer
  stops at once, finding no interesting input); what it must do is write the
  profile its seed run covered, for llvm-profdata."""
  profile = os.path.join(workdir, "default.profraw")
  size = os.path.getsize(profile) if os.path.exists(profile) else 0
  target.record("profile", size > 0, f"the seed run wrote default.profraw, {size} bytes"
                if size else "the seed run wrote no default.profraw")


def check_target(target, runs, sanitizer):
  check_architecture(target)
  check_needed(target)
  check_options(target, libfuzzer_flags(target))
  with tempfile.TemporaryDirectory(prefix=f"oss-fuzz-check-{target.name}.") as workdir:
    check_dictionary(target, workdir)
    check_seeds(target, workdir)
    if sanitizer == "coverage":
      check_profile(target, workdir)
    else:
      check_fuzzing(target, workdir, runs)


def declared_targets(source_dir, kernel=True):
  """Names declared with bpfdiff_fuzz_target( in the checkout's CMake files,
  and with bpfdiff_kernel_fuzz_target( (the targets of the kernel's JIT,
  which a build has when it found a Linux tree, as build.sh's does) unless
  `kernel` is false.

  A target is declared in the room of what it fuzzes (fuzz/targets/,
  report/fuzz/, cli/plugin/fuzz/), so every CMakeLists.txt and .cmake file
  is read, but those of build trees and tests/."""
  pattern = r"^\s*bpfdiff_(?:kernel_)?fuzz_target\(\s*(\w+)" if kernel else r"^\s*bpfdiff_fuzz_target\(\s*(\w+)"
  names = set()
  for top, dirs, files in os.walk(source_dir):
    dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("build", "tests")]
    for name in files:
      if name == "CMakeLists.txt" or name.endswith(".cmake"):
        with open(os.path.join(top, name), encoding="utf-8") as f:
          names.update(re.findall(pattern, f.read(), re.MULTILINE))
  return names


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--out", required=True)
  parser.add_argument("--sanitizer", default="address")
  parser.add_argument("--runs", type=int, default=1000)
  parser.add_argument("--only", help="check this one target")
  parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                      help="targets checked at once (default: one per CPU)")
  parser.add_argument("--source-dir",
                      help="the checkout: every target it declares (bpfdiff_fuzz_target) must be in $OUT")
  args = parser.parse_args()
  out = os.path.abspath(args.out)

  names = find_targets(out)
  if args.only and args.only not in names:
    print(f"FAIL: {args.only} is not a fuzz target in {out}")
    return 1
  failed = []
  if not args.only and args.source_dir:
    missing = sorted(declared_targets(args.source_dir) - set(names))
    if missing:
      print(f"FAIL: declared but not in $OUT: {' '.join(missing)}")
      failed += missing
  targets = [Target(out, name) for name in names if not args.only or name == args.only]
  # Targets in parallel, as test_all.py runs bad_build_check in a pool.
  with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
    list(pool.map(lambda t: check_target(t, args.runs, args.sanitizer), targets))
  for target in targets:
    print(target.name)
    for check, ok, text in target.results:
      print(f"  {check:8} {'ok  ' if ok else 'FAIL'} {text}")
    if not target.ok:
      failed.append(target.name)
  checked = 1 if args.only else len(names)
  print(f"oss-fuzz check ({args.sanitizer}): {checked} targets, "
        f"{len(failed)} failed{': ' + ' '.join(failed) if failed else ''}")
  return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
  sys.exit(main())
