#!/usr/bin/env python3
"""The instruction mix of a kernel's main loop, from `cuobjdump -sass` of a CUBIN.

    scripts/sass_loop_mix.py KERNEL.cubin [ENTRY ...]

The main loop is the backward branch whose body holds the most FFMA. Its loads come in two
copies (full k-tiles and the checked last one) as the arms of if/else diamonds: a full tile runs
the shorter arm, so "per tile" counts the loop less the longer arm of each diamond. Needs
cuobjdump on PATH (the CUDA toolkit, or pip's nvidia-cuda-cuobjdump).
"""
import collections
import re
import subprocess
import sys

LINE = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P[0-9T]\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
# `@!PT LDS RZ, [RZ]` never executes: ptxas pads after LDGSTS with it. It counts as "other".
NEVER = "@!PT"
# Classes reported, in order; an opcode counts in the first class whose prefix it starts with.
CLASSES = [("FFMA", ("FFMA",)), ("LDS", ("LDS",)), ("STS", ("STS",)), ("LDGSTS", ("LDGSTS",)),
           ("LDG", ("LDG.", "LDG ")), ("LDL/STL", ("LDL", "STL")), ("BAR", ("BAR",)),
           ("BRA", ("BRA",))]
MEMORY = ("LDS", "STS", "LDG.")


def functions(sass):
    current, body = None, []
    for line in sass.splitlines():
        header = re.search(r"Function : (\S+)", line)
        if header:
            if current:
                yield current, body
            current, body = header.group(1), []
            continue
        match = LINE.search(line)
        if match and current:
            address, predicate, opcode, operands = match.groups()
            target = re.match(r"\s*(0x[0-9a-f]+)", operands) if opcode == "BRA" else None
            if predicate and predicate.strip() == NEVER:
                opcode = "NOP(" + opcode + ")"
            body.append((int(address, 16), bool(predicate), opcode,
                         int(target.group(1), 16) if target else None))
    if current:
        yield current, body


def main_loop(body):
    loops = [(target, address) for address, _, opcode, target in body
             if opcode == "BRA" and target is not None and target <= address]
    def ffma(loop):
        return sum(1 for address, _, opcode, _ in body
                   if loop[0] <= address <= loop[1] and opcode.startswith("FFMA"))
    return max(loops, key=ffma) if loops else None


def per_tile(body, start, end):
    """The loop's instructions less the longer arm of each if/else diamond."""
    index = {address: i for i, (address, *_rest) in enumerate(body)}
    dropped = set()
    for address, predicated, opcode, target in body:
        if not (start <= address < end and opcode == "BRA" and predicated and target and
                address < target <= end and address not in dropped):
            continue
        before_target = body[index[target] - 1]
        if before_target[2] != "BRA" or before_target[1] or not before_target[3] or \
                before_target[3] <= target:
            continue
        first = [a for a, *_ in body if address < a <= before_target[0]]
        second = [a for a, *_ in body if target <= a < before_target[3]]
        dropped.update(first if len(first) > len(second) else second)
    return [row for row in body if start <= row[0] <= end and row[0] not in dropped]


def mix(rows):
    """(counts per class, counts per exact opcode of the memory classes)"""
    classes, opcodes = collections.Counter(), collections.Counter()
    for _, _, opcode, _ in rows:
        name = next((name for name, prefixes in CLASSES if (opcode + " ").startswith(prefixes)),
                    "other")
        classes[name] += 1
        if opcode.startswith(MEMORY):
            opcodes[opcode] += 1
    return classes, opcodes


def describe(counted, total):
    classes, opcodes = counted
    parts = [f"{total} instructions",
             f"FFMA {classes['FFMA']} ({100.0 * classes['FFMA'] / total:.1f} %)"]
    parts += [f"{name} {classes[name]}" for name, _ in CLASSES[1:] if classes[name]]
    parts.append(f"other {classes['other']}")
    detail = " ".join(f"{opcode} {count}" for opcode, count in sorted(opcodes.items()))
    return ", ".join(parts) + (f"  [{detail}]" if detail else "")


def run(cubin, entries):
    sass = subprocess.run(["cuobjdump", "-sass", cubin], check=True, capture_output=True,
                          text=True).stdout
    for name, body in functions(sass):
        if entries and name not in entries:
            continue
        loop = main_loop(body)
        if not loop:
            print(f"{name}: no loop")
            continue
        whole = [row for row in body if loop[0] <= row[0] <= loop[1]]
        tile = per_tile(body, *loop)
        local = sum(1 for row in body if row[2].startswith(("LDL", "STL")))
        print(f"{name}: main loop {loop[0]:#x}..{loop[1]:#x}, LDL/STL in the whole kernel: {local}")
        print(f"  per full tile: {describe(mix(tile), len(tile))}")
        print(f"  loop (both load copies): {describe(mix(whole), len(whole))}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    run(sys.argv[1], sys.argv[2:])
