"""Tapes in Spark, read in place: a Python data source (Spark 4's
``pyspark.sql.datasource`` API) over a :func:`floxlog.dataset`, one Spark
partition per fragment, each read as Arrow record batches::

    import floxlog.spark
    floxlog.spark.register(spark)
    df = (spark.read.format("floxlog")
          .option("type", "trade")
          .option("start", "2024-04-26T09:30:00Z")
          .load("/data/tapes/2024-04-*"))

Options (all text, as Spark passes them): ``type`` (default ``trade``),
``start``, ``end`` (ISO-8601, or digits with a unit such as
``1714123500s``), ``symbols`` (comma-separated ids or names), ``strict``
(``true``/``false``), ``prices`` (``decimal``, ``float``, ``raw``),
``timestamps`` (``us``, the default, or ``ms``: Spark's timestamps have
microseconds; the ``*_ts_ns`` columns stay exact), ``fragment_bytes``.
The path is a tape directory, a segment file or a glob; ``paths``
(comma-separated) names several. Spark's Python workers open them: a
relative path is taken from the directory the Spark session started in
(give absolute paths, visible on every worker).

Spark has no unsigned integers: ``uint8`` columns come as ``short``,
``uint16`` as ``int``, ``uint32`` as ``long`` and ``uint64`` (the trade id)
as ``decimal(20, 0)``, all exact; ``symbol`` as ``string``.

With ``spark.sql.python.filterPushdown.enabled`` set when
:func:`register` is called, comparisons of ``exchange_ts_ns`` with an
integer and ``symbol_id = n`` / ``symbol_id IN (...)`` are pushed into the
read (Spark still applies them after, so the result is the same either
way). A fragment that fails (damage, a file gone) fails the job with the
:class:`floxlog.FloxlogError` text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from . import _floxlog
from ._dask import plain
from ._dataset import Dataset, Fragment, _with, dataset

__all__ = ["register", "spark_schema", "to_spark_table"]

_WIDER = {
    pa.uint8(): pa.int16(),
    pa.uint16(): pa.int32(),
    pa.uint32(): pa.int64(),
    pa.uint64(): pa.decimal128(20, 0),
}


def _spark_type(t: pa.DataType) -> pa.DataType:
    if t in _WIDER:
        return _WIDER[t]
    if pa.types.is_dictionary(t):
        return t.value_type
    if pa.types.is_list(t):
        f = t.value_field
        return pa.list_(pa.field(f.name, _spark_type(f.type), f.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _spark_type(f.type), f.nullable) for f in t])
    return t


def _arrow_schema(schema: pa.Schema) -> pa.Schema:
    return pa.schema([pa.field(f.name, _spark_type(f.type), f.nullable) for f in schema])


def to_spark_table(table: pa.Table) -> pa.Table:
    """The table in types Spark reads (see the module docs), values exact."""
    table = plain(table)
    return table.cast(_arrow_schema(table.schema))


def spark_schema(ds: Dataset) -> Any:
    """The Spark ``StructType`` of a dataset's rows."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(_arrow_schema(plain(ds.schema.empty_table()).schema))


def _options_dataset(options: Any) -> Dataset:
    def opt(name: str, default: Any = None) -> Any:
        v = options.get(name)
        return default if v is None or v == "" else v

    paths = opt("paths")
    paths = [p.strip() for p in paths.split(",") if p.strip()] if paths else opt("path")
    if not paths:
        raise ValueError("floxlog: give a path: spark.read.format('floxlog').load(path)")
    symbols = opt("symbols")
    if symbols is not None:
        symbols = [int(s) if s.strip().isdigit() else s.strip() for s in symbols.split(",") if s.strip()]
    strict = str(opt("strict", "false")).lower()
    if strict not in ("true", "false"):
        raise ValueError(f"floxlog: strict must be true or false, not {strict!r}")
    timestamps = opt("timestamps", "us")
    if timestamps == "ns":
        raise ValueError("floxlog: Spark timestamps have microseconds: timestamps must be us or ms")
    return dataset(
        paths,
        opt("type", "trade"),
        start=opt("start"),
        end=opt("end"),
        symbols=symbols,
        strict=strict == "true",
        prices=opt("prices", "decimal"),
        timestamps=timestamps,
        fragment_bytes=int(opt("fragment_bytes", 64 << 20)),
        storage_options=_storage_options(opt("storage_options")),
    )


def _storage_options(text: Any) -> Any:
    """The ``storage_options`` option: a JSON object (Spark options are
    strings)."""
    if text is None:
        return None
    try:
        v = json.loads(text)
    except ValueError as e:
        # Not the text: it may hold a secret.
        raise ValueError(f"floxlog: storage_options must be a JSON object ({getattr(e, 'msg', 'not JSON')})") from None
    if not isinstance(v, dict):
        raise ValueError("floxlog: storage_options must be a JSON object")
    return v


def _ns(t: Any) -> Any:
    return t if t is None or isinstance(t, int) else _floxlog.parse_time(t, "time")


def _pushed(ds: Dataset, filters: Sequence[Any]) -> Dataset:
    """The dataset narrowed by the filters it can apply itself."""
    from pyspark.sql.datasource import (
        EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan, LessThanOrEqual,
    )

    s = ds.settings
    lo, hi = _ns(s.start), _ns(s.end)
    ids: set[int] | None = None
    for f in filters:
        col = getattr(f, "attribute", None)
        v = getattr(f, "value", None)
        if col == ("exchange_ts_ns",) and isinstance(v, int) and not isinstance(v, bool):
            if isinstance(f, GreaterThanOrEqual):
                lo = v if lo is None else max(lo, v)
            elif isinstance(f, GreaterThan):
                lo = v + 1 if lo is None else max(lo, v + 1)
            elif isinstance(f, LessThan):
                hi = v if hi is None else min(hi, v)
            elif isinstance(f, LessThanOrEqual):
                hi = v + 1 if hi is None else min(hi, v + 1)
            elif isinstance(f, EqualTo):
                lo = v if lo is None else max(lo, v)
                hi = v + 1 if hi is None else min(hi, v + 1)
        elif col == ("symbol_id",) and isinstance(f, (EqualTo, In)):
            vals = {v} if isinstance(f, EqualTo) else set(v)
            if all(isinstance(x, int) and not isinstance(x, bool) for x in vals):
                ids = vals if ids is None else ids & vals
    changes: dict[str, Any] = {}
    if (lo, hi) != (_ns(s.start), _ns(s.end)):
        changes.update(start=lo, end=hi)
    if ids is not None:
        # Ids within the symbols already asked for (names resolved per
        # tape, so kept as a filter after the read instead when given).
        if s.symbols is None:
            changes["symbols"] = tuple(str(i) for i in sorted(ids))
    return _with(ds, **changes) if changes else ds


@dataclass
class FragmentPartition(InputPartition):
    """One Spark partition: a fragment (``None``: an empty dataset's one
    partition, which reads nothing)."""

    fragment: Fragment | None


class FloxlogReader(DataSourceReader):
    """Partitions: the dataset's fragments; each read as record batches."""

    def __init__(self, ds: Dataset) -> None:
        self.ds = ds

    def partitions(self) -> Sequence[InputPartition]:
        # Spark wants at least one partition.
        return [FragmentPartition(f) for f in self.ds.fragments()] or [FragmentPartition(None)]

    def read(self, partition: Any) -> Iterator[pa.RecordBatch]:
        if partition.fragment is None:
            return
        for b in partition.fragment.to_batches():
            yield from to_spark_table(pa.Table.from_batches([b])).to_batches()


class FloxlogPushdownReader(FloxlogReader):
    """A reader that narrows its dataset by the filters Spark pushes."""

    def pushFilters(self, filters: list[Any]) -> Any:
        self.ds = _pushed(self.ds, filters)
        # All kept for Spark too: the result does not depend on the push.
        return filters


class FloxlogDataSource(DataSource):
    """``spark.read.format("floxlog")``: see the module docs."""

    reader_class: type = FloxlogReader

    @classmethod
    def name(cls) -> str:
        return "floxlog"

    def schema(self) -> Any:
        return spark_schema(_options_dataset(self.options))

    def reader(self, schema: Any) -> DataSourceReader:
        return self.reader_class(_options_dataset(self.options))


class FloxlogPushdownDataSource(FloxlogDataSource):
    """The data source with filter pushdown (PySpark refuses a reader that
    pushes filters unless the session enables it)."""

    reader_class = FloxlogPushdownReader


def register(spark: Any) -> None:
    """Registers the ``floxlog`` data source with a ``SparkSession``
    (PySpark 4 or later): ``spark.read.format("floxlog")``. Filters are
    pushed down when ``spark.sql.python.filterPushdown.enabled`` is set
    (PySpark 4.1 or later)."""
    conf = str(spark.conf.get("spark.sql.python.filterPushdown.enabled", "false"))
    source = FloxlogPushdownDataSource if conf.lower() == "true" else FloxlogDataSource
    spark.dataSource.register(source)
