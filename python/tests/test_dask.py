"""Dataset.to_dask on a real dask.distributed cluster of two worker
processes: the rows equal what `floxlog cat --file-order` prints; columns
project; a damaged fragment fails the computation with the floxlog error."""

from __future__ import annotations

from pathlib import Path

import pytest

import floxlog
from engines import SMALL, cat_rows, damaged_tape, frame_rows, write_tape

import distributed  # noqa: F401  (pinned in requirements-test.txt: a missing install fails)


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, worker_dashboard_address=None) as cluster:
        with Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> Path:
    return write_tape(tmp_path_factory.mktemp("dask") / "t")


def test_rows_equal_cat(client, tape: Path):
    ds = floxlog.dataset(tape, "trade", fragment_bytes=SMALL)
    df = ds.to_dask()
    assert df.npartitions == len(ds.fragments()) > 4
    got = client.compute(df).result()
    assert frame_rows(got) == cat_rows(tape)
    assert list(got.columns) == ds.schema.names
    assert set(got["symbol"].dropna()) <= {"AAA", "BBB"}


def test_column_projection(client, tape: Path):
    ds = floxlog.dataset(tape, "trade", prices="float", fragment_bytes=SMALL)
    df = ds.to_dask()
    sub = df[["price_raw", "qty_raw"]]
    assert list(sub._meta.columns) == ["price_raw", "qty_raw"]
    got = client.compute(sub).result()
    assert list(got.columns) == ["price_raw", "qty_raw"]
    want = ds.to_table()
    assert int(got["price_raw"].sum()) == sum(want["price_raw"].to_pylist())
    assert sorted(got["qty_raw"]) == sorted(want["qty_raw"].to_pylist())
    only = ds.to_dask(columns=["exchange_ts_ns"])
    assert list(only.columns) == ["exchange_ts_ns"]
    assert int(client.compute(only["exchange_ts_ns"].max()).result()) == max(want["exchange_ts_ns"].to_pylist())


def test_damage_fails_the_job(client, tmp: Path):
    tape, _ = damaged_tape(tmp / "t")
    with pytest.raises(floxlog.FloxlogError) as e:
        floxlog.open(tape).trades(order="file")
    df = floxlog.dataset(tape, "trade", fragment_bytes=SMALL).to_dask()
    with pytest.raises(floxlog.FloxlogError) as e2:
        client.compute(df).result()
    assert (e2.value.kind, e2.value.path, e2.value.offset, str(e2.value)) == (
        e.value.kind, e.value.path, e.value.offset, str(e.value))


def test_a_url_reads_as_its_local_copy(client, tape: Path, s3_server):
    """s3:// on workers that share no files with this process: the
    fragments carry the storage_options (the workers have no AWS
    variables)."""
    u = s3_server.upload(tape, "dask/t")
    ds = floxlog.dataset(u, "trade", fragment_bytes=SMALL, storage_options=s3_server.options)
    df = ds.to_dask()
    assert df.npartitions == len(floxlog.dataset(tape, "trade", fragment_bytes=SMALL).fragments()) > 4
    assert frame_rows(client.compute(df).result()) == cat_rows(tape)
