"""`floxlog export` read back by DuckDB (Hive partitioning): counts and sums
per record type equal what `floxlog cat` prints for the same tape."""

import json
import os
import pathlib
import subprocess

import duckdb
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def floxlog_bin() -> str:
    """The CLI: $FLOXLOG_BIN, or the workspace's release or debug build."""
    env = os.environ.get("FLOXLOG_BIN")
    if env:
        return env
    for profile in ("release", "debug"):
        p = ROOT / "target" / profile / "floxlog"
        if p.exists():
            return str(p)
    raise AssertionError("no floxlog binary: build it (cargo build -p floxlog-cli) or set FLOXLOG_BIN")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([floxlog_bin(), *args], capture_output=True, text=True, check=True)


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> pathlib.Path:
    d = tmp_path_factory.mktemp("export") / "tape"
    run("demo", str(d), "--trades", "20000", "--book-deltas", "15000",
        "--compression", "lz4", "--max-segment-bytes", "256K")
    return d


def expected(tape: pathlib.Path) -> dict:
    """(count, sum of exchange_ts_ns, sum of price_raw, sum of qty_raw, levels) per type, from `cat`."""
    out = subprocess.run([floxlog_bin(), "cat", str(tape)], capture_output=True, check=True).stdout
    acc: dict = {}
    for line in out.splitlines():
        ev = json.loads(line)
        a = acc.setdefault(ev["type"], [0, 0, 0, 0, 0])
        a[0] += 1
        a[1] += ev["exchange_ts_ns"]
        a[2] += ev.get("price_raw", 0)
        a[3] += ev.get("qty_raw", 0)
        a[4] += len(ev.get("bids", [])) + len(ev.get("asks", []))
    return acc


@pytest.mark.parametrize("by_symbol", [False, True])
def test_duckdb_reads_the_export_with_hive_partitioning(tape, tmp_path, by_symbol):
    out = tmp_path / "ds"
    args = ["export", str(tape), "-o", str(out)] + (["--by-symbol"] if by_symbol else [])
    r = run(*args)
    assert "written" in r.stderr
    want = expected(tape)
    assert set(want) == {"trade", "book_snapshot", "book_delta"}
    glob = str(out / "**" / "*.parquet")
    rows = duckdb.sql(
        f"""
        select type, count(*), sum(exchange_ts_ns)::hugeint,
               sum(coalesce(price_raw, 0))::hugeint, sum(coalesce(qty_raw, 0))::hugeint,
               sum(coalesce(len(bids), 0) + coalesce(len(asks), 0))::bigint
        from read_parquet('{glob}', hive_partitioning = true, union_by_name = true)
        group by type order by type
        """
    ).fetchall()
    got = {t: [int(x) for x in rest] for t, *rest in rows}
    assert got == want
    # The decimal and timestamp columns are the raw ones, exactly.
    bad = duckdb.sql(
        f"""
        select count(*) from read_parquet('{out}/type=trade/**/*.parquet', hive_partitioning = true)
        where price <> price_raw::decimal(38, 8) / 100000000
           or epoch_ns(exchange_ts) <> exchange_ts_ns
           or date <> cast(exchange_ts as date)
        """
    ).fetchall()[0][0]
    assert bad == 0
    if by_symbol:
        names = {r[0] for r in duckdb.sql(
            f"select distinct symbol from read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"
        ).fetchall()}
        assert names == {"BTCUSDT", "ETHUSDT", "SOLUSDT"}
