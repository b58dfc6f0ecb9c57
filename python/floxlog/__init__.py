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
quantities (``price``, ``qty``, ..., and book levels) as exact
``decimal128(38, 8)``, float64 or not at all (``prices="decimal"``,
``"float"``, ``"raw"``) and ``symbol``, the name the tape's
``metadata.json`` gives the ``symbol_id`` (dictionary encoded; null where
the tape names none).

Enumerations: trade ``side`` 0 = buy, 1 = sell (the aggressor); book
``kind`` ``"snapshot"`` (the whole book) or ``"delta"`` (levels to set; a
quantity of 0 removes the level), ``header_type`` the stored byte (0/1 in
flox's files, 2/3 in the spec profile); pool ``sub_type`` 1 descriptor, 2
checkpoint, 3 swap delta, 4 liquidity delta. ``instrument``, ``venue`` and
``exchange_id`` are the venue's codes, stored as given.

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

from . import _args, _floxlog, _prices, _storage
from ._numpy import SYMBOL_WIDTH, _trades_to_numpy, trade_dtype
from ._errors import FloxlogError, FloxlogWarning, UsageError

__all__ = [
    "FloxlogError",
    "FloxlogWarning",
    "UsageError",
    "Tape",
    "BatchStream",
    "Dataset",
    "Fragment",
    "dataset",
    "open",
    "write",
    "Writer",
    "follow",
    "Follow",
    "schema",
    "RECORD_TYPES",
    "TRADE_DTYPE",
    "trade_dtype",
    "SYMBOL_WIDTH",
    "__version__",
]

__version__: str = _floxlog.__version__

#: The record types, as the table names ``type=`` arguments take (plurals
#: and short forms such as ``"trades"``, ``"options"``, ``"pools"`` work too).
RECORD_TYPES = ("trade", "book", "option_quote", "pool_state")

#: Most samples :meth:`Tape.book_samples` makes in one call.
MAX_SAMPLES = 50_000_000

#: Default rows per record batch.
DEFAULT_ROWS = 65536

TimeLike = Union[int, str, _dt.datetime, _dt.date, np.datetime64, None]
SymbolsLike = Union[int, str, Iterable[Union[int, str]], None]

_usage = _args.usage


_time_arg = _args.time_arg


def _native_ns(t: int | str, what: str) -> int:
    """Nanoseconds of a checked time bound (ISO text parsed natively)."""
    return t if isinstance(t, int) else _floxlog.parse_time(t, what)

_symbols_arg = _args.symbols_arg


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
    a listing finding) are in :attr:`warnings` once the stream is :attr:`done`.
    A consumer that stops early (drops the reader) stops the thread.
    """

    __slots__ = ("_s", "type", "prices")

    def __init__(self, native: Any, type: str, prices: str = "decimal") -> None:
        self._s = native
        #: The record type (``"trade"``, ``"book"``, ...).
        self.type = type
        #: The ``prices=`` of the read (the native read converts them).
        self.prices = prices

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
        return _reader_of(self._s)

    def read_all(self) -> pa.Table:
        """Consume into a ``pyarrow.Table``."""
        return self.to_reader().read_all()

    def __iter__(self) -> Iterator[pa.RecordBatch]:
        return iter(self.to_reader())

    def __repr__(self) -> str:
        state = "done" if self.done else ("consumed" if self.consumed else "ready")
        return f"<floxlog.BatchStream {self.type} ({state})>"



def _read_options(
    type: str,
    start: TimeLike,
    end: TimeLike,
    symbols: SymbolsLike,
    order: str,
    strict: bool,
    rows: int,
    prices: str = "decimal",
) -> dict[str, Any]:
    """The native read's arguments, checked, by name (the native read
    converts the prices)."""
    prices = _prices.check(prices)
    return {
        "rtype": type,
        "start": _time_arg(start, "start"),
        "end": _time_arg(end, "end"),
        "symbols": _symbols_arg(symbols),
        "order": _args.choice(order, "order", ("time", "file")),
        "strict": _args.flag(strict, "strict"),
        "rows": rows,
        "prices": prices,
        "timestamps": "ns",
    }


class Tape:
    """A tape opened with :func:`open`.

    Every read lists the tape anew (segments a writer added since are read)
    and takes the same filters:

    - ``start``, ``end``: keep events with ``start <= exchange_ts_ns < end``.
      Nanoseconds since the epoch (int), an ISO-8601 string
      (``"2024-04-26T09:30:00Z"``, ``"2024-04-26"``; without an offset it is
      UTC), digits with a unit (``"1714123500s"``, ``"...ms"``, ``"...us"``,
      ``"...ns"``; digits alone are refused as ambiguous), a ``datetime`` (a
      naive one is taken as UTC), a ``date`` (midnight UTC), a
      ``numpy.datetime64`` or a ``pandas.Timestamp``. A time outside int64
      nanoseconds (1677..2262) is a ``ValueError``.
    - ``symbols``: a symbol id (int) or name (str) from the tape's
      ``metadata.json`` (case-insensitive), or a list of them; a name it
      does not know raises. ``None`` reads every symbol; an empty list
      reads none (an empty table).
    - ``order``: ``"time"`` (default: merged by exchange timestamp across
      segments, stable) or ``"file"`` (each segment in file order).
    - ``strict`` (``True``/``False`` only): the torn tail of a segment whose
      writer is still running (or died) is a warning
      (:class:`FloxlogWarning`) and its complete events are read; with
      ``strict=True`` it is an error.
    - ``prices``: ``"decimal"`` (default: exact ``decimal128(38, 8)``),
      ``"float"`` (float64, ``raw / 1e8`` rounded once: use this for pandas
      and numpy) or ``"raw"`` (only the integer ``*_raw`` columns). Book
      levels gain ``price``/``qty`` fields likewise.

    A bad argument raises ``TypeError`` or :class:`UsageError` (a
    ``ValueError``). Ctrl-C during a read raises ``KeyboardInterrupt``.

    A read that meets damage raises :class:`FloxlogError` (kind and byte
    offset as ``floxlog cat`` prints them) after reading everything it can
    (the other segments too); ``e.partial`` holds those events.
    """

    __slots__ = ("_t", "_storage")

    def __init__(self, native: Any, storage: Any = None) -> None:
        self._t = native
        # storage_options of a URL, kept to pickle with it.
        self._storage = storage

    @property
    def path(self) -> str:
        """The path given to :func:`open`."""
        return os.fspath(self._t.path)

    def __repr__(self) -> str:
        return f"floxlog.Tape({self.path!r})"

    def _repr_html_(self) -> str:
        """The summary and a small timeline (as ``floxlog report`` draws
        them) for notebooks; reads the tape once."""
        return self._t.card()

    def __fspath__(self) -> str:
        return self.path

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickles as its path (and storage_options): unpickling opens the
        # tape again (raising, naming the path, where it cannot be seen).
        return (_reopen, (self.path, self._storage))

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
        prices: str = "decimal",
    ) -> pa.Table:
        """Every event of one record type (``"trade"``, ``"book"``,
        ``"book_snapshot"``, ``"book_delta"``, ``"option_quote"``,
        ``"pool_state"``) as a ``pyarrow.Table``.

        Raises :class:`FloxlogError` (with ``e.partial``) as described in
        :class:`Tape`."""
        return self._read(_read_options(type, start, end, symbols, order, strict, DEFAULT_ROWS, prices), 2)

    def _read(self, options: dict[str, Any], stacklevel: int) -> pa.Table:
        stream, warns, errors = self._t.read(options)
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
        prices: str = "decimal",
    ) -> pa.Table:
        """Trades as a ``pyarrow.Table`` of :func:`floxlog.schema`
        ``("trade", prices)``: the trade record's raw fields in record order
        (timestamps in int64 ns, prices and quantities in int64 units of
        1e-8, ids and codes unsigned; ``side`` 0 buy, 1 sell), then
        ``symbol``, ``exchange_ts``, ``recv_ts``, ``price``, ``qty`` (as
        ``prices=`` says). Filters: see :class:`Tape`."""
        return self._read(_read_options("trade", start, end, symbols, order, strict, DEFAULT_ROWS, prices), 2)

    def books(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
        prices: str = "decimal",
    ) -> pa.Table:
        """Book snapshots and deltas as a ``pyarrow.Table``: ``kind``
        (``"snapshot"``: the whole book; ``"delta"``: levels to set, a
        quantity of 0 removes one), ``exchange_ts_ns``, ``recv_ts_ns``,
        ``seq`` (int64), ``symbol_id``, ``header_type`` (the stored byte),
        ``instrument``, ``exchange_id``, ``bids`` and ``asks`` (best first,
        ``list<struct<price_raw: int64, qty_raw: int64, price, qty>>``; no
        ``price``/``qty`` with ``prices="raw"``), ``symbol``,
        ``exchange_ts``, ``recv_ts``. ``read("book_snapshot")`` /
        ``read("book_delta")`` read one kind. Filters: see :class:`Tape`."""
        return self._read(_read_options("book", start, end, symbols, order, strict, DEFAULT_ROWS, prices), 2)

    def option_quotes(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
        prices: str = "decimal",
    ) -> pa.Table:
        """Option quotes as a ``pyarrow.Table``: the timestamps, eleven raw
        fixed-point columns (``mark_price_raw`` ... ``open_interest_raw``),
        ``symbol_id``, ``instrument``, ``exchange_id``, ``symbol``,
        ``exchange_ts``, ``recv_ts`` and the eleven decimals. Filters: see
        :class:`Tape`."""
        return self._read(_read_options("option_quote", start, end, symbols, order, strict, DEFAULT_ROWS, prices), 2)

    def pool_states(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
        prices: str = "decimal",
    ) -> pa.Table:
        """Pool states as a ``pyarrow.Table``: the timestamps, ``symbol_id``,
        ``sub_type``, ``venue``, ``exchange_id``, ``payload`` (binary, the
        venue's opaque bytes), ``symbol``, ``exchange_ts``, ``recv_ts``.
        Filters: see :class:`Tape`."""
        return self._read(_read_options("pool_state", start, end, symbols, order, strict, DEFAULT_ROWS, prices), 2)

    def trades_numpy(
        self,
        *,
        start: TimeLike = None,
        end: TimeLike = None,
        symbols: SymbolsLike = None,
        order: str = "time",
        strict: bool = False,
        prices: str = "decimal",
    ) -> np.ndarray:
        """Trades as a numpy structured array of ``trade_dtype(prices)``
        (:data:`TRADE_DTYPE` by default): the raw integer columns,
        ``exchange_ts`` and ``recv_ts`` as ``datetime64[ns]``, ``symbol``
        (numpy unicode, wide enough for the longest name; ``""`` where the
        tape names none), and unless ``prices="raw"`` ``price`` and
        ``qty`` (float64 for ``"float"``, ``Decimal`` objects for the default
        ``"decimal"``). On a failed read ``e.partial`` is such an array too."""
        prices = _prices.check(prices)
        try:
            table = self._read(_read_options("trade", start, end, symbols, order, strict, DEFAULT_ROWS, prices), 2)
        except FloxlogError as e:
            if isinstance(e.partial, pa.Table):
                e.partial = _trades_to_numpy(e.partial, prices)
            raise
        return _trades_to_numpy(table, prices)

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
        prices: str = "decimal",
    ) -> BatchStream:
        """A :class:`BatchStream` of record batches of at most ``rows`` rows
        of one record type, read on a background thread as the consumer
        asks (bounded memory). Filters: see :class:`Tape`; a bad filter or
        path raises here, damage met while reading ends the stream with an
        error. ``rows`` is a bound: memory grows with the rows actually
        read, whatever it is."""
        rows = _args.count(rows, "rows")
        prices = _prices.check(prices)
        native = self._t.stream(_read_options(type, start, end, symbols, order, strict, rows, prices))
        return BatchStream(native, _floxlog.record_type_name(type), prices)

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
        if syms is None or len(syms) != 1:
            raise _usage("symbol: give one symbol")
        t = _time_arg(at, "at")
        if t is None:
            raise _usage("at: a time is required")
        depth = _args.opt_count(depth, "depth", lo=0)
        sid, at_ns, last, bids, asks, warnings = self._t.book_at(syms[0], t, depth, _args.flag(strict, "strict"))
        _warn(warnings, 2)
        return {"symbol_id": sid, "at": at_ns, "last_event_ts": last, "bids": bids, "asks": asks}

    def book_samples(
        self,
        symbol: int | str,
        every: Any,
        start: TimeLike,
        end: TimeLike,
        depth: int | None = 10,
        *,
        strict: bool = False,
        prices: str = "decimal",
    ) -> pa.Table:
        """``symbol``'s order book sampled at ``start``, ``start + every``,
        ... while before ``end``, in one replay of the tape (as
        ``floxlog book --every``; each sample is the book after every book
        event stamped at or before its time). ``every``: int nanoseconds,
        ``"1s"``/``"250ms"``/..., a ``timedelta`` or ``numpy.timedelta64``;
        ``start``/``end``: times as the filters take them; ``depth``: levels
        a side (default 10, as the tool; ``None``: all).

        Returns a ``pyarrow.Table``, one row a sample: ``ts`` (int64 ns),
        ``time`` (``timestamp[ns, UTC]``), ``last_event_ts`` (int64 ns of the
        last book event applied; null before the first), ``bids``/``asks``
        (best first, levels as in :meth:`books`, with ``prices=``). At most
        :data:`MAX_SAMPLES` samples: more is a ``ValueError``. Damage
        raises :class:`FloxlogError`; the torn tail of an unfinished
        segment is a warning unless ``strict``."""
        syms = _symbols_arg(symbol)
        if syms is None or len(syms) != 1:
            raise _usage("symbol: give one symbol")
        step = _args.span(every, "every")
        t0, t1 = _time_arg(start, "start"), _time_arg(end, "end")
        if t0 is None or t1 is None:
            raise _usage("book_samples needs start and end")
        t0, t1 = _native_ns(t0, "start"), _native_ns(t1, "end")
        n = max(0, -(-(t1 - t0) // step))
        if n > MAX_SAMPLES:
            raise _usage(f"every={every!r} from start to end makes {n} samples; at most {MAX_SAMPLES}")
        depth = _args.opt_count(depth, "depth", lo=0)
        prices = _prices.check(prices)
        batch, warns = self._t.book_samples(syms[0], step, t0, t1, depth, _args.flag(strict, "strict"), prices)
        _warn(warns, 2)
        return pa.Table.from_batches([batch])

    # -- checks ----------------------------------------------------------

    def info(self, quick: bool = False) -> dict[str, Any]:
        """What ``floxlog inspect --json`` prints, as a dict: ``segments``
        (header, counts by type, time range, symbols, index, compression),
        ``dirs`` (manifests, metadata), ``findings`` and ``total``.
        ``quick`` reads headers and manifests only. Files that cannot be
        opened are warned about (:class:`FloxlogWarning`)."""
        text, open_errors = self._t.inspect(_args.flag(quick, "quick"))
        _warn(open_errors, 2)
        return json.loads(text)

    def gaps(self, min_gap: Any = "1s") -> pa.Table:
        """What ``floxlog gaps --json`` finds, one row a finding (see
        ``floxlog gaps --help`` for how each kind is judged): ``kind``
        (``quiet``, ``trade_id``, ``book_seq``, ``damage``), ``symbol_id``,
        ``symbol``, ``type``, ``from_ns``/``to_ns`` (exchange time) with
        ``from_recv_ns``/``to_recv_ns``, ``duration_ns``,
        ``first_missing``/``last_missing``, ``typical_ns``, ``file``,
        ``offset``, ``message``; null where a kind has no such value.
        ``min_gap``: a time span (int ns, ``"500ms"``, ``"1s"``, ``"5m"``,
        ``timedelta``)."""
        text = self._t.gaps(_args.span(min_gap, "min_gap"))
        rows = [json.loads(line) for line in text.splitlines()]
        return pa.Table.from_pylist(rows, schema=GAPS_SCHEMA)

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
        text, err = self._t.verify(_args.flag(strict, "strict"), _args.flag(skip_unknown, "skip_unknown"))
        report = json.loads(text)
        if not report["ok"]:
            if err is None:  # pragma: no cover - verify always names a finding
                err = FloxlogError("verify failed", kind="input")
            err.report = report
            raise err
        return report


#: The columns of :meth:`Tape.gaps`.
GAPS_SCHEMA = pa.schema(
    [
        ("kind", pa.string()),
        ("symbol_id", pa.uint32()),
        ("symbol", pa.string()),
        ("type", pa.string()),
        ("from_ns", pa.int64()),
        ("to_ns", pa.int64()),
        ("duration_ns", pa.int64()),
        ("from_recv_ns", pa.int64()),
        ("to_recv_ns", pa.int64()),
        ("first_missing", pa.uint64()),
        ("last_missing", pa.uint64()),
        ("typical_ns", pa.int64()),
        ("file", pa.string()),
        ("offset", pa.uint64()),
        ("message", pa.string()),
    ]
)

#: The dtype of :meth:`Tape.trades_numpy` with the default
#: ``prices="decimal"`` (see :func:`trade_dtype`).
TRADE_DTYPE = trade_dtype()


def open(path: str | os.PathLike[str], *, storage_options: Mapping[str, Any] | None = None) -> Tape:
    """Opens a tape: a tape directory (flox or spec layout, with or without
    ``manifest.json``), a directory of ``*.floxlog`` files, or one segment
    file. Raises :class:`FloxlogError` if it is none of these: a path that
    does not exist, or a file that is neither named as a segment
    (``*.floxlog``, ``<series>-NNNNNN.bin``) nor starts with the segment
    magic (kind ``"bad_magic"``). A file named as a segment opens whatever
    it holds; its reads report damage (with ``e.partial``).

    ``s3://bucket/prefix`` (a tape directory) or ``s3://bucket/key`` (a
    segment) is read in place; credentials and endpoint come from the AWS
    environment variables, or ``storage_options`` (fsspec's keys ``key``,
    ``secret``, ``token``, ``endpoint_url``, ``region``; see
    docs/object-storage.md), which the process keeps for that bucket."""
    p = os.fspath(path)
    opts = _storage.options(storage_options)
    if isinstance(p, str):
        _storage.apply(p, opts)
    return Tape(_floxlog.open(p), opts)


def _reopen(path: str, storage: Any = None) -> Tape:
    """A pickled :class:`Tape` opened again (``storage``: its checked
    ``storage_options``)."""
    _storage.apply(path, storage)
    return Tape(_floxlog.open(path), storage)


def schema(type: str, prices: str = "decimal") -> pa.Schema:
    """The Arrow schema of a record type's table, as a read with
    ``prices=`` gives it."""
    return _floxlog.schema(type, _prices.check(prices))


# -- writing ----------------------------------------------------------------

from ._write import Writer, _raw_fields, write  # noqa: E402  (needs BatchStream above)
from ._follow import Follow, follow  # noqa: E402
from ._dataset import Dataset, Fragment, dataset  # noqa: E402
