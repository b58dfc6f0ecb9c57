#!/usr/bin/env python3
"""Mutation stress for a reader adapter (standard library only).

    stress.py CORPUS_DIR [COUNT] [--seed N] [--reader 'CMD {segment}'] [--keep DIR]

Takes every segment of the corpus, applies random damage (bit flips, byte
overwrites, truncations, insertions/deletions, header fields set to extreme
values), runs the reader on it (read and --index) as a subprocess with a time
limit, and checks that it ends cleanly: exit 0, or exit 1 with a well-formed
`error <kind> <offset>` last stderr line (offset inside the file), every stdout
line a JSON object, no traceback, no hang. Failing inputs are kept in --keep DIR
(default: a temporary directory) for replay.
"""

import json
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_READER = "%s %s {segment}" % (shlex.quote(sys.executable),
                                      shlex.quote(os.path.join(HERE, "floxlog_reader.py")))
KINDS = ("bad_magic unsupported_version unknown_flags encrypted reserved_nonzero truncated "
         "crc_mismatch unsupported_record_version frame_flags_nonzero unknown_record_type "
         "malformed_record bad_block_magic decompression_failed index_crc_mismatch "
         "bad_index").split()
ERROR_LINE = re.compile(r"^error (%s) (\d+)$" % "|".join(KINDS))
INDEX_LINE = re.compile(r"^(index ok|index_error (bad_index|index_crc_mismatch))$")
TIMEOUT = 20


def command(template, segment, index):
    out = []
    for w in shlex.split(template):
        if "{segment}" in w:
            if index:
                out.append("--index")
            out.append(w.replace("{segment}", segment))
        else:
            out.append(w)
    return out


def corpus_segments(root):
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            if f.endswith(".floxlog"):
                found.append(os.path.join(dirpath, f))
    return sorted(found)


def frame_offsets(data):
    """Offsets of frame/block headers found by walking from 64 (best effort)."""
    offs = []
    pos = 64
    compressed = len(data) > 6 and data[6] & 2
    while pos + 16 <= len(data) and len(offs) < 10000:
        offs.append(pos)
        if compressed:
            n = 16 + int.from_bytes(data[pos + 4:pos + 8], "little")
        else:
            n = 12 + int.from_bytes(data[pos:pos + 4], "little")
        pos += n
    return offs


EXTREMES = [b"\x00" * 4, b"\xff" * 4, b"\xf0\xff\xff\xff", b"\x00\x00\x00\x80",
            b"\x01\x00\x00\x00", b"\x28\x00\x00\x00", b"\x10\x00\x00\x00"]


def mutate(data, rng):
    b = bytearray(data)
    how = rng.randrange(9)
    if how == 0 and b:  # flip a few bits
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif how == 1 and b:  # overwrite a few bytes
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif how == 2:  # truncate
        b = b[:rng.randrange(len(b) + 1)]
    elif how == 3 and b:  # delete a range
        i = rng.randrange(len(b))
        del b[i:i + rng.randint(1, 64)]
    elif how == 4:  # insert bytes
        i = rng.randrange(len(b) + 1)
        b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 32)))
    elif how == 5 and len(b) >= 64:  # segment header field
        i = rng.choice([4, 6, 32, 40, 44, 48, 49, 63])
        v = rng.choice(EXTREMES)
        b[i:i + len(v)] = v
        del b[len(data):]
    elif how in (6, 7):  # a frame or block header field
        offs = frame_offsets(data)
        if offs:
            o = rng.choice(offs)
            i = o + rng.choice([0, 4, 8, 9, 10, 12, 14])
            v = rng.choice(EXTREMES + [bytes([rng.randrange(256)])])
            b[i:i + len(v)] = v
            del b[len(data):]
    else:  # damage somewhere in the tail (index trailer, last block)
        if b:
            lo = max(0, len(b) - 256)
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(lo, len(b))] = rng.randrange(256)
    return bytes(b)


def check(template, path, size, index, outcomes):
    try:
        p = subprocess.run(command(template, path, index), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return "timeout"
    out = p.stdout.decode("utf-8", "replace")
    err = p.stderr.decode("utf-8", "replace")
    if "Traceback" in err or "internal error" in err:
        return "crash: %s" % err.strip().splitlines()[-1:]
    err_lines = [l for l in err.splitlines() if l.strip()]
    if p.returncode == 1:
        if not err_lines:
            return "exit 1 without an error line"
        m = ERROR_LINE.match(err_lines[-1].strip())
        if not m:
            return "bad error line %r" % err_lines[-1]
        if int(m.group(2)) > size:
            return "error offset %s past the end (%d)" % (m.group(2), size)
        key = ("index " if index else "") + m.group(1)
        outcomes[key] = outcomes.get(key, 0) + 1
    elif p.returncode != 0:
        return "exit %d" % p.returncode
    elif err_lines:
        return "exit 0 with stderr %r" % err_lines[-1]
    lines = [l for l in out.splitlines() if l.strip()]
    if index:
        if p.returncode == 0 and (len(lines) != 1 or not INDEX_LINE.match(lines[0])):
            return "bad index output %r" % lines[:2]
        if p.returncode == 1 and lines:
            return "index check failed with stdout %r" % lines[:1]
        if p.returncode == 0:
            outcomes[lines[0]] = outcomes.get(lines[0], 0) + 1
        return None
    for l in lines:
        try:
            if not isinstance(json.loads(l), dict):
                return "stdout line is not a JSON object"
        except ValueError:
            return "stdout line is not JSON: %r" % l[:80]
    if p.returncode == 0:
        outcomes["clean"] = outcomes.get("clean", 0) + 1
    return None


def main(argv):
    template, seed, keep, args = DEFAULT_READER, 1, None, []
    i = 0
    while i < len(argv):
        if argv[i] in ("--reader", "--seed", "--keep") and i + 1 < len(argv):
            if argv[i] == "--reader":
                template = argv[i + 1]
            elif argv[i] == "--seed":
                seed = int(argv[i + 1])
            else:
                keep = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if not args or not os.path.isdir(args[0]):
        sys.stderr.write(__doc__)
        return 2
    count = int(args[1]) if len(args) > 1 else 1000
    segments = corpus_segments(args[0])
    if not segments:
        sys.stderr.write("no .floxlog files under %s\n" % args[0])
        return 2
    originals = {}
    for s in segments:
        with open(s, "rb") as f:
            originals[s] = f.read()
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="floxlog-stress-")
    keep = keep or work
    os.makedirs(keep, exist_ok=True)
    path = os.path.join(work, "mutant.floxlog")
    failures = 0
    outcomes = {}
    for n in range(count):
        src = rng.choice(segments)
        data = mutate(originals[src], rng)
        with open(path, "wb") as f:
            f.write(data)
        index = n % 4 == 3
        problem = check(template, path, len(data), index, outcomes)
        if problem:
            failures += 1
            saved = os.path.join(keep, "fail-%05d.floxlog" % n)
            with open(saved, "wb") as f:
                f.write(data)
            print("FAIL #%d (%s%s): %s -> %s" % (n, os.path.relpath(src, args[0]),
                                                 " --index" if index else "", problem, saved))
    os.remove(path)
    for k in sorted(outcomes):
        print("  %6d  %s" % (outcomes[k], k))
    print("%d mutations (%d read, %d --index), %d failures, seed %d"
          % (count, count - count // 4, count // 4, failures, seed))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
