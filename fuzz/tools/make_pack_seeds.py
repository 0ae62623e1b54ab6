#!/usr/bin/env python3
"""Writes the pack_fuzzer seed corpus (fuzz/corpus/pack_fuzzer/).

Each seed is a pack script (fuzz/pack/pack_script.h, version 1; version 3 for
the kernel JIT's error paths) for one scenario of the prog pack lifecycle; the
random ones come from a fixed seed, so the corpus is the same on every run.
Usage: make_pack_seeds.py OUT_DIR
"""
import random
import sys
from pathlib import Path

LOAD, FREE, STEP, FINISH, STALE, TAIL_TARGET, SYNC, TAIL_CALL, RELOAD = range(9)
INTERRUPT, FAILING_RELOAD = 9, 10  # versions 2 and 3
EMPTY = 255


def header(cpus, seed, version=1):
    return bytes([version, cpus - 1]) + seed.to_bytes(8, "little")


def records(rng, n, probe_heavy=False):
    """n generator records; probe-heavy ones set up untrusted pointers and
    load through them (record kinds 140..145, then 128..139)."""
    out = bytearray()
    for i in range(n):
        rec = bytearray(rng.getrandbits(8) for _ in range(8))
        if probe_heavy:
            rec[0] = rng.randrange(140, 146) if i % 3 == 0 else rng.randrange(128, 140)
        out += rec
    return bytes(out)


def load(rng, n=20, subprograms=0, pad=0, probe_heavy=False):
    return bytes([LOAD, subprograms, pad, n]) + records(rng, n, probe_heavy)


def scenario(name, cpus, seed, *ops, version=1):
    return name, header(cpus, seed, version) + b"".join(ops)


def seeds():
    rng = random.Random(0x5eed)
    s = []
    # Load, run on two CPUs at once, free while one is inside: the free
    # waits for the grace period; then call the stale entry.
    s.append(scenario("free-during-call", 2, 1,
                      load(rng), load(rng),
                      bytes([STEP, 0, 4, 3, STEP, 1, 4, 5, FREE, 0, STEP, 0, 0, 7,
                             FINISH, 0, FINISH, 1, STALE, 0, SYNC])))
    # A prog_array entry replaced while a tail caller runs through it.
    s.append(scenario("tail-target-replaced", 2, 2,
                      load(rng), load(rng),
                      bytes([TAIL_TARGET, 0, 0, TAIL_CALL, 0, 0, 2, TAIL_TARGET, 0, 1,
                             TAIL_CALL, 1, 0, 40, FREE, 0, FINISH, 0, FINISH, 1, STALE, 1])))
    # Exception-table fixups: programs full of PROBE_MEM loads, at several
    # pack offsets (padded), in a reused slot, and oversize.
    s.append(scenario("probe-loads", 1, 3,
                      load(rng, 30, probe_heavy=True), load(rng, 30, pad=140, probe_heavy=True),
                      bytes([STEP, 0, 4, 255, FINISH, 0, STEP, 0, 5, 255, FINISH, 0, FREE, 0]),
                      load(rng, 30, probe_heavy=True),
                      bytes([STEP, 0, 5, 255, FINISH, 0])))
    s.append(scenario("probe-loads-oversize", 1, 4,
                      load(rng, 30, pad=254, probe_heavy=True),
                      bytes([STEP, 0, 4, 255, FINISH, 0, FREE, 0, STALE, 0])))
    # Subprograms: one allocation per image.
    s.append(scenario("subprograms", 3, 5,
                      load(rng, 40, subprograms=3), load(rng, 40, subprograms=2, probe_heavy=True),
                      bytes([STEP, 0, 4, 20, STEP, 1, 5, 20, STEP, 2, 4, 255, FREE, 1,
                             FINISH, 0, FINISH, 1, FINISH, 2, STALE, 2])))
    # Four CPUs interleaved instruction by instruction.
    ops = bytearray()
    for i in range(40):
        ops += bytes([STEP, i % 4, 4 + i % 3, rng.randrange(0, 8)])
    s.append(scenario("four-cpus", 4, 6, load(rng), load(rng), load(rng, probe_heavy=True), bytes(ops),
                      bytes([FREE, 1, SYNC, STALE, 3])))
    # Fragmentation: many loads and frees of mixed sizes, then reloads.
    ops = bytearray()
    for i in range(24):
        ops += load(rng, rng.randrange(1, 40), pad=rng.choice([0, 0, 130, 160, 200, 253]))
        if i % 3 == 2:
            ops += bytes([FREE, rng.getrandbits(8)])
    ops += bytes([RELOAD, 0, 0, RELOAD, 3, 150, SYNC, STALE, 0])
    s.append(scenario("fragmentation", 1, 7, bytes(ops)))
    # Random scripts over every operation.
    for n in range(12):
        ops = bytearray()
        for _ in range(40):
            op = rng.randrange(9)
            ops.append(op)
            if op == LOAD:
                ops += load(rng, rng.randrange(1, 30), rng.randrange(4),
                            rng.choice([0, 0, 0, 130, 170, 253]), rng.random() < 0.3)[1:]
            else:
                ops += bytes(rng.getrandbits(8) for _ in range(3))
        s.append(scenario(f"random-{n}", 1 + n % 4, 100 + n, bytes(ops)))
    # The kernel JIT's error paths (version 3): programs of several
    # subprograms, each reloaded with every failable service call of its
    # compile made to fail in turn (call 1 + fail; past the compile's calls
    # the reload loads, and runs), then run and freed. bpfdiff's model calls
    # no such service: there each is a plain reload.
    # (Of the second seed's four programs, those the kernel's verifier would
    # refuse are not loaded; its reloads pick among the others.)
    for n, (subprograms, programs) in enumerate(((3, 1), (1, 4))):
        ops = bytearray()
        for _ in range(programs):
            ops += load(rng, 40, subprograms=subprograms)
        for fail in range(32):
            ops += bytes([FAILING_RELOAD, fail % programs, fail, 0])
        ops += bytes([STEP, 0, 4, 255, FINISH, 0, FREE, 1, SYNC, STALE, 0])
        s.append(scenario(f"error-paths-{n}", 1, 200 + n, bytes(ops), version=3))
    return s


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, data in seeds():
        (out / f"{name}.pack").write_bytes(data)
    print(f"wrote {len(seeds())} seeds to {out}")


if __name__ == "__main__":
    main()
