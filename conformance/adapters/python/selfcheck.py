#!/usr/bin/env python3
"""Run a reader adapter over a conformance corpus the way the kit does.

    selfcheck.py CORPUS_DIR [--reader 'CMD ... {segment} ...']

The default reader is floxlog_reader.py next to this file. For every case of
cases/ and real/: read each segment (file-name order), concatenate the events,
compare with expected.jsonl field by field; then `--index` per segment, which
must print `index ok`. For every corrupt/ case: the events, exit status and last
stderr line must match case.json's `expect`; the index check must print
`index_error KIND` when `expect` names one, else `index ok` (a segment whose
header is itself invalid must give `index_error` with the header's kind, as
the read). Prints `ok`/`FAIL` per check and `N passed, M failed`; exit 1 on
any failure. Standard library only.
"""

import json
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_READER = "%s %s {segment}" % (shlex.quote(sys.executable),
                                      shlex.quote(os.path.join(HERE, "floxlog_reader.py")))
TIMEOUT = 120


def command(template, segment, index):
    words = shlex.split(template)
    out = []
    for w in words:
        if "{segment}" in w:
            if index:
                out.append("--index")
            out.append(w.replace("{segment}", segment))
        else:
            out.append(w)
    return out


def run(template, segment, index=False):
    p = subprocess.run(command(template, segment, index), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def events_of(stdout):
    # json keeps integers exact (Python ints), so 64-bit values compare exactly
    events = [json.loads(l) for l in stdout.splitlines() if l.strip()]
    for e in events:
        if not isinstance(e, dict):
            raise ValueError("not a JSON object: %r" % (e,))
    return events


def last_line(text):
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


def first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            if not isinstance(g, dict) or not isinstance(w, dict):
                return "event %d: got %r want %r" % (i, g, w)
            keys = sorted(set(g) | set(w))
            diff = [k for k in keys if g.get(k) != w.get(k)]
            return "event %d differs in %s: got %s want %s" % (
                i, diff, {k: g.get(k) for k in diff}, {k: w.get(k) for k in diff})
    return "got %d events, want %d" % (len(got), len(want))


class Tally(object):
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def report(self, name, problem):
        if problem:
            self.failed += 1
            print("FAIL %s: %s" % (name, problem))
        else:
            self.passed += 1
            print("ok   %s" % name)


def segments_of(case_dir):
    seg_dir = os.path.join(case_dir, "segments")
    return [os.path.join(seg_dir, f) for f in sorted(os.listdir(seg_dir))
            if f.endswith(".floxlog")]


def check_good(tally, template, group, case_dir):
    name = os.path.basename(case_dir)
    with open(os.path.join(case_dir, "expected.jsonl")) as f:
        want = [json.loads(l) for l in f if l.strip()]
    got = []
    problem = None
    segments = segments_of(case_dir)
    for seg in segments:
        try:
            rc, out, err = run(template, seg)
        except subprocess.TimeoutExpired:
            problem = "%s: timeout" % os.path.basename(seg)
            break
        if rc != 0:
            problem = "%s: exit %d, %s" % (os.path.basename(seg), rc, last_line(err))
            break
        try:
            got.extend(events_of(out))
        except ValueError as e:
            problem = "%s: bad JSON line: %s" % (os.path.basename(seg), e)
            break
    if problem is None and got != want:
        problem = first_difference(got, want)
    tally.report("read/%s/%s" % (group, name), problem)

    for seg in segments:
        label = "index/%s/%s" % (group, name)
        if len(segments) > 1:
            label += "/" + os.path.basename(seg)
        try:
            rc, out, err = run(template, seg, index=True)
        except subprocess.TimeoutExpired:
            tally.report(label, "timeout")
            continue
        line = last_line(out)
        tally.report(label, None if rc == 0 and line == "index ok"
                     else "exit %d, stdout %r, stderr %r" % (rc, line, last_line(err)))


def check_corrupt(tally, template, case_dir):
    name = os.path.basename(case_dir)
    with open(os.path.join(case_dir, "case.json")) as f:
        expect = json.load(f)["expect"]
    seg = os.path.join(case_dir, "segment.floxlog")
    n = expect["events"]
    problem = None
    try:
        rc, out, err = run(template, seg)
        got = events_of(out)
    except subprocess.TimeoutExpired:
        rc, got, err, problem = None, [], "", "timeout"
    except ValueError as e:
        got, problem = [], "bad JSON line: %s" % e
    error_line = None
    if problem is None:
        if len(got) != n:
            problem = "got %d events, want %d" % (len(got), n)
        elif "error" in expect:
            error_line = "error %s %d" % (expect["error"], expect["error_offset"])
            if rc == 0:
                problem = "exit 0, want %r" % error_line
            elif last_line(err) != error_line:
                problem = "exit %d, last stderr line %r, want %r" % (rc, last_line(err), error_line)
        elif rc != 0:
            problem = "exit %d: %s" % (rc, last_line(err))
    tally.report("read/corrupt/%s" % name, problem)

    label = "index/corrupt/%s" % name
    try:
        rc, out, err = run(template, seg, index=True)
    except subprocess.TimeoutExpired:
        tally.report(label, "timeout")
        return
    line = last_line(out)
    if "index_error" in expect:
        want = "index_error %s" % expect["index_error"]
        ok = rc == 0 and line == want
    elif error_line is not None and expect.get("error_offset") == 0:
        # The segment header itself is invalid: no index can be found.
        want = "index_error %s" % expect["error"]
        ok = rc == 0 and line == want
    else:
        want = "index ok"
        ok = rc == 0 and line == want
    tally.report(label, None if ok else "exit %d, got %r, want %r" % (rc, line, want))


def main(argv):
    template = DEFAULT_READER
    args = []
    i = 0
    while i < len(argv):
        if argv[i] == "--reader" and i + 1 < len(argv):
            template = argv[i + 1]
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.stderr.write("usage: selfcheck.py CORPUS_DIR [--reader 'CMD {segment}']\n")
        return 2
    root = os.path.abspath(args[0])
    tally = Tally()
    for group in ("cases", "real"):
        d = os.path.join(root, group)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if os.path.isdir(os.path.join(d, name)):
                    check_good(tally, template, group, os.path.join(d, name))
    d = os.path.join(root, "corrupt")
    if os.path.isdir(d):
        for name in sorted(os.listdir(d)):
            if os.path.isdir(os.path.join(d, name)):
                check_corrupt(tally, template, os.path.join(d, name))
    print("%d passed, %d failed" % (tally.passed, tally.failed))
    return 1 if tally.failed or not tally.passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
