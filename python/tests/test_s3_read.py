"""Python reads of tapes on object storage, against a real S3 API server
(moto's, on 127.0.0.1): ``floxlog.open(url)`` and ``floxlog.dataset(url,
a list of URLs, or a prefix glob)`` give exactly what the local copies
give; ``storage_options`` reach the store and stay out of reprs and
errors; fragments pickle with them; an object deleted after listing and
an unknown option are errors naming the URL or the key."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from conftest import CASES
from engines import SMALL, write_tape
from s3server import url


@pytest.fixture(scope="module")
def remote(s3_server, tmp_path_factory):
    """A multi-segment LZ4 tape at s3://tapes/py/t, three copies under
    s3://tapes/py/many/, and a few corpus tapes; the local paths by URL."""
    root = tmp_path_factory.mktemp("s3py")
    tape = write_tape(root / "t")
    local = {s3_server.upload(tape, "py/t"): tape}
    for day in ("day1", "day2", "day3"):
        local[s3_server.upload(tape, f"py/many/{day}")] = tape
    for case in CASES[:4]:
        local[s3_server.upload(case / "segments", f"py/corpus/{case.name}")] = case / "segments"
    return local


def opened(u: str, s3_server) -> floxlog.Tape:
    return floxlog.open(u, storage_options=s3_server.options)


def test_open_url_reads_what_the_local_copy_reads(s3_server, remote):
    u = url("py/t")
    tape = opened(u, s3_server)
    assert tape.path == u
    assert len(tape.info(quick=True)["segments"]) == len(list(remote[u].glob("*.floxlog"))) >= 2
    for order in ("time", "file"):
        got = tape.trades(order=order)
        want = floxlog.open(remote[u]).trades(order=order)
        assert got.num_rows == want.num_rows > 1000
        assert got.equals(want)
    assert tape.read("book").equals(floxlog.open(remote[u]).read("book"))
    # Pickled with its storage_options, as a worker would get it.
    again = pickle.loads(pickle.dumps(tape))
    assert again.path == u and again.trades().equals(tape.trades())
    assert "testing" not in repr(again)


def test_corpus_tapes_read_alike(s3_server, remote):
    cases = [u for u in remote if "/corpus/" in u]
    assert cases
    for u in cases:
        for rtype in ("trade", "book"):
            assert opened(u, s3_server).read(rtype).equals(floxlog.open(remote[u]).read(rtype)), u


def test_a_dataset_of_a_url_equals_the_local_dataset(s3_server, remote):
    u = url("py/t")
    ds = floxlog.dataset(u, "trade", fragment_bytes=SMALL, storage_options=s3_server.options)
    here = floxlog.dataset(remote[u], "trade", fragment_bytes=SMALL)
    frags = ds.fragments()
    assert len(frags) == len(here.fragments()) > 4
    assert all(f.segment.startswith(u + "/") for f in frags)
    assert ds.to_table().equals(here.to_table())
    # A fragment read in another process: pickled with its options.
    f = pickle.loads(pickle.dumps(frags[2]))
    assert f.to_table().equals(here.fragments()[2].to_table())


def test_a_fragment_fetches_about_its_own_bytes(s3_server, remote):
    """Listing fetches each segment's header and index trailer; a fragment
    its own frames (or LZ4 blocks) besides those, never the whole object:
    bytes fetched per byte read about 1, counted by the byte source."""
    from floxlog import _floxlog

    u = url("py/t")
    sizes = {p.name: p.stat().st_size for p in remote[u].glob("*.floxlog")}
    total = sum(sizes.values())
    before = _floxlog.store_stats()
    ds = floxlog.dataset(u, "trade", fragment_bytes=SMALL, storage_options=s3_server.options)
    frags = ds.fragments()
    listed = _floxlog.store_stats()
    assert len(frags) > 2 * len(sizes)
    assert listed[1] - before[1] < total // 50
    fetched = 0
    for f in frags:
        own = (f.end_byte or sizes[f.segment.rsplit("/", 1)[1]]) - (f.start_byte or 0)
        a = _floxlog.store_stats()
        f.to_table()
        b = _floxlog.store_stats()
        # Besides its bytes: the listing, the side files, the header and
        # the index trailer (a few requests and kilobytes).
        assert own <= b[1] - a[1] <= own + 4096, (f, own, b[1] - a[1])
        assert b[0] - a[0] <= 6
        fetched += b[1] - a[1]
    assert fetched <= 1.1 * total


def test_a_prefix_glob_and_a_list_of_urls(s3_server, remote):
    opts = s3_server.options
    ds = floxlog.dataset(url("py/many/day*"), "trade", storage_options=opts)
    assert ds.tapes == tuple(url(f"py/many/day{i}") for i in (1, 2, 3))
    one = floxlog.open(remote[url("py/t")]).trades(order="file")
    assert ds.to_table().equals(pa.concat_tables([one] * 3))
    listed = floxlog.dataset([url("py/many/day2"), url("py/t")], "trade", storage_options=opts)
    assert listed.tapes == (url("py/many/day2"), url("py/t"))
    with pytest.raises(floxlog.FloxlogError, match="no object or prefix matches"):
        floxlog.dataset(url("py/many/week*"), storage_options=opts)
    with pytest.raises(floxlog.UsageError, match="only the last part"):
        floxlog.dataset(url("py/*/day1"), storage_options=opts)


def test_secrets_stay_out_of_reprs_and_errors(s3_server, remote):
    opts = dict(s3_server.options, secret="testing-secret-5f2c")
    ds = floxlog.dataset(url("py/t"), "trade", fragment_bytes=SMALL, storage_options=opts)
    shown = repr(ds) + repr(ds.settings) + repr(ds.fragments()[0])
    assert "testing-secret-5f2c" not in shown
    with pytest.raises(floxlog.UsageError) as e:
        floxlog.open(url("py/t"), storage_options={"passwd": "hunter2-9e1", "key": "k"})
    assert "`passwd`" in str(e.value)
    assert "hunter2" not in str(e.value) + str(e.value.hint)
    with pytest.raises(TypeError):
        floxlog.open(url("py/t"), storage_options=[("key", "k")])


def test_an_object_deleted_after_listing_names_the_url(s3_server, remote, tmp_path):
    tape = write_tape(tmp_path / "gone")
    u = s3_server.upload(tape, "py/gone")
    ds = floxlog.dataset(u, "trade", storage_options=s3_server.options)
    frags = ds.fragments()
    victim = frags[-1].segment
    s3_server.client.delete_object(Bucket="tapes", Key=victim.split("/", 3)[3])
    with pytest.raises(floxlog.FloxlogError) as e:
        frags[-1].to_table()
    assert e.value.path == victim
    # Listed again: its manifest lists an object that is gone (a listing
    # error, raised by reading its fragment), then the segments left.
    again = ds.fragments()
    assert [f.segment for f in again] == [None] + [f.segment for f in frags[:-1]]
    with pytest.raises(floxlog.FloxlogError, match="missing|not found|no such"):
        again[0].to_table()


def test_the_environment_alone_configures_the_store(s3_server, remote):
    """No storage_options: the AWS variables (a new process: a store, once
    built, keeps its configuration)."""
    u = url("py/t")
    code = f"import floxlog; print(floxlog.open({u!r}).trades().num_rows)"
    r = subprocess.run([sys.executable, "-c", code], env=s3_server.env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout) == floxlog.open(remote[u]).trades().num_rows > 1000


def test_the_docs_python_example_runs_as_written(s3_server, tmp_path):
    """docs/object-storage.md's Python block against the test server: its
    endpoint and keys put in for the placeholders, nothing else changed."""
    import re

    from test_export_duckdb import floxlog_bin

    page = Path(__file__).resolve().parents[2] / "docs" / "object-storage.md"
    found = [b for b in re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.S) if "storage_options" in b]
    assert len(found) == 1, "one Python block with storage_options"
    block = found[0].replace('"http://minio:9000"', repr(s3_server.endpoint)).replace('"..."', '"testing"')
    subprocess.run([floxlog_bin(), "demo", str(tmp_path / "demo"), "--trades", "3000", "--book-deltas", "100"],
                   check=True, capture_output=True)
    s3_server.bucket("market-data")
    for venue in ("binance", "okx"):
        for p in sorted((tmp_path / "demo").iterdir()):
            s3_server.client.upload_file(str(p), "market-data", f"2026-08-16/{venue}/{p.name}")
    scope: dict = {"floxlog": floxlog}
    exec(compile(block, "docs/object-storage.md", "exec"), scope)
    want = floxlog.open(tmp_path / "demo").trades()
    assert want.num_rows == 3000
    assert scope["tape"].trades().equals(want)
    assert scope["ds"].tapes == ("s3://market-data/2026-08-16/binance", "s3://market-data/2026-08-16/okx")
    assert scope["ds"].to_table().num_rows == 2 * want.num_rows


def test_opening_a_prefix_costs_one_list_call(s3_server, remote):
    """Requests counted by the byte source: one list call (not one to tell
    a prefix from an object and another to list it), then one GET per side
    file the listing saw (manifest.json, metadata.json)."""
    from floxlog import _floxlog

    before = _floxlog.store_stats()
    opened(url("py/t"), s3_server)
    after = _floxlog.store_stats()
    assert after[0] - before[0] == 3
    assert 0 < after[1] - before[1] < 10_000


def test_a_missing_bucket_or_prefix_names_the_url(s3_server):
    for u in ("s3://no-such-bucket/tape", url("py/no-such-tape")):
        with pytest.raises(floxlog.FloxlogError) as e:
            floxlog.open(u, storage_options=s3_server.options)
        assert e.value.path == u and e.value.kind == "io", e.value
    with pytest.raises(floxlog.FloxlogError) as e:
        floxlog.dataset("s3://no-such-bucket/t*", storage_options=s3_server.options)
    assert "s3://no-such-bucket" in str(e.value)
