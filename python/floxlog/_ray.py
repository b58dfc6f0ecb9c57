"""``Dataset.to_ray``: a ``ray.data.Dataset`` over a dataset's fragments,
through Ray Data's own plug-in point, a ``ray.data.Datasource``: one read
task per fragment, each yielding Arrow tables (``symbol`` as plain text),
with column projections pushed into the read.

Ray asks a datasource for its read tasks more than once (to size the plan,
then to run it); the fragments are listed once, when the dataset is made,
so every call gives the same tasks and a tape's listing errors are raised
in the caller's process."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Iterator, Sequence, Union

import pyarrow as pa
from ray.data import Datasource, ReadTask, read_datasource
from ray.data.block import BlockMetadata

try:
    from ray.data._internal.arrow_block import _BATCH_SIZE_PRESERVING_STUB_COL_NAME as _STUB
except ImportError:  # pragma: no cover (the name Ray 2.60 uses)
    _STUB = "__bsp_stub"

from ._dask import plain

if TYPE_CHECKING:
    from ._dataset import Dataset, Fragment

#: In-memory bytes per on-disk byte of a fragment, for Ray's block sizing
#: only: Arrow columns (with the ``*_ts`` columns beside the ``*_ts_ns``
#: integers, and decimals) are wider than the tape's records; LZ4 tapes are
#: smaller on disk still.
_GROWTH = 3


def _project(table: pa.Table, columns: Union[Sequence[str], None]) -> pa.Table:
    if columns is not None and not columns:
        # No column (Ray's count() projects them all away): Ray takes a
        # table of no column for no row, so the rows are kept as its stub
        # column of nulls, which its datasources use for this and hide.
        return pa.table({_STUB: pa.nulls(table.num_rows)})
    return plain(table if columns is None else table.select(list(columns)))


def read_fragment(fragment: "Fragment", columns: Union[Sequence[str], None]) -> Iterator[pa.Table]:
    """One read task: the fragment's events as Arrow tables (``columns``:
    only these). Its error is raised after the tables before it, failing
    the task, so the job, with it."""
    for batch in fragment.to_batches():
        yield _project(pa.Table.from_batches([batch]), columns)


def _size_bytes(fragment: "Fragment") -> Union[int, None]:
    """An estimate of the fragment's in-memory size, from its byte range."""
    if fragment.segment is None:
        return 0
    hi = fragment.end_byte
    if hi is None:
        try:
            hi = os.path.getsize(fragment.segment)
        except OSError:
            return None  # the read raises, naming the file
    return max(0, hi - (fragment.start_byte or 0)) * _GROWTH


class FloxlogDatasource(Datasource):
    """A :class:`floxlog.Dataset` as a Ray Data source: one ``ReadTask`` per
    fragment, whatever parallelism Ray asks for (fragments are the units a
    read can start at). ``num_rows`` is left unknown: a segment header
    counts the events of every type, before filters, and Ray takes a known
    count as exact (``Dataset.count()``)."""

    def __init__(self, ds: "Dataset", columns: Union[Sequence[str], None] = None) -> None:
        super().__init__()
        self._type = ds.type
        self._fragments = ds.fragments()
        self._schema = plain(ds.schema.empty_table()).schema
        # Ray's projection pushdown combines its projections with this one.
        self._projection_map = None if columns is None else {c: c for c in ds._columns(columns)}

    def get_name(self) -> str:
        return f"Floxlog[{self._type}]"

    def supports_projection_pushdown(self) -> bool:
        return True

    def _schema_read(self) -> pa.Schema:
        columns = self._get_data_columns()
        if columns is None:
            return self._schema
        return pa.schema([self._schema.field(c) for c in columns] if columns else [pa.field(_STUB, pa.null())])

    def estimate_inmemory_data_size(self) -> Union[int, None]:
        sizes = [_size_bytes(f) for f in self._fragments]
        return None if None in sizes else sum(sizes)  # type: ignore[arg-type]

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: Union[int, None] = None,
        data_context: Any = None,
    ) -> list[ReadTask]:
        columns = self._get_data_columns()
        schema = self._schema_read()
        if not self._fragments:
            # No fragment: one task giving an empty table, so the Ray
            # dataset has the schema still.
            empty = _project(self._schema.empty_table(), columns)
            meta = BlockMetadata(num_rows=0, size_bytes=0, exec_stats=None, input_files=())
            return [ReadTask(lambda: [empty], meta, schema=schema, per_task_row_limit=per_task_row_limit)]
        tasks = []
        for f in self._fragments:
            meta = BlockMetadata(
                num_rows=None,
                size_bytes=_size_bytes(f),
                exec_stats=None,
                input_files=(f.segment if f.segment is not None else f.tape,),
            )
            read = functools.partial(read_fragment, f, columns)
            tasks.append(ReadTask(read, meta, schema=schema, per_task_row_limit=per_task_row_limit))
        return tasks


def to_ray(ds: "Dataset", columns: Union[Sequence[str], None] = None) -> Any:
    source = FloxlogDatasource(ds, columns)
    # As many output blocks as tasks: Ray would otherwise aim at its
    # default minimum number of blocks and cut each task's output to reach it.
    return read_datasource(source, override_num_blocks=max(1, len(source._fragments)))
