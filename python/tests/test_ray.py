"""Dataset.to_ray on a local Ray of two CPUs: one read task and one block
per fragment, rows equal to what `floxlog cat --file-order` prints, columns
projected (ours and Ray's), filters as `Dataset.to_table`, an empty dataset
with its schema, damage failing the job with the floxlog error."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import floxlog
from engines import SMALL, cat_rows, damaged_tape, frame_rows, ray_local, write_tape

import ray  # noqa: F401  (pinned in requirements-test.txt: a missing install fails)


@pytest.fixture(scope="module")
def cluster():
    yield from ray_local()


@pytest.fixture(scope="module")
def tape(tmp_path_factory) -> Path:
    return write_tape(tmp_path_factory.mktemp("ray") / "t")


def _table(rds) -> pa.Table:
    """The Ray dataset's blocks, in one table."""
    return pa.concat_tables(ray.get(rds.to_arrow_refs()))


def test_rows_equal_cat_one_block_per_fragment(cluster, tape: Path):
    from floxlog._ray import FloxlogDatasource

    ds = floxlog.dataset(tape, "trade", fragment_bytes=SMALL)
    frags = ds.fragments()
    assert len(frags) > 4
    tasks = FloxlogDatasource(ds).get_read_tasks(1)
    assert len(tasks) == len(frags)
    assert [t.metadata.input_files for t in tasks] == [(f.segment,) for f in frags]
    assert all(t.metadata.num_rows is None and t.metadata.size_bytes > 0 for t in tasks)

    rds = ds.to_ray().materialize()
    assert rds.num_blocks() == len(frags)
    got = _table(rds)
    assert got.schema.names == ds.schema.names
    assert got.schema.field("symbol").type == pa.string()
    assert frame_rows(got.to_pandas()) == cat_rows(tape)
    assert set(got["symbol"].drop_null().to_pylist()) <= {"AAA", "BBB"}
    assert rds.count() == got.num_rows == sum(cat_rows(tape).values())
    # Counted without the columns (Ray projects them all away).
    assert ds.to_ray().count() == got.num_rows


def test_column_projection(cluster, tape: Path):
    ds = floxlog.dataset(tape, "trade", prices="float", fragment_bytes=SMALL)
    want = ds.to_table()
    rds = ds.to_ray(columns=["qty_raw", "price_raw"])
    assert rds.schema().names == ["qty_raw", "price_raw"]
    got = _table(rds)
    assert got.schema.names == ["qty_raw", "price_raw"]
    assert sorted(zip(got["qty_raw"].to_pylist(), got["price_raw"].to_pylist())) == sorted(
        zip(want["qty_raw"].to_pylist(), want["price_raw"].to_pylist()))
    # Ray's own projection, pushed into the read.
    sel = ds.to_ray().select_columns(["exchange_ts_ns", "symbol"])
    got = _table(sel)
    assert got.schema.names == ["exchange_ts_ns", "symbol"]
    assert sorted(got["exchange_ts_ns"].to_pylist()) == sorted(want["exchange_ts_ns"].to_pylist())
    assert got["symbol"].to_pylist().count("AAA") == want["symbol"].to_pylist().count("AAA") > 0
    with pytest.raises(ValueError, match=r"columns: \['nope'\] not in the trade schema") as e:
        ds.to_ray(columns=["price_raw", "nope"])
    assert isinstance(e.value, floxlog.FloxlogError) and e.value.kind == "usage"


def test_filters_as_to_table(cluster, tape: Path):
    ts = sorted(floxlog.open(tape).trades()["exchange_ts_ns"].to_pylist())
    ds = floxlog.dataset(tape, "trade", start=ts[len(ts) // 3], symbols=["AAA"], fragment_bytes=SMALL)
    want = frame_rows(ds.to_table().to_pandas())
    assert 0 < sum(want.values()) < len(ts) // 2
    got = _table(ds.to_ray())
    assert frame_rows(got.to_pandas()) == want
    assert set(got["symbol"].to_pylist()) == {"AAA"}


def test_empty_dataset_has_the_schema(cluster, tape: Path):
    ds = floxlog.dataset(tape, "trade", end=0, fragment_bytes=SMALL)
    assert ds.to_table().num_rows == 0
    rds = ds.to_ray()
    assert rds.count() == 0
    assert rds.schema().names == ds.schema.names
    empty = floxlog.Dataset((), ds.settings)  # no tape: no fragment at all
    assert empty.fragments() == []
    rds = empty.to_ray(columns=["price_raw", "symbol"])
    assert rds.count() == 0
    assert _table(rds).schema == pa.schema([ds.schema.field("price_raw"), pa.field("symbol", pa.string())])


def test_damage_fails_the_job(cluster, tmp: Path):
    tape, seg = damaged_tape(tmp / "t", n=3000)
    with pytest.raises(floxlog.FloxlogError) as e:
        floxlog.open(tape).trades(order="file")
    assert e.value.path is not None and Path(e.value.path).name == seg.name
    rds = floxlog.dataset(tape, "trade", fragment_bytes=SMALL).to_ray()
    # Ray raises a RayTaskError that is also the task's FloxlogError.
    with pytest.raises(floxlog.FloxlogError) as e2:
        rds.materialize()
    assert (e2.value.kind, e2.value.path, e2.value.offset) == (e.value.kind, e.value.path, e.value.offset)
    assert str(e.value).splitlines()[0] in str(e2.value)


def test_import_floxlog_does_not_import_ray():
    import subprocess
    import sys

    code = ("import sys, floxlog; floxlog.dataset; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_url_reads_as_its_local_copy(cluster, tape: Path, s3_server):
    """s3:// on Ray's worker processes, which have no AWS variables: the
    fragments carry the storage_options."""
    u = s3_server.upload(tape, "ray/t")
    ds = floxlog.dataset(u, "trade", fragment_bytes=SMALL, storage_options=s3_server.options)
    rds = ds.to_ray().materialize()
    assert rds.num_blocks() == len(ds.fragments()) > 4
    assert frame_rows(_table(rds).to_pandas()) == cat_rows(tape)
