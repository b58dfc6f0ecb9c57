#!/usr/bin/env python3
"""Code size of the writer and the reader in a nostd-check-cortex-m ELF.

usage: size-report.py [-v] ELF [WRITER_ROOT READER_ROOT]
  (-v lists every function; needs llvm-objdump and llvm-nm on PATH; the
  roots default to the Rust round trip's, ../c-firmware/ names its own)

Method: the round trip's two halves are separate, never-inlined functions
(nostd_check::write_segment and ::read_segment in ../src/lib.rs). The
disassembly gives every direct branch (bl, b.w tail calls, ...) from one
function into another; the code a half needs is the sum of the symbol sizes
of every function reachable from its root. Functions reached from both are
counted in both and listed as shared (memcpy, the CRC, ...). Calls through
function pointers are not followed; the codec makes none (the panic path
ends in this binary's own handler, which formats nothing).
"""
import re
import subprocess
import sys


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    verbose = "-v" in sys.argv[1:]
    args = [a for a in sys.argv[1:] if a != "-v"]
    elf = args[0]
    root_names = args[1:3] if len(args) == 3 else ["nostd_check::write_segment", "nostd_check::read_segment"]
    # Functions: address -> (size, name). Thumb addresses may carry bit 0.
    funcs = {}
    for line in run("llvm-nm", "--defined-only", "-S", "-C", elf).splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in "tT" and int(parts[1], 16) > 0:
            funcs[int(parts[0], 16) & ~1] = (int(parts[1], 16), parts[3])
    starts = sorted(funcs)

    def owner(addr):
        lo, hi = 0, len(starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if starts[mid] <= addr:
                lo = mid + 1
            else:
                hi = mid
        if lo and addr < starts[lo - 1] + funcs[starts[lo - 1]][0]:
            return starts[lo - 1]
        return None

    # Edges: any branch whose target lies in another function.
    branch = re.compile(r"^\s*([0-9a-f]+):\s+(c?bn?z|b[a-z.]*)\s+(?:r\d+, )?0x([0-9a-f]+)\b")
    calls = {a: set() for a in funcs}
    for line in run("llvm-objdump", "-d", "--no-show-raw-insn", elf).splitlines():
        m = branch.match(line)
        if not m:
            continue
        src, dst = owner(int(m.group(1), 16)), owner(int(m.group(3), 16))
        if src is not None and dst is not None and src != dst:
            calls[src].add(dst)

    def reach(prefix):
        roots = [a for a, (_, n) in funcs.items() if n.startswith(prefix)]
        if len(roots) != 1:
            sys.exit(f"size-report: expected one function named {prefix}*, found {len(roots)}")
        seen, todo = set(), roots
        while todo:
            a = todo.pop()
            if a not in seen:
                seen.add(a)
                todo.extend(calls[a])
        return seen

    writer = reach(root_names[0])
    reader = reach(root_names[1])
    size = lambda s: sum(funcs[a][0] for a in s)

    text = rodata = 0
    for line in run("llvm-objdump", "-h", elf).splitlines():
        parts = line.split()
        if len(parts) > 2 and parts[1] in (".text", ".rodata"):
            if parts[1] == ".text":
                text = int(parts[2], 16)
            else:
                rodata = int(parts[2], 16)

    print(f".text (whole binary: runtime, semihosting, printing): {text} B; .rodata: {rodata} B")
    print(f"writer: {size(writer)} B of code ({len(writer)} functions)")
    print(f"reader: {size(reader)} B of code ({len(reader)} functions)")
    print(f"writer + reader: {size(writer | reader)} B; shared by both: {size(writer & reader)} B")
    groups = [("shared", writer & reader)]
    if verbose:
        groups = [("writer", writer - reader), ("reader", reader - writer)] + groups
    for label, group in groups:
        for a in sorted(group, key=lambda a: -funcs[a][0]):
            print(f"  {label} {funcs[a][0]:6} {re.sub(r'::h[0-9a-f]{16}$', '', funcs[a][1])}")


if __name__ == "__main__":
    main()
