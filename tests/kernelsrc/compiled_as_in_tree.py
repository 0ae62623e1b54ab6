#!/usr/bin/env python3
"""The kernel's files were compiled as they are in the tree.

For each file of the kernel that the build compiles (bpf_jit_comp.c and
insn.c), the compile database must show:
  - the file compiled is the tree's own (its path is inside the tree, not a
    copy in bpfdiff or in the build);
  - no -D on its command line but the build type's -DNDEBUG (the
    configuration comes only from kernelsrc/prelude.h);
and, when the tree was extracted from Debian's tarball by
ci/kernel_source.sh, the file is byte for byte the tarball's.

A file given as <file>@<wrapper> is compiled whole through a wrapper of
bpfdiff's that includes it (lib/test_bpf.c: its tables are static, and
the wrapper reads them after it): the wrapper is in the compile database
with the tree as its last include directory (-idirafter) and no -D, and
it includes the file by its path in the tree, once.

usage: compiled_as_in_tree.py <compile_commands.json> <tree> <file>[@<wrapper>]...
"""
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def is_core_c_rename(relative, define):
    """A service kernel/bpf/core.c defines that the JIT still gets from
    bpfdiff (kernelsrc/CMakeLists.txt, SHIMS.md "core.c"): core.c's
    definition is compiled under the name core_c_<name>. Link plumbing,
    not configuration: the code compiled is the tree's."""
    if relative != "kernel/bpf/core.c" or "=" not in define:
        return False
    name, value = define[2:].split("=", 1)
    return value == f"core_c_{name}"


def wrapper_problem(wrapper, relative, tree, arguments):
    """Why `wrapper` does not compile the tree's `relative` whole, or None."""
    with open(wrapper) as f:
        includes = [line.strip() for line in f if line.startswith("#include")]
    if includes.count(f'#include <{relative}>') != 1:
        return f"{wrapper} does not include it once as <{relative}>"
    last = [arguments[i + 1] for i, a in enumerate(arguments[:-1]) if a == "-idirafter"]
    if not any(os.path.realpath(d) == tree for d in last):
        return f"{wrapper} is not compiled with the tree as its last include directory (-idirafter {tree})"
    return None


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    database, tree, files = sys.argv[1], os.path.realpath(sys.argv[2]), sys.argv[3:]
    # A wrapper is compiled once per tree the build holds (kernelsrc/
    # CMakeLists.txt): each file's every entry is kept.
    commands = {}
    with open(database) as f:
        for e in json.load(f):
            commands.setdefault(os.path.realpath(e["file"]), []).append(e)
    failures = []
    stamp = os.path.join(tree, ".bpfdiff-extracted")
    tarball = None
    if os.path.exists(stamp):
        with open(stamp) as f:
            tarball = f.read().split()[-1]
    # The tarball's top directory is its name without .tar.xz
    # (ci/kernel_source.sh): linux-source-6.12, linux-source-6.1.
    top = os.path.basename(tarball).removesuffix(".tar.xz") if tarball else None
    originals = {}
    if tarball:
        # One pass over the tarball for every file (it is 150 MB of xz).
        members = [f"{top}/{os.path.relpath(os.path.realpath(p.split('@')[0]), tree)}" for p in files]
        with tempfile.TemporaryDirectory() as scratch:
            subprocess.run(["tar", "-xJf", tarball, "-C", scratch, *members], check=True)
            for member in members:
                with open(os.path.join(scratch, member), "rb") as f:
                    originals[member] = f.read()
    for given in files:
        path, _, wrapper = given.partition("@")
        path = os.path.realpath(path)
        relative = os.path.relpath(path, tree)
        if relative.startswith(".."):
            failures.append(f"{path} is not inside the tree {tree}")
            continue
        entries = commands.get(os.path.realpath(wrapper) if wrapper else path, [])
        if not entries:
            failures.append(f"{relative}: not in the compile database: the build compiles some other file")
            continue
        # The wrapper's entry for this tree: the one that reads it last.
        entry = entries[0]
        for candidate in entries:
            args = candidate.get("arguments") or shlex.split(candidate["command"])
            if any(a == "-idirafter" and os.path.realpath(b) == tree for a, b in zip(args, args[1:])):
                entry = candidate
        arguments = entry.get("arguments") or shlex.split(entry["command"])
        if wrapper:
            problem = wrapper_problem(wrapper, relative, tree, arguments)
            if problem:
                failures.append(f"{relative}: {problem}")
                continue
        defines = [a for a in arguments if a.startswith("-D") and a != "-DNDEBUG" and not is_core_c_rename(relative, a)]
        if defines:
            failures.append(f"{relative}: compiled with {defines}: configuration belongs in kernelsrc/prelude.h")
        with open(path, "rb") as f:
            compiled = f.read()
        line = f"{relative}: {len(compiled)} bytes, sha256 {sha256(compiled)[:16]}"
        if tarball:
            member = f"{top}/{relative}"
            if originals[member] != compiled:
                failures.append(f"{relative}: differs from {member} in {tarball}")
                continue
            line += f", identical to {member} in {tarball}"
        print(line)
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
