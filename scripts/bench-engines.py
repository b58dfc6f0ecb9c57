#!/usr/bin/env python3
"""Benchmark of the engine routes: one tape of N synthetic trades (default
5 M, LZ4, the market of scripts/bench-python.py) read

- by ``tape.trades()`` in one process (the baseline),
- by ``floxlog.dataset(...).to_table()`` in one process (fragments on threads),
- fragment by fragment in one process, to Arrow and on to pandas (where the
  time of a Dask partition goes, without the scheduler),
- by ``Dataset.to_dask()`` on a ``dask.distributed`` LocalCluster of 2 worker
  processes: a sum (the partitions stay on the workers) and a ``compute()``
  of the whole frame (the partitions pickled back to this process),
- by the Spark data source in ``local[2]``: a sum (every batch handed to the
  JVM) and ``count()``,

each best of ``--repeat`` with the tape in the page cache; the cluster and
session start-up are timed apart. Not a test.

``--s3``: the object-store routes instead (the same tape on a local S3
server, moto's, behind a counting proxy, beside the same reads of the local
path): ``floxlog.open(url).trades()``, ``dataset(url).to_table()``, Dask,
Spark and Ray, each with the bytes the server sent ÷ the bytes of the
fragments read, requests per fragment and peak resident memory, and the
limit of the same work: a raw download of every object (boto3) from the
same server. See s3bench.py.

    .venv/bin/python scripts/bench-engines.py [--trades N] [--fragment-mib M] [--s3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import pickle
import shutil
import sys
import tempfile
import time
from pathlib import Path

import floxlog


def _synthetic():
    spec = importlib.util.spec_from_file_location("bench_python", Path(__file__).with_name("bench-python.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.synthetic_trades


def best(k: int, fn):
    t, out = float("inf"), None
    for _ in range(k):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trades", type=int, default=5_000_000)
    ap.add_argument("--fragment-mib", type=float, default=16.0)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--s3", action="store_true", help="the object-store routes (s3bench.py)")
    a = ap.parse_args()
    n = a.trades
    root = Path(tempfile.mkdtemp(prefix="floxlog-engines-"))
    if a.s3:
        sys.path.insert(0, str(Path(__file__).parent))
        import s3bench

        try:
            path = root / "tape"
            floxlog.write(path, _synthetic()(n), compression="lz4", max_segment_bytes=64 << 20)
            return s3bench.run(path, n, int(a.fragment_mib * (1 << 20)), a.repeat, not a.no_spark)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    rows = []

    def row(name: str, secs: float, note: str = "") -> None:
        rows.append((name, secs))
        print(f"{name:44} {secs:8.3f}s {n / secs / 1e6:8.2f} M trades/s  {note}", flush=True)

    try:
        path = root / "tape"
        floxlog.write(path, _synthetic()(n), compression="lz4", max_segment_bytes=64 << 20)
        size = sum(p.stat().st_size for p in path.glob("*.floxlog"))
        ds = floxlog.dataset(path, "trade", prices="float", fragment_bytes=int(a.fragment_mib * (1 << 20)))
        frags = ds.fragments()
        print(f"floxlog {floxlog.__version__}, {os.cpu_count()} CPUs; {n / 1e6:.1f} M trades, "
              f"{size / 1e6:.0f} MB LZ4, {len(frags)} fragments of ~{a.fragment_mib:g} MiB\n", flush=True)
        tape = floxlog.open(path)
        row("tape.trades() (one process)", best(a.repeat, lambda: tape.trades(prices="float"))[0])
        row("Dataset.to_table() (one process)", best(a.repeat, ds.to_table)[0])
        row("fragments one by one -> Arrow", best(a.repeat, lambda: [f.to_table() for f in frags])[0])
        from floxlog._dask import read_partition

        row("fragments one by one -> pandas", best(a.repeat, lambda: [read_partition(f) for f in frags])[0])
        t0 = time.perf_counter()
        blob = pickle.dumps(frags)
        print(f"{'pickling the fragments':44} {time.perf_counter() - t0:8.4f}s ({len(blob)} bytes)\n", flush=True)

        from distributed import Client, LocalCluster

        t0 = time.perf_counter()
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            print(f"{'dask: LocalCluster(2 processes) start':44} {time.perf_counter() - t0:8.3f}s", flush=True)
            df = ds.to_dask()
            row("dask: sum(price) (stays on workers)",
                best(a.repeat, lambda: client.compute(df["price"].sum()).result())[0])
            row("dask: compute() whole frame to here", best(a.repeat, lambda: client.compute(df).result())[0])
        if not a.no_spark:
            os.environ["PYSPARK_PYTHON"] = sys.executable
            from pyspark.sql import SparkSession, functions as F

            fspark = importlib.import_module("floxlog.spark")

            t0 = time.perf_counter()
            spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                     .config("spark.driver.memory", "4g").config("spark.ui.showConsoleProgress", "false").getOrCreate())
            spark.sparkContext.setLogLevel("ERROR")
            fspark.register(spark)
            print(f"\n{'spark: local[2] session start':44} {time.perf_counter() - t0:8.3f}s", flush=True)
            sdf = (spark.read.format("floxlog").option("type", "trade").option("prices", "float")
                   .option("fragment_bytes", str(int(a.fragment_mib * (1 << 20)))).load(str(path)))
            row("spark: sum(price)", best(a.repeat, lambda: sdf.agg(F.sum("price")).collect())[0])
            row("spark: count()", best(a.repeat, sdf.count)[0])
            spark.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
