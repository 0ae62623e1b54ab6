"""A target's `<target>.options` file (OSS-Fuzz's form) as libFuzzer flags.

  [libfuzzer]
  max_len = 4096
  dict = diff_fuzzer.dict      <- relative to the options file

Only the [libfuzzer] section is read; a missing file gives no flags.
"""

import os


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
