"""Read and write ``.floxlog`` market-data tapes as Apache Arrow data.

A tape is a directory of segment files (the flox layout, ``<created_ns>.floxlog``
segments with every record type interleaved, or the spec layout, one series
per type) or a single segment file. Events come out as ``pyarrow.Table`` s,
one table per record type:

======================  ==========================================================
``Tape.trades()``       trades (frame type 1)
``Tape.books()``        book snapshots and deltas (frame types 2 and 3; ``kind``)
``Tape.option_quotes()``  option quotes (frame type 4)
``Tape.pool_states()``  pool states (frame type 5; ``payload`` is binary)
======================  ==========================================================

Each table has the raw integer columns of the format (the names and types of
the conformance corpus's JSON fields: ``exchange_ts_ns``, ``price_raw``, ...),
``exchange_ts`` / ``recv_ts`` as ``timestamp[ns, UTC]``, the fixed-point
quantities as exact ``decimal128(38, 8)`` columns (``price``, ``qty``, ...) and
``symbol``, the name the tape's ``metadata.json`` gives the ``symbol_id``
(dictionary encoded; null where the tape names none).

Example::

    import floxlog
    tape = floxlog.open("data/2024-04-26")
    trades = tape.trades(start="2024-04-26T09:30:00Z", symbols=["BTCUSDT"])
    for batch in tape.batches("book", rows=100_000):   # bounded memory
        ...
    import polars as pl
    df = pl.DataFrame(tape.batches("trade"))   # via __arrow_c_stream__
    floxlog.write("copy", trades, compression="lz4")

Decoding and encoding run in Rust with the GIL released. Errors raise
:class:`FloxlogError` with the kind, file and byte offset the ``floxlog``
tool prints; a read that fails part-way keeps what it read in ``e.partial``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import warnings
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

import numpy as np
import pyarrow as pa

from . import _floxlog
from ._errors import FloxlogError, FloxlogWarning

__all__ = [
    "FloxlogError",
    "FloxlogWarning",
    "Tape",
    "BatchStream",
    "open",
    "write",
    "schema",
    "RECORD_TYPES",
    "TRADE_DTYPE",
    "__version__",
]

__version__: str = _floxlog.__version__

#: The record types, as the table names ``type=`` arguments take (plurals
#: and short forms such as ``"trades"``, ``"options"``, ``"pools"`` work too).
RECORD_TYPES = ("trade", "book", "option_quote", "pool_state")

#: Default rows per record batch.
DEFAULT_ROWS = 65536

#: The dtype of :meth:`Tape.trades_numpy`: the raw integer columns, then the
#: two timestamps as ``datetime64[ns]`` (UTC).
TRADE_DTYPE = np.dtype(
    [
        ("exchange_ts_ns", np.int64),
        ("recv_ts_ns", np.int64),
        ("price_raw", np.int64),
        ("qty_raw", np.int64),
        ("trade_id", np.uint64),
        ("symbol_id", np.uint32),
        ("side", np.uint8),
        ("instrument", np.uint8),
        ("exchange_id", np.uint16),
        ("exchange_ts", "datetime64[ns]"),
        ("recv_ts", "datetime64[ns]"),
    ]
)

TimeLike = Union[int, str, _dt.datetime, _dt.date, np.datetime64, None]
SymbolsLike = Union[int, str, Iterable[Union[int, str]], None]

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _usage(message: str) -> FloxlogError:
    return FloxlogError(message, kind="usage")


def _time_arg(v: TimeLike, what: str) -> int | str | None:
    """A time bound as nanoseconds since the epoch, or text for the Rust
    parser (integer nanoseconds or ISO-8601; UTC unless it has an offset)."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise TypeError(f"{what}: a bool is not a time")
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, str):
        return v
    if isinstance(v, np.datetime64):
        if np.isnat(v):
            raise _usage(f"{what}: NaT is not a time")
        return int(v.astype("datetime64[ns]").astype(np.int64))
    if isinstance(v, _dt.datetime):
        if v != v:  # pandas.NaT
            raise _usage(f"{what}: NaT is not a time")
        # pandas.Timestamp: exact nanoseconds (`value` is UTC, or the wall
        # time read as UTC when naive).
        if hasattr(v, "nanosecond") and hasattr(v, "value"):
            return int(v.value)
        if v.tzinfo is None or v.tzinfo.utcoffset(v) is None:
            v = v.replace(tzinfo=_dt.timezone.utc)  # naive: UTC
        d = v - _EPOCH
        return (d.days * 86400 + d.seconds) * 1_000_000_000 + d.microseconds * 1000
    if isinstance(v, _dt.date):
        d = _dt.datetime(v.year, v.month, v.day, tzinfo=_dt.timezone.utc) - _EPOCH
        return d.days * 86400 * 1_000_000_000
    raise TypeError(
        f"{what}: expected nanoseconds (int), an ISO-8601 string, a datetime, "
        f"a date or numpy.datetime64, not {type(v).__name__}"
    )


def _symbols_arg(symbols: SymbolsLike) -> list[str]:
    if symbols is None:
        return []
    if isinstance(symbols, (str, int, np.integer)) and not isinstance(symbols, bool):
        symbols = [symbols]
    out = []
    for s in symbols:  # type: ignore[union-attr]
        if isinstance(s, bool) or not isinstance(s, (str, int, np.integer)):
            raise TypeError(f"symbols: expected ids (int) or names (str), not {s!r}")
        out.append(str(int(s)) if isinstance(s, (int, np.integer)) else s)
    return out


def _reader_of(stream: Any) -> pa.RecordBatchReader:
    """A ``pyarrow.RecordBatchReader`` over an Arrow C stream object."""
    from_stream = getattr(pa.RecordBatchReader, "from_stream", None)
    if from_stream is not None:
        return from_stream(stream)
    # pyarrow 14
    return pa.RecordBatchReader._import_from_c_capsule(stream.__arrow_c_stream__())


def _warn(texts: Sequence[str], stacklevel: int) -> None:
    for w in texts:
        warnings.warn(w, FloxlogWarning, stacklevel=stacklevel + 1)


class BatchStream:
    """Record batches of one record type, read from the tape on a background
    thread as they are consumed (at most a few batches in memory).

    A ``BatchStream`` implements the Arrow PyCapsule interface
    (``__arrow_c_stream__``), so any Arrow consumer reads it::

        pyarrow.RecordBatchReader.from_stream(s)
        polars.DataFrame(s)           # polars.from_arrow(s): a struct Series
        duckdb.sql("select count(*) from s")

    or iterate it for ``pyarrow.RecordBatch`` es. It can be consumed once.
    The tape is listed and the arguments checked when the stream is made;
    reading starts when it is consumed. An error met while reading ends the
    stream with an Arrow error whose message is the floxlog error's text
    (pyarrow raises it as ``OSError``/``ArrowInvalid``); :attr:`errors` then
    holds it as a :class:`FloxlogError`. Warnings (a torn tail tolerated,
    late events) are in :attr:`warnings` once the stream is :attr:`done`.
    A consumer that stops early (drops the reader) stops the thread.
    """

    __slots__ = ("_s", "type")

    def __init__(self, native: Any, type: str) -> None:
        self._s = native
        #: The record type (``"trade"``, ``"book"``, ...).
        self.type = type

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """Export as an ``ArrowArrayStream`` PyCapsule; ``requested_schema``
        is ignored (batches come in :attr:`schema`)."""
        return self._s.__arrow_c_stream__(requested_schema)

    def __arrow_c_schema__(self) -> Any:
        """Export the schema as an ``ArrowSchema`` PyCapsule."""
        return self._s.__arrow_c_schema__()

    @property
    def schema(self) -> pa.Schema:
        """The schema of every batch."""
        return self._s.schema

    @property
    def consumed(self) -> bool:
        """Whether the stream was handed to a consumer."""
        return self._s.consumed

    @property
    def done(self) -> bool:
        """Whether the read has finished (all batches sent, or it failed)."""
        return self._s.done

    @property
    def warnings(self) -> list[str]:
        """Warnings of the read (complete once :attr:`done`)."""
        return self._s.warnings

    @property
    def errors(self) -> list[FloxlogError]:
        """Errors of the read (complete once :attr:`done`)."""
        return self._s.errors

    def to_reader(self) -> pa.RecordBatchReader:
        """Consume as a ``pyarrow.RecordBatchReader``."""
        return _reader_of(self)

    def read_all(self) -> pa.Table:
        """Consume into a ``pyarrow.Table``."""
        return self.to_reader().read_all()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return iter(self.to_reader())

    def __repr__(self) -> str:
        state = "done" if self.done else ("consumed" if self.consumed else "ready")
        return f"<floxlog.BatchStream {self.type} ({state})>"


class Tape:
    """A tape opened with :func:`open`.

    Every read lists the tape anew (segments a writer added since are read)
    and takes the same filters:

    - ``start``, ``end``: keep events with ``start <= exchange_ts_ns < end``.
      Nanoseconds since the epoch (int), an ISO-8601 string
      (``"2024-04-26T09:30:00Z"``, ``"2024-04-26"``; without an offset it is
      UTC), a ``datetime`` (a naive one is taken as UTC), a ``date``
      (midnight UTC), a ``numpy.datetime64`` or a ``pandas.Timestamp``.
    - ``symbols``: symbol ids (int) and/or names (str) from the tape's
      ``metadata.json`` (case-insensitive); a name it does not know raises.
    - ``order``: ``"time"`` (default: merged by exchange timestamp across
      segments, stable) or ``"file"`` (each segment in file order).
    - ``strict``: the torn tail of a segment whose writer is still running
      (or died) is a warning (:class:`FloxlogWarning`) and its complete
      events are read; with ``strict=True`` it is an error.

    A read that meets damage raises :class:`FloxlogError` (kind and byte
    offset as ``floxlog cat`` prints them) after reading everything it can
    (the other segments too); ``e.partial`` holds those events.
    """

    __slots__ = ("_t",)

    def __init__(self, native: Any) -> None:
        self._t = native

    @property
    def path(self) -> str:
        """The path given to :func:`open`."""
        return os.fspath(self._t.path)

    def __repr__(self) -> str:
        return f"floxlog.Tape({self.path!r})"

    def __fspath__(self) -> str:
        return self.path

    # -- tables ----------------------------------------------------------

    def read(
        self,
        type: str,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> pa.Table:
        """Every event of one record type (``"trade"``, ``"book"``,
        ``"option_quote"``, ``"pool_state"``) as a ``pyarrow.Table``.

        Raises :class:`FloxlogError` (with ``e.partial``) as described in
        :class:`Tape`."""
        return self._read(type, start, end, symbols, order, strict, stacklevel=2)

    def _read(
        self,
        type: str,
        start: TimeLike,
        end: TimeLike,
        symbols: SymbolsLike,
        order: str,
        strict: bool,
        stacklevel: int,
    ) -> pa.Table:
        stream, warns, errors = self._t.read(
            type,
            _time_arg(start, "start"),
            _time_arg(end, "end"),
            _symbols_arg(symbols),
            order,
            bool(strict),
            DEFAULT_ROWS,
        )
        table = _reader_of(stream).read_all()
        _warn(warns, stacklevel + 1)
        if errors:
            e = errors[0]
            e.partial = table
            e.errors = list(errors)
            raise e
        return table

    def trades(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> pa.Table:
        """Trades as a ``pyarrow.Table``: ``exchange_ts_ns``, ``recv_ts_ns``,
        ``price_raw``, ``qty_raw`` (int64), ``trade_id`` (uint64),
        ``symbol_id`` (uint32), ``side``, ``instrument`` (uint8),
        ``exchange_id`` (uint16), ``symbol``, ``exchange_ts``, ``recv_ts``,
        ``price``, ``qty`` (decimal128(38, 8)). Filters: see :class:`Tape`."""
        return self._read("trade", start, end, symbols, order, strict, stacklevel=2)

    def books(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> pa.Table:
        """Book snapshots and deltas as a ``pyarrow.Table``: ``kind``
        (``"snapshot"``/``"delta"``), ``exchange_ts_ns``, ``recv_ts_ns``,
        ``seq`` (int64), ``symbol_id``, ``header_type`` (the stored byte),
        ``instrument``, ``exchange_id``, ``bids`` and ``asks``
        (``list<struct<price_raw: int64, qty_raw: int64>>``), ``symbol``,
        ``exchange_ts``, ``recv_ts``. Filters: see :class:`Tape`."""
        return self._read("book", start, end, symbols, order, strict, stacklevel=2)

    def option_quotes(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> pa.Table:
        """Option quotes as a ``pyarrow.Table``: the timestamps, eleven raw
        fixed-point columns (``mark_price_raw`` ... ``open_interest_raw``),
        ``symbol_id``, ``instrument``, ``exchange_id``, ``symbol``,
        ``exchange_ts``, ``recv_ts`` and the eleven decimals. Filters: see
        :class:`Tape`."""
        return self._read("option_quote", start, end, symbols, order, strict, stacklevel=2)

    def pool_states(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> pa.Table:
        """Pool states as a ``pyarrow.Table``: the timestamps, ``symbol_id``,
        ``sub_type``, ``venue``, ``exchange_id``, ``payload`` (binary, the
        venue's opaque bytes), ``symbol``, ``exchange_ts``, ``recv_ts``.
        Filters: see :class:`Tape`."""
        return self._read("pool_state", start, end, symbols, order, strict, stacklevel=2)

    def trades_numpy(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> np.ndarray:
        """Trades as a numpy structured array of :data:`TRADE_DTYPE` (the raw
        integer columns, ``exchange_ts`` and ``recv_ts`` as
        ``datetime64[ns]``), built column by column from the Arrow buffers.
        On a failed read ``e.partial`` is such an array too."""
        try:
            table = self._read("trade", start, end, symbols, order, strict, stacklevel=2)
        except FloxlogError as e:
            if isinstance(e.partial, pa.Table):
                e.partial = _trades_to_numpy(e.partial)
            raise
        return _trades_to_numpy(table)

    # -- streams ---------------------------------------------------------

    def batches(
        self,
        type: str,
        rows: int = DEFAULT_ROWS,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
    ) -> BatchStream:
        """A :class:`BatchStream` of record batches of at most ``rows`` rows
        of one record type, read on a background thread as the consumer
        asks (bounded memory). Filters: see :class:`Tape`; a bad filter or
        path raises here, damage met while reading ends the stream with an
        error."""
        if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
            raise _usage(f"rows must be a positive int, not {rows!r}")
        native = self._t.stream(
            type,
            _time_arg(start, "start"),
            _time_arg(end, "end"),
            _symbols_arg(symbols),
            order,
            bool(strict),
            int(rows),
        )
        return BatchStream(native, _floxlog.record_type_name(type))

    # -- books -----------------------------------------------------------

    def book_at(
        self,
        symbol: int | str,
        at: TimeLike,
        depth: int | None = None,
        strict: bool = False,
    ) -> dict[str, Any]:
        """The order book of ``symbol`` (id or metadata name) after every
        book event stamped at or before ``at`` (as ``floxlog book --at``):
        ``{"symbol_id", "at", "last_event_ts", "bids", "asks"}`` with each
        side a list of ``(price_raw, qty_raw)`` tuples, best first (bids
        highest price first, asks lowest), at most ``depth`` levels a side.
        ``last_event_ts`` is ``None`` before the symbol's first book event.

        Raises :class:`FloxlogError` with file and offset for damage, a
        negative quantity or a price listed twice in a snapshot side; the
        torn tail of an unfinished segment is a warning unless ``strict``."""
        syms = _symbols_arg(symbol)
        if len(syms) != 1:
            raise _usage("symbol: give one symbol")
        t = _time_arg(at, "at")
        if t is None:
            raise _usage("at: a time is required")
        if depth is not None and (isinstance(depth, bool) or int(depth) < 0):
            raise _usage("depth: expected a count >= 0")
        sid, at_ns, last, bids, asks, warnings = self._t.book_at(
            syms[0], t, None if depth is None else int(depth), bool(strict)
        )
        _warn(warnings, 2)
        return {"symbol_id": sid, "at": at_ns, "last_event_ts": last, "bids": bids, "asks": asks}

    # -- checks ----------------------------------------------------------

    def info(self, quick: bool = False) -> dict[str, Any]:
        """What ``floxlog inspect --json`` prints, as a dict: ``segments``
        (header, counts by type, time range, symbols, index, compression),
        ``dirs`` (manifests, metadata), ``findings`` and ``total``.
        ``quick`` reads headers and manifests only. Files that cannot be
        opened are warned about (:class:`FloxlogWarning`)."""
        text, open_errors = self._t.inspect(bool(quick))
        _warn(open_errors, 2)
        return json.loads(text)

    def verify(self, strict: bool = False, skip_unknown: bool = False) -> dict[str, Any]:
        """Checks every segment in full, as ``floxlog verify`` does (CRCs,
        frames, blocks, index, header counts and time range, the Sorted
        claim, manifests) and returns the report ``floxlog verify --json``
        prints: ``ok``, ``errors``, ``warnings``, ``events``, ``bytes``,
        ``segments``, ``findings``.

        Raises :class:`FloxlogError` if the tape fails (an error finding,
        or with ``strict`` a warning): the first failing finding's kind,
        file and offset, with the whole report in ``e.report``.
        ``skip_unknown`` skips frames of record types 1.0 does not define."""
        text, err = self._t.verify(bool(strict), bool(skip_unknown))
        report = json.loads(text)
        if not report["ok"]:
            if err is None:  # pragma: no cover - verify always names a finding
                err = FloxlogError("verify failed", kind="input")
            err.report = report
            raise err
        return report


def _trades_to_numpy(table: pa.Table) -> np.ndarray:
    out = np.empty(table.num_rows, dtype=TRADE_DTYPE)
    raw = [n for n in TRADE_DTYPE.names if n not in ("exchange_ts", "recv_ts")]
    pos = 0
    for batch in table.to_batches():
        n = batch.num_rows
        if n == 0:
            continue
        sl = slice(pos, pos + n)
        for name in raw:
            out[name][sl] = batch.column(name).to_numpy(zero_copy_only=True)
        out["exchange_ts"][sl] = out["exchange_ts_ns"][sl].view("datetime64[ns]")
        out["recv_ts"][sl] = out["recv_ts_ns"][sl].view("datetime64[ns]")
        pos += n
    return out


def open(path: str | os.PathLike[str]) -> Tape:
    """Opens a tape: a tape directory (flox or spec layout, with or without
    ``manifest.json``), a directory of ``*.floxlog`` files, or one segment
    file. Raises :class:`FloxlogError` if it is none of these."""
    return Tape(_floxlog.open(os.fspath(path)))


def schema(type: str) -> pa.Schema:
    """The Arrow schema of a record type's table."""
    return _floxlog.schema(type)


# -- writing ----------------------------------------------------------------

_DERIVED = ("symbol", "exchange_ts", "recv_ts")


def _raw_fields(rtype: str) -> list[pa.Field]:
    """The columns a writer reads: the raw ones (not the timestamps,
    decimals or symbol names derived from them)."""
    return [
        f
        for f in schema(rtype)
        if f.name not in _DERIVED and not pa.types.is_decimal(f.type)
    ]


def _as_reader(data: Any) -> pa.RecordBatchReader:
    """Any tabular Arrow data as a ``pyarrow.RecordBatchReader``."""
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.Table):
        return pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(data.schema, [data])
    if isinstance(data, BatchStream):
        return data.to_reader()
    mod = type(data).__module__.split(".")[0]
    if mod == "pandas":
        return _as_reader(pa.Table.from_pandas(data, preserve_index=False))
    if hasattr(data, "__arrow_c_stream__"):
        return _reader_of(data)
    if hasattr(data, "__arrow_c_array__"):
        return _as_reader(pa.record_batch(data))
    if hasattr(data, "to_arrow"):  # polars without the PyCapsule interface
        return _as_reader(data.to_arrow())
    if isinstance(data, Mapping):
        return _as_reader(pa.table(dict(data)))
    raise TypeError(
        "data must be a pyarrow Table, RecordBatch or RecordBatchReader, a pandas or "
        "polars DataFrame, an object with __arrow_c_stream__, or a dict of columns; "
        f"not {type(data).__name__}"
    )


def _column_fn(names: Sequence[str], f: pa.Field, rtype: str) -> Any:
    """How to get raw column ``f`` out of a batch with columns ``names``, or
    ``None`` if it is optional and absent."""
    target = f.type
    if f.name in names:
        i = names.index(f.name)
        return lambda b: b.column(i).cast(target)
    if f.name.endswith("_ts_ns") and f.name[: -len("_ns")] in names:
        # exchange_ts (a timestamp) -> exchange_ts_ns (its UTC nanoseconds)
        i = names.index(f.name[: -len("_ns")])

        def from_timestamp(b: pa.RecordBatch) -> pa.Array:
            col = b.column(i)
            if pa.types.is_timestamp(col.type):
                col = col.cast(pa.timestamp("ns", tz=col.type.tz))
            return col.cast(pa.int64())

        return from_timestamp
    if rtype == "book" and f.name in ("kind", "header_type"):
        return None  # one of the two is enough; the writer checks
    raise _usage(
        f"{rtype} data has no column `{f.name}` (the raw columns are "
        + ", ".join(x.name for x in _raw_fields(rtype))
        + "; see floxlog.schema())"
    )


def _conform(reader: pa.RecordBatchReader, rtype: str) -> pa.RecordBatchReader:
    """The raw columns of ``rtype``, cast batch by batch to their exact
    types (unsafe casts, such as a negative value into an unsigned column,
    raise)."""
    names = list(reader.schema.names)
    plan = []
    for f in _raw_fields(rtype):
        fn = _column_fn(names, f, rtype)
        if fn is not None:
            plan.append((f, fn))
    if rtype == "book" and not any(f.name in ("kind", "header_type") for f, _ in plan):
        raise _usage("book data needs a `kind` column (snapshot/delta) or `header_type`")
    out_schema = pa.schema([pa.field(f.name, f.type, nullable=True) for f, _ in plan])

    def batches() -> Iterator[pa.RecordBatch]:
        for b in reader:
            yield pa.RecordBatch.from_arrays([fn(b) for _, fn in plan], schema=out_schema)

    return pa.RecordBatchReader.from_batches(out_schema, batches())


def _parts(data: Any, type: str | None) -> list[tuple[str, pa.RecordBatchReader]]:
    if isinstance(data, (list, tuple)) and data and all(
        isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) for p in data
    ):
        pairs = list(data)
    elif (
        isinstance(data, Mapping)
        and data
        and all(isinstance(k, str) and _known_type(k) for k in data)
    ):
        pairs = list(data.items())
    else:
        pairs = [(type, data)]
    if type is not None and len(pairs) > 1:
        raise _usage("type= is for one table; give (type, table) pairs for several")
    out = []
    for t, d in pairs:
        reader = _as_reader(d)
        if t is None:
            t = _floxlog.record_type_of(list(reader.schema.names))
            if t is None:
                raise _usage(
                    "cannot tell the record type from the columns "
                    f"{list(reader.schema.names)}: pass type= (trade, book, option_quote, pool_state)"
                )
        t = _floxlog.record_type_name(t)
        out.append((t, _conform(reader, t)))
    return out


def _known_type(name: str) -> bool:
    try:
        _floxlog.record_type_name(name)
        return True
    except FloxlogError:
        return False


def _metadata_json(metadata: Any) -> str | None:
    if metadata is None:
        return None
    if isinstance(metadata, str):
        return metadata
    if isinstance(metadata, Mapping) and metadata and all(
        isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in metadata
    ):
        # {symbol_id: name} -> flox's metadata.json
        metadata = {
            "symbols": [{"symbol_id": int(k), "name": str(v)} for k, v in sorted(metadata.items())]
        }
    return json.dumps(metadata)


def write(
    path: str | os.PathLike[str],
    data: Any,
    compression: str = "lz4",
    layout: str = "flox",
    profile: str = "reference",
    index_interval: int | None = None,
    max_segment_bytes: int | None = None,
    type: str | None = None,
    metadata: Mapping[Any, Any] | str | None = None,
    *,
    exchange_id: int = 0,
    created_ns: int | None = None,
    rotate_every: int | None = None,
    durability: str = "close",
    index: bool = True,
) -> dict[str, Any]:
    """Writes a new tape directory at ``path`` from Arrow data.

    ``data``: a ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader``,
    a :class:`BatchStream`, a pandas or polars DataFrame, anything with
    ``__arrow_c_stream__``, or a dict of columns; for several record types
    in one tape, a list of ``(type, data)`` pairs or a dict
    ``{type: data}`` (written one after the other; a time-ordered read
    merges them). Streams are written batch by batch (bounded memory).

    The record type is ``type`` or told from the columns (``trade_id``:
    trades, ``bids``: books, ``mark_price_raw``: option quotes,
    ``payload``: pool states). Only the raw columns are written (the names
    and types of :func:`schema` that are not timestamps, decimals or
    ``symbol``); each is cast to its exact type, and a value that does not
    fit raises. ``exchange_ts_ns``/``recv_ts_ns`` may instead be given as
    timestamp columns ``exchange_ts``/``recv_ts`` (naive ones are UTC).
    Books need ``kind`` (``"snapshot"``/``"delta"``) or ``header_type``.
    A table read from a tape writes back the same events.

    Settings as ``floxlog encode`` takes them: ``compression`` ``"lz4"`` or
    ``"none"``; ``layout`` ``"flox"`` or ``"spec"``; ``profile``
    ``"reference"`` (the flox writer's bytes) or ``"spec"``;
    ``index_interval`` (events between index entries, or per LZ4 block;
    default 1000); ``index=False`` writes no index; ``max_segment_bytes``
    (rotation; default 256 MiB); ``rotate_every`` (ns: also rotate when
    event time enters a new span); ``exchange_id``; ``created_ns`` (the
    first segment's, for reproducible bytes); ``durability`` (``"none"``,
    ``"flush"``, ``"block"``, ``"close"``, ``"every:N"``).

    ``metadata``: flox's ``metadata.json`` as a dict (or JSON text), e.g.
    ``{"symbols": [{"symbol_id": 1, "name": "BTCUSDT"}]}``; a dict
    ``{symbol_id: name}`` is turned into that. Symbol names make the
    ``symbol`` column and ``symbols=["BTCUSDT"]`` filters work.

    The tape is built under a hidden temporary name and moved into place
    when complete; ``path`` must not exist (or be an empty directory).
    Returns ``{"path", "events", "segments", "bytes"}``.
    """
    parts = _parts(data, type)
    events, segments, nbytes = _floxlog.write(
        os.fspath(path),
        parts,
        compression=compression,
        layout=layout,
        profile=profile,
        index_interval=index_interval,
        no_index=not index,
        max_segment_bytes=max_segment_bytes,
        rotate_every_ns=rotate_every,
        exchange_id=exchange_id,
        created_ns=created_ns,
        durability=durability,
        metadata=_metadata_json(metadata),
    )
    return {"path": os.fspath(path), "events": events, "segments": segments, "bytes": nbytes}
