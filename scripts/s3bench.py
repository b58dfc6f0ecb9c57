"""The object-store routes of ``scripts/bench-engines.py --s3``.

The tape is uploaded to moto's S3 server on 127.0.0.1; every reader reaches
it through a counting TCP relay, so that the bytes and requests of every
process (Dask, Spark and Ray workers included) are counted in one place, as
the server sends them (response headers and listings included). Each route
also runs on the local path. Per route: best-of time, the bytes sent ÷ the
bytes of the fragments read (the segments' bytes for a whole-tape read),
requests per fragment, and peak resident memory (of the reading process; of
the busiest worker for Dask; not measured for Spark and Ray, whose workers
this process does not own). The limit of the same work: every object
downloaded raw with boto3 from the same server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import floxlog

# The test suite's relay (python/tests/s3server.py): the one measure of
# requests and bytes for the tests and this benchmark.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python" / "tests"))
from s3server import BUCKET, Relay, Server  # noqa: E402


# One process reading, its peak RSS measured: time, rows.
CHILD = r"""
import json, sys, time, floxlog
sys.path.insert(0, sys.argv[5])
from s3bench import _vm_hwm as peak
src, route, frag, opts = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
t0 = time.perf_counter()
if route == "open":
    n = floxlog.open(src, storage_options=opts).trades(prices="float").num_rows
else:
    n = floxlog.dataset(src, "trade", prices="float", fragment_bytes=frag, storage_options=opts).to_table().num_rows
print(json.dumps({"secs": time.perf_counter() - t0, "rows": n, "rss": peak()}))
"""


def run(path: Path, n: int, frag_bytes: int, repeat: int, spark: bool) -> int:
    import boto3

    server = Server()
    relay = Relay(int(server.endpoint.rsplit(":", 1)[1]))
    endpoint = relay.endpoint
    opts = dict(server.options, endpoint_url=endpoint)
    server.upload(path, "tape")
    url = f"s3://{BUCKET}/tape"
    segs = {p.name: p.stat().st_size for p in path.glob("*.floxlog")}
    size = sum(segs.values())
    frags = floxlog.dataset(path, "trade", fragment_bytes=frag_bytes).fragments()
    frag_read = sum((f.end_byte or segs[Path(f.segment).name]) - (f.start_byte or 0) for f in frags)
    print(f"floxlog {floxlog.__version__}, {os.cpu_count()} CPUs; {n / 1e6:.1f} M trades, {size / 1e6:.0f} MB LZ4 "
          f"in {len(segs)} segments, {len(frags)} fragments of ~{frag_bytes >> 20} MiB; "
          f"moto {_version('moto')} on 127.0.0.1 behind a counting relay\n", flush=True)

    # The limit: every object downloaded raw through the relay.
    raw = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id="testing",
                       aws_secret_access_key="testing", region_name="us-east-1")
    t = _best(repeat, lambda: [raw.get_object(Bucket=BUCKET, Key=f"tape/{k}")["Body"].read() for k in segs])
    print(f"limit: raw GET of every segment object: {t:.3f} s, {size / t / 1e6:.0f} MB/s", flush=True)
    # The same in the byte source's parts (8 MiB ranges, 4 in flight): the
    # server's cost per range request is part of the limit.
    from concurrent.futures import ThreadPoolExecutor

    part = 8 << 20
    ranges = [(k, a, min(a + part, n_) - 1) for k, n_ in segs.items() for a in range(0, n_, part)]

    def get(r):
        return raw.get_object(Bucket=BUCKET, Key=f"tape/{r[0]}", Range=f"bytes={r[1]}-{r[2]}")["Body"].read()

    with ThreadPoolExecutor(4) as pool:
        t = _best(repeat, lambda: list(pool.map(get, ranges)))
    print(f"limit: raw 8 MiB range GETs, 4 in flight: {t:.3f} s, {size / t / 1e6:.0f} MB/s\n", flush=True)

    print("| route | source | s | M trades/s | fetched ÷ read | requests / fragment | peak RSS |")
    print("|---|---|---|---|---|---|---|")

    def show(route: str, src: str, secs: float, counted, nfrag: int, read: int, rss) -> None:
        got = "" if counted is None else f"{counted[1] / read:.2f}"
        req = "" if counted is None else f"{counted[0] / nfrag:.1f}"
        mem = "" if rss is None else f"{rss / 1e6:.0f} MB"
        print(f"| {route} | {src} | {secs:.2f} | {n / secs / 1e6:.1f} | {got} | {req} | {mem} |", flush=True)

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    for route, nfrag, read in (("open(src).trades()", len(segs), size),
                               ("dataset(src).to_table()", len(frags), frag_read)):
        kind = "open" if route.startswith("open") else "dataset"
        for src in (str(path), url):
            best, counted, rss = float("inf"), None, None
            for _ in range(repeat):
                before = relay.counts()
                out = subprocess.run([sys.executable, "-c", CHILD, src, kind, str(frag_bytes), json.dumps(opts),
                                      str(Path(__file__).parent)],
                                     env=env, capture_output=True, text=True, check=True)
                r = json.loads(out.stdout)
                assert r["rows"] == n, r
                after = relay.counts()
                best, rss = min(best, r["secs"]), r["rss"]
                counted = (after[0] - before[0], after[1] - before[1]) if src == url else None
            show(route, "s3" if src == url else "local", best, counted, nfrag, read, rss)

    _dask(relay, path, url, opts, frag_bytes, repeat, len(frags), frag_read, show)
    if spark:
        _spark(relay, path, url, opts, frag_bytes, repeat, len(frags), frag_read, show)
    _ray(relay, path, url, opts, frag_bytes, repeat, len(frags), frag_read, show)
    server.stop()
    return 0


def _engine_rows(relay, path, url, opts, frag_bytes, repeat, nfrag, read, show, name, read_once, rss=None):
    for src in (str(path), url):
        before = relay.counts()
        t = _best(repeat, lambda: read_once(src))
        after = relay.counts()
        counted = None
        if src == url:
            counted = ((after[0] - before[0]) / repeat, (after[1] - before[1]) / repeat)
        show(name, "s3" if src == url else "local", t, counted, nfrag, read, rss(src) if rss else None)


def _vm_hwm() -> int:
    """This process's peak resident set (VmHWM; ru_maxrss keeps a forking
    parent's)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _dask(relay, path, url, opts, frag_bytes, repeat, nfrag, read, show) -> None:
    from distributed import Client, LocalCluster

    for src in (str(path), url):
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
                Client(cl) as client:
            def once():
                df = floxlog.dataset(src, "trade", prices="float", fragment_bytes=frag_bytes,
                                     storage_options=opts if src == url else None).to_dask()
                return client.compute(df["price"].sum()).result()

            # Once: the cluster keeps a result it has computed, and a second
            # compute of the same graph returns it without reading.
            client.run(lambda: __import__("floxlog"))
            before = relay.counts()
            t = _best(1, once)
            after = relay.counts()
            peak = max(client.run(_vm_hwm).values())
        counted = None
        if src == url:
            # The listing (in this process) counted, as in the other routes.
            counted = (after[0] - before[0], after[1] - before[1])
        show("Dask: sum(price), 2 worker processes", "s3" if src == url else "local", t, counted, nfrag, read, peak)


def _spark(relay, path, url, opts, frag_bytes, repeat, nfrag, read, show) -> None:
    import importlib

    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession, functions as F

    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "4g").config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    importlib.import_module("floxlog.spark").register(spark)

    def once(src: str):
        r = (spark.read.format("floxlog").option("type", "trade").option("prices", "float")
             .option("fragment_bytes", str(frag_bytes)))
        if src == url:
            r = r.option("storage_options", json.dumps(opts))
        return r.load(src).agg(F.sum("price")).collect()

    _engine_rows(relay, path, url, opts, frag_bytes, repeat, nfrag, read, show, "Spark local[2]: sum(price)", once)
    spark.stop()


def _ray(relay, path, url, opts, frag_bytes, repeat, nfrag, read, show) -> None:
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False

    def once(src: str):
        ds = floxlog.dataset(src, "trade", prices="float", fragment_bytes=frag_bytes,
                             storage_options=opts if src == url else None)
        return ds.to_ray(columns=["price"]).sum("price")

    _engine_rows(relay, path, url, opts, frag_bytes, repeat, nfrag, read, show, "Ray (2 CPUs): sum(price)", once)
    ray.shutdown()


def _best(k: int, fn) -> float:
    t = float("inf")
    for _ in range(k):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def _version(pkg: str) -> str:
    from importlib.metadata import version

    return version(pkg)
