"""The floxlog Spark data source in local[2]: one partition per fragment,
rows equal to what `floxlog cat --file-order` prints, types Spark reads
(microsecond timestamps, exact unsigned values), filters pushed down with
the same result, damage failing the job with the floxlog error; the
examples of docs/distributed-engines.md (Dask, Spark and Ray) as written."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import floxlog
from engines import SMALL, cat_rows, damaged_tape, ray_local, write_tape

import pyspark  # noqa: F401  (pinned in requirements-test.txt: a missing install fails)


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    # Spark's Python workers: this interpreter, which has floxlog.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    s = (
        SparkSession.builder.master("local[2]")
        .appName("floxlog-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    import floxlog.spark

    floxlog.spark.register(s)
    yield s
    s.stop()


@pytest.fixture(scope="module")
def ray_cluster():
    """Ray for the docs' examples only (started when that test runs)."""
    yield from ray_local()


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> Path:
    return write_tape(tmp_path_factory.mktemp("spark") / "t")


def _rows(df) -> "Counter":
    from collections import Counter

    from conftest import FIELDS

    return Counter(tuple(int(r[f]) for f in FIELDS["trade"]) for r in df.collect())


def _load(spark, path, **options):
    r = spark.read.format("floxlog")
    for k, v in options.items():
        r = r.option(k, str(v))
    return r.load(str(path))


def test_rows_equal_cat(spark, tape: Path):
    df = _load(spark, tape, type="trade", fragment_bytes=SMALL)
    frags = floxlog.dataset(tape, "trade", fragment_bytes=SMALL).fragments()
    assert df.rdd.getNumPartitions() == len(frags) > 4
    assert _rows(df) == cat_rows(tape)
    types = dict(df.dtypes)
    assert types["exchange_ts"] == "timestamp"
    assert types["trade_id"] == "decimal(20,0)" and types["side"] == "smallint"
    assert types["price"] == "decimal(38,8)" and types["symbol"] == "string"
    first = df.orderBy("exchange_ts_ns").first()
    assert first["exchange_ts"].timestamp() * 1_000_000 == pytest.approx(first["exchange_ts_ns"] // 1000, abs=1)


def test_filters_pushed_give_the_same_rows(spark, tape: Path):
    from pyspark.sql import functions as F

    df = _load(spark, tape, fragment_bytes=SMALL)
    ts = sorted(floxlog.open(tape).trades()["exchange_ts_ns"].to_pylist())
    lo, hi = ts[len(ts) // 3], ts[2 * len(ts) // 3]
    got = df.where((F.col("exchange_ts_ns") >= lo) & (F.col("exchange_ts_ns") < hi) & F.col("symbol_id").isin(1, 2))
    want = floxlog.dataset(tape, "trade", start=lo, end=hi, symbols=[1, 2]).to_table()
    assert got.count() == want.num_rows
    assert sorted(r["trade_id"] for r in got.select("trade_id").collect()) == sorted(want["trade_id"].to_pylist())


def test_books(spark, tape: Path):
    df = _load(spark, tape, type="book", prices="float", fragment_bytes=SMALL)
    want = floxlog.open(tape).books(order="file", prices="float")
    rows = df.collect()
    assert sorted((r["seq"], [(l["price_raw"], l["qty_raw"]) for l in r["bids"]]) for r in rows) == sorted(
        (s, [(l["price_raw"], l["qty_raw"]) for l in b]) for s, b in zip(want["seq"].to_pylist(), want["bids"].to_pylist())
    )


def test_damage_fails_the_job(spark, tmp: Path):
    tape, _ = damaged_tape(tmp / "t", n=3000)
    with pytest.raises(floxlog.FloxlogError) as e:
        floxlog.open(tape).trades(order="file")
    with pytest.raises(Exception) as e2:
        _load(spark, tape, fragment_bytes=SMALL).collect()
    assert str(e.value).splitlines()[0] in str(e2.value)


def test_pushed_filters_narrow_the_read(tape: Path):
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, LessThanOrEqual

    import floxlog.spark

    ds = floxlog.dataset(tape, "trade", start=100)
    f = [GreaterThan(("exchange_ts_ns",), 1000), LessThanOrEqual(("exchange_ts_ns",), 5000),
         In(("symbol_id",), (1, 2, 3)), EqualTo(("symbol_id",), 2), EqualTo(("symbol",), "AAA")]
    s = floxlog.spark._pushed(ds, f).settings
    assert (s.start, s.end, s.symbols) == (1001, 5001, ("2",))
    # Names are not pushed (each tape resolves its own); an explicit
    # symbols option is kept as it is.
    ds = floxlog.dataset(tape, "trade", symbols=["AAA"])
    assert floxlog.spark._pushed(ds, f[2:]).settings == ds.settings


def test_reads_a_microsecond_export(spark, tape: Path, tmp: Path):
    """A `--timestamps us` Parquet export read by Spark: the same counts
    and sums of the raw columns as `floxlog cat`."""
    from test_cli import run

    out = tmp / "ds"
    run("export", tape, "-o", out, "--timestamps", "us")
    df = spark.read.parquet(str(out / "type=trade"))
    assert dict(df.dtypes)["exchange_ts"] == "timestamp"
    want = cat_rows(tape)
    from pyspark.sql import functions as F

    def total(c: str):
        # Exact: the sums of int64 columns overflow a long.
        return F.sum(F.col(c).cast("decimal(38,0)"))

    got = df.agg(F.count("*"), total("price_raw"), total("qty_raw"), total("exchange_ts_ns")).first()
    assert got[0] == sum(want.values())
    assert int(got[1]) == sum(r[2] * n for r, n in want.items())
    assert int(got[2]) == sum(r[3] * n for r, n in want.items())
    assert int(got[3]) == sum(r[0] * n for r, n in want.items())


def _docs_block(page: Path, marker: str, tapes: Path) -> str:
    """The one Python block of `page` holding `marker`, its relative
    `tapes/` paths made absolute: Spark's Python workers resolve paths from
    the directory the session started in, not this test's."""
    import re

    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"{page}: one Python block with {marker}"
    assert '"tapes/' in found[0]
    return found[0].replace('"tapes/', f'"{tapes}/')


def test_the_docs_dataset_examples_run_as_written(spark, ray_cluster, tmp_path, monkeypatch):
    """docs/distributed-engines.md's two Dask, Spark and Ray examples, as
    written, over a demo tape under tapes/2024-04-26 (Ray initialised, as
    the page says)."""
    import subprocess

    from test_export_duckdb import floxlog_bin

    page = Path(__file__).resolve().parents[2] / "docs" / "distributed-engines.md"
    monkeypatch.chdir(tmp_path)
    subprocess.run([floxlog_bin(), "demo", "tapes/2024-04-26", "--trades", "4000",
                    "--book-deltas", "200"], check=True, capture_output=True)
    tape = floxlog.open("tapes/2024-04-26")

    scope = {"floxlog": floxlog, "spark": spark}
    block = _docs_block(page, 'floxlog.dataset("tapes/2024-04-*", "trade", start=', tmp_path / "tapes")
    exec(compile(block, "docs/distributed-engines.md", "exec"), scope)
    want = tape.trades(start="2024-04-26").num_rows
    assert want > 0
    assert len(scope["df"]) == want
    assert scope["rds"].count() == want
    assert scope["sdf"].count() == 4000

    scope = {"floxlog": floxlog, "spark": spark}
    block = _docs_block(page, 'floxlog.dataset("tapes/2024-04-*", "trade", symbols=', tmp_path / "tapes")
    exec(compile(block, "docs/distributed-engines.md", "exec"), scope)
    btc = tape.trades(symbols=["BTCUSDT"])
    assert btc.num_rows > 0
    assert scope["ds"].to_table().num_rows == btc.num_rows
    assert scope["rds"].count() == btc.num_rows
    assert scope["totals"] == [{"symbol": "BTCUSDT", "sum(qty_raw)": sum(btc["qty_raw"].to_pylist())}]
    assert scope["sdf"].count() == tape.trades(start="2024-04-26T09:30:00Z").num_rows


def test_a_url_loads_as_its_local_copy(spark, tape: Path, s3_server):
    """load("s3://...") with storage_options as a JSON option: the rows of
    the local copy."""
    import json

    u = s3_server.upload(tape, "spark/t")
    df = _load(spark, u, type="trade", fragment_bytes=SMALL, storage_options=json.dumps(s3_server.options))
    assert df.rdd.getNumPartitions() > 4
    assert _rows(df) == cat_rows(tape)
    with pytest.raises(Exception, match="storage_options must be a JSON object"):
        _load(spark, u, type="trade", storage_options="{not json").count()


def test_the_docs_s3_example_runs_as_written(spark, ray_cluster, s3_server, tmp_path):
    """docs/distributed-engines.md's object-storage block, as written, with
    the test server's keys and endpoint in KEY, SECRET, ENDPOINT: every
    engine returns what the local copy holds."""
    import json
    import re
    import subprocess

    from test_export_duckdb import floxlog_bin

    page = Path(__file__).resolve().parents[2] / "docs" / "distributed-engines.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S)
    found = [b for b in blocks if '"s3://market-data/' in b]
    assert len(found) == 1, "one Python block reading s3://market-data/"
    demo = tmp_path / "2024-04-26"
    subprocess.run([floxlog_bin(), "demo", str(demo), "--trades", "4000", "--book-deltas", "200"],
                   check=True, capture_output=True)
    s3_server.bucket("market-data")
    for p in sorted(demo.iterdir()):
        s3_server.client.upload_file(str(p), "market-data", f"2024-04-26/{p.name}")
    scope = {"floxlog": floxlog, "spark": spark, "json": json, "KEY": "testing", "SECRET": "testing",
             "ENDPOINT": s3_server.endpoint}
    exec(compile(found[0], "docs/distributed-engines.md", "exec"), scope)
    want = floxlog.open(demo).trades(order="file")
    assert want.num_rows == 4000
    assert scope["tape"].trades(order="file").equals(want)
    assert len(scope["df"]) == scope["rds"].count() == scope["sdf"].count() == 4000
    assert scope["df"]["qty_raw"].sum().compute() == sum(want["qty_raw"].to_pylist())
