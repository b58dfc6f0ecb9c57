"""``floxlog.write``: Arrow data (or any DataFrame) into a new tape.

The loop over the input runs here, in Python, handing converted batches
to the native writer one at a time: a conversion error or a Ctrl-C is
raised as it is (never wrapped), and the partial tape is removed."""

from __future__ import annotations

import os
from typing import Any, Iterator, Mapping

import pyarrow as pa

from . import _args, _convert, _floxlog, _symbols
from ._args import usage

_DERIVED = ("symbol", "exchange_ts", "recv_ts")

#: Rows handed to the native writer at a time (a Ctrl-C is seen between).
WRITE_ROWS = 65536


def _raw_fields(rtype: str) -> list[pa.Field]:
    """The columns a writer reads: the raw ones (not the timestamps,
    decimals or symbol names derived from them)."""
    return [
        f
        for f in _floxlog.schema(rtype)
        if f.name not in _DERIVED and not pa.types.is_decimal(f.type)
    ]


def _reader_of(stream: Any) -> pa.RecordBatchReader:
    from_stream = getattr(pa.RecordBatchReader, "from_stream", None)
    if from_stream is not None:
        return from_stream(stream)
    return pa.RecordBatchReader._import_from_c_capsule(stream.__arrow_c_stream__())


def _as_reader(data: Any) -> pa.RecordBatchReader:
    """Any tabular Arrow data as a ``pyarrow.RecordBatchReader``."""
    if isinstance(data, pa.RecordBatchReader):
        return data
    if isinstance(data, pa.Table):
        return pa.RecordBatchReader.from_batches(data.schema, data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return pa.RecordBatchReader.from_batches(data.schema, [data])
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


def _known_type(name: str) -> bool:
    try:
        _floxlog.record_type_name(name)
        return True
    except Exception:
        return False


def _type_of(columns: list[str]) -> str | None:
    t = _floxlog.record_type_of(columns)
    if t is None and "side" in columns and ("price" in columns or "price_raw" in columns):
        t = "trade"  # a human trade frame (no id column)
    return t


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
        raise usage("type= is for one table; give (type, table) pairs for several")
    out = []
    for t, d in pairs:
        reader = _as_reader(d)
        if t is None:
            t = _type_of(list(reader.schema.names))
            if t is None:
                raise usage(
                    "cannot tell the record type from the columns "
                    f"{list(reader.schema.names)}: pass type= (trade, book, option_quote, pool_state)"
                )
        out.append((_floxlog.record_type_name(t), reader))
    return out


def _raw_batches(plans: list[tuple[str, _convert.Plan, pa.RecordBatchReader]]) -> Iterator[tuple[str, pa.RecordBatch]]:
    for rtype, plan, reader in plans:
        for b in _convert.batches(plan, reader, WRITE_ROWS):
            yield rtype, b


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
    symbols: Mapping[str, int] | None = None,
    exchange_id: int = 0,
    created_ns: int | None = None,
    rotate_every: int | None = None,
    durability: str = "close",
    index: bool = True,
    resume: bool = False,
) -> dict[str, Any]:
    """Writes a new tape directory at ``path`` from Arrow data.

    ``data``: a ``pyarrow.Table``, ``RecordBatch`` or ``RecordBatchReader``,
    a :class:`BatchStream`, a pandas or polars DataFrame, anything with
    ``__arrow_c_stream__``, or a dict of columns; for several record types
    in one tape, a list of ``(type, data)`` pairs or a dict
    ``{type: data}``: their events are merged by ``exchange_ts_ns`` before
    writing, as sorted streams merge (each part keeps its own row order;
    equal times go in the order of the parts), so when each part is in time
    order, the tape is, and a time-ordered read returns exactly the merged
    order; the parts are held in memory for it. A single input is written batch by
    batch as it comes (bounded memory).

    The record type is ``type`` or told from the columns (the trade's id or
    ``side``: trades, ``bids``: books, ``mark_price_raw``: option quotes,
    ``payload``: pool states).

    Columns (names of :func:`schema`); each raw column may be given as
    itself or as its human twin:

    - ``exchange_ts_ns`` / ``recv_ts_ns``: integer nanoseconds, or a
      timestamp column of any unit and zone (converted from its unit;
      naive ones are UTC; a date is midnight UTC). Twins: ``exchange_ts``
      (or ``ts``) and ``recv_ts``, timestamps.
    - ``price_raw``, ``qty_raw``, the option ``*_raw`` columns: integer
      units of 1e-8. Twins ``price``, ``qty``, ...: decimals (exact; more
      than 8 decimal places is an error), floats (times 1e8, rounded to
      nearest, halves away from zero: the format's rule) or integers
      (whole units). A value that does not fit int64 is an error naming
      the column and row (the spec's rule clamps; a writer never stores a
      value it was not given).
    - ``symbol_id``; twin ``symbol``: names, mapped to ids through
      ``metadata`` / ``symbols``.
    - ``side``: 0 (buy) / 1 (sell), or the strings ``"buy"`` / ``"sell"``.
    - Books need ``kind`` (``"snapshot"``/``"delta"``) or ``header_type``.
    - Defaults, only these: ``recv_ts_ns`` = ``exchange_ts_ns``; 0 for the
      fields whose definition says 0 is unknown (the trade's id) and for
      ``instrument``; ``exchange_id`` = the ``exchange_id`` argument.

    Where a raw column and its twin are both given (a table read from a
    tape), they must agree row for row: an edited ``price`` beside a stale
    ``price_raw`` is an error naming the column and the first row that
    disagrees (drop one of the two). Every missing column is named in one
    error; every value that cannot be written raises :class:`InputError`
    (also a ``ValueError``) naming the column, the row (0-based over the
    whole input) and the value. Other columns are ignored.

    Settings as ``floxlog encode`` takes them: ``compression`` ``"lz4"`` or
    ``"none"``; ``layout`` ``"flox"`` or ``"spec"``; ``profile``
    ``"reference"`` (the flox writer's bytes) or ``"spec"``;
    ``index_interval`` (events between index entries, or per LZ4 block;
    1..65535, default 1000); ``index=False`` writes no index;
    ``max_segment_bytes`` (rotation; default 256 MiB); ``rotate_every``
    (ns: also rotate when event time enters a new span); ``exchange_id``
    (0..255); ``created_ns`` (the first segment's, for reproducible bytes);
    ``durability`` (``"none"``, ``"flush"``, ``"block"``, ``"close"``,
    ``"every:N"``).

    ``metadata``: the tape's symbol names, as ``{symbol_id: name}`` (keys
    may be ints or digit strings such as ``"1"``), ``{name: symbol_id}``,
    or flox's ``metadata.json`` as a dict or JSON text
    (``{"symbols": [{"symbol_id": 1, "name": "BTCUSDT"}], ...}``, other keys
    kept). ``symbols``: more names, ``{name: symbol_id}``. Ids must be in
    0..2^32-1, names non-empty, and no id or name may appear twice (names
    compare case-insensitively, as ``symbols=`` filters do). A ``symbol``
    column beside ``symbol_id`` must agree with them (nulls make no claim);
    given neither, the names of such a column become the metadata.

    The tape is built under a hidden temporary name and moved into place
    when complete; ``path`` must not exist (or be an empty directory). An
    error or ``KeyboardInterrupt`` leaves nothing behind.

    ``resume=True`` instead continues the tape at ``path`` (a recorder
    restarted after a crash keeps one tape), writing in place: segments a
    killed writer left open are recovered first (every complete event
    kept; the original kept as ``<name>.damaged`` when bytes are dropped),
    then the new events follow in new segments after the last one. A tape
    whose segment cannot be recovered, or of the other ``layout``, raises
    an error naming the file and offset; a missing or empty ``path`` starts
    a new tape. An error while writing leaves what was written, as a crash
    would: resume again (or ``floxlog recover``) finishes it.
    Returns ``{"path", "events", "segments", "bytes"}``.
    """
    index_interval = _args.opt_count(index_interval, "index_interval", hi=65535)
    max_segment_bytes = _args.opt_count(max_segment_bytes, "max_segment_bytes")
    rotate_every = _args.opt_count(rotate_every, "rotate_every")
    exchange_id = _args.count(exchange_id, "exchange_id", lo=0, hi=255)
    created_ns = _args.opt_count(created_ns, "created_ns", lo=0)
    compression = _args.choice(compression, "compression", ("lz4", "none"))
    layout = _args.choice(layout, "layout", ("flox", "spec"))
    profile = _args.choice(profile, "profile", ("reference", "spec"))
    index = _args.flag(index, "index")
    resume = _args.flag(resume, "resume")
    if not isinstance(durability, str):
        raise TypeError(f"durability: expected a string such as \"close\", not {durability.__class__.__name__}")
    if type is not None and not isinstance(type, str):
        raise TypeError(f"type: expected a record type name, not {type!r}")
    names = _symbols.parse(metadata, symbols)
    plans = []
    for rtype, reader in _parts(data, type):
        plan = _convert.Plan(rtype, _raw_fields(rtype), list(reader.schema.names), names, exchange_id)
        plans.append((rtype, plan, reader))
    w = _floxlog.NativeWriter(
        os.fspath(path),
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
        resume=resume,
    )
    try:
        if len(plans) == 1:
            for rtype, batch in _raw_batches(plans):
                w.append(rtype, batch)
        else:
            # Several record types: merged by exchange time here, so a
            # time-ordered read returns exactly this order.
            w.append_merged([(rtype, list(_convert.batches(plan, reader, WRITE_ROWS))) for rtype, plan, reader in plans])
        md = names.metadata_json()
        if md is not None:
            w.set_metadata(md)
        events, segments, nbytes = w.close()
    except BaseException:
        w.abandon()
        raise
    return {"path": os.fspath(path), "events": events, "segments": segments, "bytes": nbytes}


class Writer:
    """A tape written as data arrives: :meth:`append` tables or batches,
    then :meth:`close` (or use it as a context manager)::

        with floxlog.Writer("tape", journal=True, compression="none") as w:
            for batch in feed:
                w.append(batch)

    Settings as :func:`write` takes them, plus ``journal``: the tape
    writer's journal mode (uncompressed only, so ``compression`` defaults
    to ``"none"`` with it): segments are pre-allocated files mapped shared,
    each event is in them, visible to readers and safe from the process
    being killed, when ``append`` returns, and a background thread rotates
    segments. A journal tape is written in place at ``path`` (readers can
    follow it); an error or interrupt leaves what was appended there for
    ``floxlog recover``. Otherwise the tape is built under a hidden
    temporary name and moved into place by :meth:`close` (an error removes
    it).

    Each :meth:`append` takes what :func:`write` takes as ``data`` (the
    record type told from the columns, or ``type``) and returns the events
    it appended.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        journal: bool = False,
        compression: str | None = None,
        layout: str = "flox",
        profile: str = "reference",
        index_interval: int | None = None,
        max_segment_bytes: int | None = None,
        type: str | None = None,
        metadata: Mapping[Any, Any] | str | None = None,
        symbols: Mapping[str, int] | None = None,
        exchange_id: int = 0,
        created_ns: int | None = None,
        rotate_every: int | None = None,
        durability: str = "close",
        index: bool = True,
    ) -> None:
        journal = _args.flag(journal, "journal")
        if compression is None:
            compression = "none" if journal else "lz4"
        index_interval = _args.opt_count(index_interval, "index_interval", hi=65535)
        max_segment_bytes = _args.opt_count(max_segment_bytes, "max_segment_bytes")
        rotate_every = _args.opt_count(rotate_every, "rotate_every")
        self._exchange_id = _args.count(exchange_id, "exchange_id", lo=0, hi=255)
        created_ns = _args.opt_count(created_ns, "created_ns", lo=0)
        compression = _args.choice(compression, "compression", ("lz4", "none"))
        layout = _args.choice(layout, "layout", ("flox", "spec"))
        profile = _args.choice(profile, "profile", ("reference", "spec"))
        index = _args.flag(index, "index")
        if not isinstance(durability, str):
            raise TypeError(f"durability: expected a string such as \"close\", not {durability.__class__.__name__}")
        if type is not None and not isinstance(type, str):
            raise TypeError(f"type: expected a record type name, not {type!r}")
        self._type = type
        self._names = _symbols.parse(metadata, symbols)
        self._path = os.fspath(path)
        self._w: Any = _floxlog.NativeWriter(
            self._path,
            compression=compression,
            layout=layout,
            profile=profile,
            index_interval=index_interval,
            no_index=not index,
            max_segment_bytes=max_segment_bytes,
            rotate_every_ns=rotate_every,
            exchange_id=self._exchange_id,
            created_ns=created_ns,
            durability=durability,
            journal=journal,
        )

    def append(self, data: Any) -> int:
        """Appends every row of ``data``; returns how many events."""
        if self._w is None:
            raise usage("the writer is closed")
        plans = []
        for rtype, reader in _parts(data, self._type):
            plan = _convert.Plan(rtype, _raw_fields(rtype), list(reader.schema.names), self._names, self._exchange_id)
            plans.append((rtype, plan, reader))
        n = 0
        if len(plans) == 1:
            for rtype, batch in _raw_batches(plans):
                n += self._w.append(rtype, batch)
        else:
            n += self._w.append_merged([(rtype, list(_convert.batches(plan, reader, WRITE_ROWS))) for rtype, plan, reader in plans])
        return n

    def health(self) -> dict[str, Any]:
        """The writer's health, safe to call from another thread while
        appends go on (it waits at most for one batch): ``appended``,
        ``written`` (survive a kill), ``durable`` (survive a power loss),
        ``segments_closed``/``segments_open``, ``bytes_reserved`` and
        ``bytes_used``; for a journal, the background thread's
        ``background_queued``, ``background_lag_ns`` and
        ``background_wakeups``, ``last_rotation_ns``, ``last_error`` (and
        ``last_error_ns``), and the disk space: ``low_space`` (a segment
        ahead could not be reserved; appends go on into what is reserved),
        ``reservation_failures``, ``last_reservation_error`` (and ``_ns``).
        The same fields as the C ``floxlog_tape_writer_stats``."""
        if self._w is None:
            raise usage("the writer is closed")
        return self._w.health()

    def close(self) -> dict[str, Any]:
        """Finishes the tape; returns ``{"path", "events", "segments", "bytes"}``."""
        if self._w is None:
            raise usage("the writer is closed")
        w, self._w = self._w, None
        try:
            md = self._names.metadata_json()
            if md is not None:
                w.set_metadata(md)
            events, segments, nbytes = w.close()
        except BaseException:
            w.abandon()
            raise
        return {"path": self._path, "events": events, "segments": segments, "bytes": nbytes}

    def __enter__(self) -> "Writer":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._w is None:
            return
        if exc_type is None:
            self.close()
        else:
            w, self._w = self._w, None
            w.abandon()
