#!/usr/bin/env python3
"""Writes the trampoline_fuzzer seed corpus (fuzz/corpus/trampoline_fuzzer/).

Each seed is an input of fuzz/generator/trampoline_case.h: a flags byte
(argument count, ip, replace; its top three bits 111: struct_ops, 110: an
extension program, freplace, which follows the traced program), a
counts byte (fentry, fexit, fmod_ret; 0x40: the trampoline or extension
lies beyond a `bl`, attached through the PLT; 0x80: so does the first
trampoline of a replace), five arguments, then the programs. The
seeds cover every argument count, each kind of link alone and together, a
missed enter, the ip, the replace path, struct_ops trampolines, extensions,
far targets, a build whose allocation fails first (a byte after the
programs) and struct arguments (the byte after that); the
programs' bytes come from a fixed seed, so the corpus is the same on every run.
Usage: make_trampoline_seeds.py OUT_DIR
"""
import random
import sys
from pathlib import Path


def program(rng, ops):
    """Two register constants, `ops` operations of three bytes, r0's shape."""
    body = bytes([rng.getrandbits(8), rng.getrandbits(8), ops])
    for _ in range(ops):
        body += bytes(rng.getrandbits(8) for _ in range(3))
    return body + bytes([rng.getrandbits(8)])


def seed(rng, nr_args, ip, replace, fentry, fexit, fmod_ret, miss=False, struct_ops=False, freplace=False,
         far=False, first_far=False, fail_call=0, struct_args=None):
    flags = (nr_args - 1) | (0x08 if ip else 0) | (0x10 if replace else 0)
    flags |= 0xe0 if struct_ops else 0xc0 if freplace else 0
    counts = fentry | fexit << 2 | fmod_ret << 4 | (0x40 if far else 0) | (0x80 if first_far else 0)
    out = bytes([flags, counts])
    out += b"".join(rng.getrandbits(64).to_bytes(8, "little") for _ in range(5))
    out += program(rng, rng.randrange(4, 16))
    if freplace:
        out += program(rng, rng.randrange(4, 16))
    for i in range(fentry + fexit + fmod_ret):
        link = 0x80 | (7 if miss and i == 0 else 1)  # low bits 7: the enter reports a miss
        out += bytes([link]) + rng.getrandbits(64).to_bytes(8, "little")
        out += program(rng, rng.randrange(4, 16))
    out += rng.getrandbits(64).to_bytes(8, "little")
    # The byte after: a build whose fail_call-th failable call fails first.
    if fail_call or struct_args is not None:
        out += bytes([0x80 | (fail_call - 1)]) if fail_call else b"\x00"
    # The last byte: which arguments are structs passed by value (two
    # registers each).
    return out + (bytes([0x80 | struct_args]) if struct_args is not None else b"")


def main():
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(20261205)
    seeds = {}
    for nr_args in range(1, 9):
        seeds[f"fentry_args{nr_args}"] = seed(rng, nr_args, False, False, 1, 0, 0)
    seeds["fexit"] = seed(rng, 2, False, False, 0, 2, 0)
    seeds["fmod_ret"] = seed(rng, 3, False, False, 0, 0, 3)
    seeds["all_kinds"] = seed(rng, 4, True, False, 2, 2, 2)
    seeds["all_kinds_replace"] = seed(rng, 5, True, True, 1, 1, 1)
    seeds["missed_enter"] = seed(rng, 2, False, False, 2, 1, 1, miss=True)
    seeds["fentry_replace_ip"] = seed(rng, 8, True, True, 3, 0, 0)
    # Appended last, so that the seeds above keep their bytes.
    for nr_args in (1, 3, 8):
        seeds[f"struct_ops_args{nr_args}"] = seed(rng, nr_args, False, False, 1, 0, 0, struct_ops=True)
    for nr_args in (1, 5):
        seeds[f"freplace_args{nr_args}"] = seed(rng, nr_args, False, False, 0, 0, 0, freplace=True)
    seeds["far_all_kinds"] = seed(rng, 3, True, False, 1, 1, 1, far=True)
    seeds["far_freplace"] = seed(rng, 2, False, False, 0, 0, 0, freplace=True, far=True)
    seeds["far_replace_far"] = seed(rng, 2, False, True, 1, 1, 0, far=True, first_far=True)
    seeds["near_replace_far"] = seed(rng, 4, False, True, 0, 1, 1, first_far=True)
    # The build's failable calls, each made to fail: the trampoline's slot,
    # the arch code's RW image, its table of fmod_ret branches.
    for fail_call in (1, 2, 3):
        seeds[f"failing_allocation{fail_call}"] = seed(rng, 2, False, False, 1, 0, 1, fail_call=fail_call)
    # Struct arguments: within the 8 registers (fentry and fexit, the
    # original called with every register restored), and beyond them, which
    # the kernel refuses.
    seeds["struct_args_fentry"] = seed(rng, 3, False, False, 1, 0, 0, struct_args=0b101)
    seeds["struct_args_fexit"] = seed(rng, 4, True, False, 1, 1, 1, struct_args=0b0010)
    seeds["struct_args_past_8_registers"] = seed(rng, 6, False, False, 1, 1, 0, struct_args=0b111)
    for name, data in seeds.items():
        (out_dir / f"{name}.bin").write_bytes(data)


if __name__ == "__main__":
    main()
