"""Issue 23, item 5: every message the module hands to Python (exceptions,
their hints, warnings, verify and inspect reports) names the Python API's
methods and keyword arguments, or none: never a CLI flag (``--word``) nor
a ``floxlog <command>`` hint. Item 6: ``created_ns`` is checked."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

import floxlog
from conftest import CORPUS, MAKERS

CLI = re.compile(
    r"--[a-z]|floxlog (recover|reindex|manifest|verify|cat|inspect|export|convert|encode|book|diff|demo)\b"
)


def texts_of(e: BaseException) -> list[str]:
    out = [str(e)]
    for attr in ("hint", "report"):
        v = getattr(e, attr, None)
        if v is not None:
            out.append(json.dumps(v) if not isinstance(v, str) else v)
    return out


def collect(fn: Callable[[], Any]) -> list[str]:
    """The texts of what `fn` raises and warns."""
    out: list[str] = []
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        try:
            r = fn()
            if isinstance(r, dict):
                out.append(json.dumps(r))
        except Exception as e:  # every failure's text is checked
            out.extend(texts_of(e))
    out.extend(str(w.message) for w in ws)
    return out


def assert_no_cli(texts: list[str]) -> None:
    for t in texts:
        m = CLI.search(t)
        assert m is None, f"names the CLI ({m.group(0)!r}): {t}"


def test_every_message_names_no_cli_flag_or_command(tmp: Path):
    seen: list[str] = []

    def run(fn: Callable[[], Any]) -> list[str]:
        got = collect(fn)
        assert_no_cli(got)
        seen.extend(got)
        return got

    run(lambda: floxlog.open(tmp / "nope"))
    # Every damaged corpus segment, read and verified.
    for case in sorted((CORPUS / "corrupt").iterdir()):
        for seg in case.glob("*.floxlog"):
            run(lambda: floxlog.open(seg).trades())
            run(lambda: floxlog.open(seg).trades(strict=True))
            run(lambda: floxlog.open(seg).verify(strict=True))
            run(lambda: floxlog.open(seg).info())
    # A tape with a bad manifest, then a wrong one and an unlisted file.
    out = tmp / "t"
    floxlog.write(out, MAKERS["trade"](3000), compression="none", max_segment_bytes=50_000)
    good = (out / "manifest.json").read_bytes()
    (out / "manifest.json").write_text("{")
    run(lambda: floxlog.open(out).trades())
    run(lambda: floxlog.open(out).verify())
    (out / "manifest.json").write_bytes(good)
    segs = sorted(out.glob("*.floxlog"))
    shutil.copy(segs[0], out / "99999999999999999.floxlog")
    with open(segs[1], "ab") as f:
        f.write(b"\x01\x02\x03")
    got = run(lambda: floxlog.open(out).verify(strict=True))
    assert any("manifest" in t for t in got), got
    run(lambda: floxlog.open(out).trades())
    run(lambda: floxlog.open(out).trades(order="file"))
    run(lambda: floxlog.open(out).info())
    # A segment whose frame type is unknown: the hint is the keyword.
    seg = tmp / "u.floxlog"
    floxlog.write(tmp / "u", MAKERS["trade"](10), compression="none", created_ns=1)
    (src,) = (tmp / "u").glob("*.floxlog")
    b = bytearray(src.read_bytes())
    b[64 + 2 * 60 + 8] = 200  # frame type byte (the CRC covers the payload)
    seg.write_bytes(bytes(b))
    got = run(lambda: floxlog.open(seg).verify(strict=True))
    assert any("skip_unknown=True" in t for t in got), got
    # created_ns the tape writer cannot use (item 6): a clear error.
    for bad in (-1, 2**63 - 1):
        got = run(
            lambda: floxlog.write(
                tmp / f"c{bad}", MAKERS["trade"](10), compression="none", created_ns=bad
            )
        )
        assert got and "created_ns" in got[0], got
        assert not list((tmp / f"c{bad}").glob("-*.floxlog"))
    assert len([t for t in seen if t]) >= 20
