"""A target's `<target>.options` file (OSS-Fuzz's form) as libFuzzer flags.

  [libfuzzer]
  max_len = 4096
  dict = diff_fuzzer.dict      <- relative to the options file

Only the [libfuzzer] section is read; a missing file gives no flags. The
one reader of these files for everything that runs a target (ci/soak/,
ci/nightly.sh, ci/planted_benchmark.sh, tests/fuzz/crash_states_check.py);
ci/oss-fuzz/check_out.py checks them as OSS-Fuzz would instead.

  python3 ci/libfuzzer_options.py FILE.options   prints the flags, one a line
"""

import os
import sys


def flags_from_options(path):
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    flags, section = [], None
    for line in lines:
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if section != "libfuzzer" or not sep or not key or not value:
            continue
        if key == "dict":
            value = os.path.join(os.path.dirname(os.path.abspath(path)), value)
        flags.append(f"-{key}={value}")
    return flags


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: libfuzzer_options.py FILE.options")
    for flag in flags_from_options(sys.argv[1]):
        print(flag)
