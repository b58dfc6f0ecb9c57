"""The Python package against the `floxlog` tool: the same JSON from
inspect and verify, the same error text, the same events as `cat`.

The tool is ``$FLOXLOG_CLI``, else ``target/release/floxlog`` or
``target/debug/floxlog`` of the checkout (scripts/test-python.sh builds
it); missing, these tests fail."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from pathlib import Path

import pytest

import floxlog
from conftest import CASES, CORPUS, CORRUPT, MAKERS, REPO, events_of, normalise, tape_path


def _cli() -> Path:
    env = os.environ.get("FLOXLOG_CLI")
    if env:
        return Path(env)
    for sub in ["release", "debug"]:
        p = REPO / "target" / sub / "floxlog"
        if p.exists():
            return p
    raise RuntimeError("the floxlog tool is not built: cargo build --release -p floxlog-cli, or set FLOXLOG_CLI")


CLI = _cli()


def run(*args, check=True) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, check=check)


@pytest.mark.parametrize("case", CASES[:4] + CASES[-1:], ids=lambda p: p.name)
def test_info_equals_inspect_json(case: Path):
    out = run("inspect", "--json", tape_path(case))
    assert json.loads(out.stdout) == floxlog.open(tape_path(case)).info()


@pytest.mark.parametrize("case", CORRUPT, ids=lambda p: p.name)
def test_verify_equals_verify_json(case: Path):
    seg = case / "segment.floxlog"
    out = run("verify", "--json", seg, check=False)
    cli = json.loads(out.stdout)
    try:
        mine = floxlog.open(seg).verify()
        assert out.returncode == 0
    except floxlog.FloxlogError as e:
        assert out.returncode == 1
        mine = e.report
        first = next(f for f in cli["findings"] if f["severity"] == "error")
        assert (e.kind, e.offset) == (first["kind"], first.get("offset"))
    # Hints name each interface's remedies (the CLI's flags, Python's
    # keywords): the rest is the same report.
    def no_hints(r: dict) -> dict:
        return {**r, "findings": [{k: v for k, v in f.items() if k != "hint"} for f in r["findings"]]}

    assert no_hints(mine) == no_hints(cli)
    assert all(("hint" in a) == ("hint" in b) for a, b in zip(mine["findings"], cli["findings"]))


@pytest.mark.parametrize("case", CORRUPT, ids=lambda p: p.name)
def test_error_text_and_events_equal_cat(case: Path):
    """`floxlog cat` and a Python read: the same events, the same error
    line (`floxlog: error: <str(e)> (after N events ...)`, each hint in its
    interface's words), the same exit."""
    seg = case / "segment.floxlog"
    for rtype, types in [("trade", "trade"), ("book", "book")]:
        out = run("cat", "--file-order", "--type", types, seg, check=False)
        cat_events = [normalise(json.loads(line)) for line in out.stdout.splitlines()]
        errors = [line for line in out.stderr.splitlines() if line.startswith("floxlog: error: ")]
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                t = floxlog.open(seg).read(rtype, order="file")
            assert out.returncode == 0, out.stderr
            assert errors == []
            # Warnings: the text the CLI prints after `floxlog: warning: `.
            for x in w:
                assert x.category is floxlog.FloxlogWarning
                assert "floxlog: warning: " + str(x.message) in out.stderr
            assert len(w) == out.stderr.count("floxlog: warning: ")
        except floxlog.FloxlogError as e:
            assert out.returncode == 1
            t = e.partial
            # The CLI prints the error's text, then the events of that
            # segment; the hints name each interface's remedies (the CLI's
            # commands and flags, none of which Python has).
            head, _, hint = str(e).partition("\n  hint: ")
            assert out.stderr.startswith("floxlog: error: " + head + "\n  hint: "), out.stderr
            assert (hint != "") == (e.hint is not None)
            assert " (after " in out.stderr
        assert events_of(t, rtype) == cat_events


def test_cat_time_order_and_filters_match(tmp: Path):
    out = tmp / "t"
    floxlog.write(out, MAKERS["trade"](5000, seed=41), compression="lz4",
                  max_segment_bytes=100_000, metadata={1: "AAA"})
    tape = floxlog.open(out)
    t = tape.trades(symbols=["AAA"], start="2023-11-14T22:13:20.001Z")
    cat = run("cat", "--symbol", "AAA", "--from", "2023-11-14T22:13:20.001Z", out)
    want = [normalise(json.loads(line)) for line in cat.stdout.splitlines()]
    assert events_of(t, "trade") == want
    assert len(want) > 0


def test_written_tape_reads_in_the_cli_and_decodes_the_same(tmp: Path):
    case = CORPUS / "cases" / "extensions"
    tape = floxlog.open(tape_path(case))
    out = tmp / "w"
    floxlog.write(out, [(rt, tape.read(rt, order="file")) for rt in floxlog.RECORD_TYPES])
    assert run("verify", out).returncode == 0
    cat = run("cat", out)
    got = [normalise(json.loads(line)) for line in cat.stdout.splitlines()]
    assert len(got) == json.loads((case / "case.json").read_text())["event_count"]
