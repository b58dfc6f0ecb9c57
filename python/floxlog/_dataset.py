"""A dataset of tapes in fragments, for engines that read many pieces on
many workers: :func:`dataset` over one or many tapes, :class:`Fragment` s
that pickle and read anywhere the tapes' files are visible, and the routes
into Dask (:meth:`Dataset.to_dask`), Ray (:meth:`Dataset.to_ray`) and Spark
(:mod:`floxlog.spark`).

A fragment is a segment, or a byte range of a large segment cut where the
read engine proves a frame (or LZ4 block) boundary: the engine's one
splitter, which ``Tape`` reads on several threads use too. Reading a
fragment lists the tape again and cuts that one segment again, so a
fragment never starts at an offset taken on trust.

Read one by one in order and concatenated, the fragments of a one-tape
dataset give exactly ``Tape.read(type, order="file")`` with the same
filters; :meth:`Dataset.to_table` does that, with the same errors and
warnings. A fragment read alone raises :class:`FloxlogError` (kind, file,
offset) for damage in its range, after its events before the damage
(``e.partial``); the torn tail of an unfinished segment is a warning unless
``strict``.
"""

from __future__ import annotations

import builtins
import glob
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Sequence, Union

import pyarrow as pa

from . import _args, _floxlog, _prices, _storage, _timestamps
from ._errors import FloxlogError, FloxlogWarning

__all__ = ["Dataset", "Fragment", "dataset", "DEFAULT_FRAGMENT_BYTES"]

#: About how many bytes of a segment one fragment covers; a segment under
#: twice this is one fragment.
DEFAULT_FRAGMENT_BYTES = 64 << 20

#: Default rows per record batch.
DEFAULT_ROWS = 65536

PathsLike = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]


@dataclass(frozen=True)
class ReadSettings:
    """What every fragment of a dataset is read with."""

    type: str
    start: Union[int, str, None]
    end: Union[int, str, None]
    symbols: Union[tuple[str, ...], None]
    strict: bool
    prices: str
    timestamps: str
    fragment_bytes: int
    #: ``storage_options`` of the tapes on object storage (kept out of the
    #: repr: it holds secrets).
    storage: Union[_storage.Options, None] = field(default=None, repr=False)

    def native(self, rows: int = DEFAULT_ROWS) -> dict[str, Any]:
        """The arguments of the native read, by name (as a ``Tape`` read
        passes them; reads are in file order)."""
        return {
            "rtype": self.type,
            "start": self.start,
            "end": self.end,
            "symbols": None if self.symbols is None else list(self.symbols),
            "order": "file",
            "strict": self.strict,
            "rows": rows,
            "prices": self.prices,
            "timestamps": self.timestamps,
        }

    def schema(self) -> pa.Schema:
        """The schema of the tables read with these settings."""
        return _floxlog.schema(self.type, self.prices, self.timestamps)


def _warn(texts: Sequence[str], stacklevel: int) -> None:
    for w in texts:
        warnings.warn(w, FloxlogWarning, stacklevel=stacklevel + 1)


@dataclass(frozen=True)
class Fragment:
    """One piece of a :class:`Dataset`: a segment of a tape, or a byte range
    of one. It pickles (plain data, ``storage_options`` too) and reads in
    any process that sees the tape's files or reaches its object store.

    Attributes:
        tape: The tape's path (absolute).
        segment: The segment file's path; ``None`` for a fragment that only
            carries an error of the tape's listing (a missing segment...),
            which reading it raises.
        start_byte, end_byte: The byte range (frames or LZ4 blocks starting
            in it); ``None``: from the segment's first frame / to its end.
        first_ts, last_ts: Event time bounds (int ns) the segment's
            finished header claims, a bound for a range of it too; ``None``
            for an unfinished segment. Claims, not checked: for scheduling,
            not for filtering.
        events: Events of every type the finished header counts, for a
            whole-segment fragment; ``None`` otherwise.
        settings: The filters and conversions of the read.
    """

    tape: str
    segment: Union[str, None]
    start_byte: Union[int, None]
    end_byte: Union[int, None]
    first_ts: Union[int, None]
    last_ts: Union[int, None]
    events: Union[int, None]
    settings: ReadSettings
    #: A listing error to raise: (message, kind, path, offset, hint).
    error: Union[tuple[Any, ...], None] = None

    @property
    def type(self) -> str:
        """The record type read."""
        return self.settings.type

    def _read(self, rows: int) -> tuple[pa.Table, list[str], list[FloxlogError], bool, int]:
        """(table, warnings, errors, ends_segment, rank), nothing raised."""
        if self.error is not None:
            e = FloxlogError(*self.error)
            return self.settings.schema().empty_table(), [], [e], True, 0
        _storage.apply(self.tape, self.settings.storage)
        stream, warns, errors, ends, rank = _floxlog.read_dataset_piece(
            self.tape,
            self.segment,
            self.start_byte,
            self.end_byte,
            self.settings.native(rows),
            self.settings.fragment_bytes,
        )
        table = pa.RecordBatchReader.from_stream(stream).read_all()
        return table, warns, errors, ends, rank

    def to_table(self) -> pa.Table:
        """The fragment's events as a ``pyarrow.Table`` (the dataset's
        schema). Raises :class:`FloxlogError` for damage (``e.partial``:
        the events before it) or a file that cannot be opened (its path in
        ``e.path``); warns (:class:`FloxlogWarning`) as a ``Tape`` read."""
        table, warns, errors, _, _ = self._read(DEFAULT_ROWS)
        _warn(warns, 2)
        if errors:
            raise _raised(errors, table)
        return table

    def to_batches(self, rows: int = DEFAULT_ROWS) -> Iterator[pa.RecordBatch]:
        """The fragment's events as ``pyarrow.RecordBatch`` es of at most
        ``rows`` rows; an error is raised after the batches before it."""
        rows = _args.count(rows, "rows")
        table, warns, errors, _, _ = self._read(rows)
        for b in table.to_batches(max_chunksize=rows):
            yield b
        _warn(warns, 2)
        if errors:
            raise _raised(errors, None)

    def __repr__(self) -> str:
        if self.segment is None:
            return f"<floxlog.Fragment {self.tape} (listing error)>"
        lo = "start" if self.start_byte is None else self.start_byte
        hi = "end" if self.end_byte is None else self.end_byte
        return f"<floxlog.Fragment {self.segment} [{lo}, {hi}) {self.type}>"


def _raised(errors: list[FloxlogError], partial: Any) -> FloxlogError:
    e = errors[0]
    e.partial = partial
    e.errors = list(errors)
    return e


class Dataset:
    """One or many tapes read as one table of one record type, in
    fragments: see :func:`dataset`. Pickles (the paths and settings); each
    listing (:meth:`fragments`, :meth:`to_table`, ...) lists the tapes
    anew, as ``Tape`` reads do."""

    __slots__ = ("tapes", "settings")

    def __init__(self, tapes: Sequence[str], settings: ReadSettings) -> None:
        #: The tapes' paths (absolute), in order.
        self.tapes: tuple[str, ...] = tuple(tapes)
        #: The filters and conversions of every read.
        self.settings = settings

    @property
    def type(self) -> str:
        """The record type read."""
        return self.settings.type

    @property
    def schema(self) -> pa.Schema:
        """The schema of every table and batch read."""
        return self.settings.schema()

    def __repr__(self) -> str:
        return f"<floxlog.Dataset {self.type} of {len(self.tapes)} tape(s)>"

    def __getstate__(self) -> tuple[Any, ...]:
        return (self.tapes, self.settings)

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        self.tapes, self.settings = state

    def _list(self) -> tuple[list[Fragment], list[str]]:
        frags: list[Fragment] = []
        warns: list[str] = []
        for tape in self.tapes:
            _storage.apply(tape, self.settings.storage)
            pieces, w, errors = _floxlog.dataset_pieces(tape, self.settings.native(), self.settings.fragment_bytes)
            warns.extend(w)
            for e in errors:
                frags.append(
                    Fragment(tape, None, None, None, None, None, None, self.settings,
                             (e.message, e.kind, e.path, e.offset, e.hint))
                )
            for seg, lo, hi, first, last, events in pieces:
                frags.append(Fragment(tape, os.fspath(seg), lo, hi, first, last, events, self.settings))
        return frags, warns

    def fragments(self) -> list[Fragment]:
        """The fragments, tape by tape and in each in file order: first
        one per error of the tape's listing (a segment its manifest lists
        that is missing...), which raises when read, then the segments'
        ranges. Warnings of the listing are warned here. Raises for a
        tape that is gone or a symbol name a tape's metadata does not
        know."""
        frags, warns = self._list()
        _warn(warns, 2)
        return frags

    def to_table(self) -> pa.Table:
        """Every fragment read (on several threads) and concatenated: for
        one tape, what ``Tape.read(type, order="file")`` gives, with the
        same warnings and errors. A segment's fragments after one where a
        sequential read stops (damage) are dropped as that read never
        reaches them. Raises the first error after reading everything
        else, with ``e.partial`` (the table) and ``e.errors``."""
        frags, warns = self._list()
        workers = max(1, min(len(frags), os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            results = list(pool.map(lambda f: f._read(DEFAULT_ROWS), frags))
        tape_no = {t: i for i, t in enumerate(self.tapes)}
        tables: list[pa.Table] = []
        ranked: list[tuple[int, int, FloxlogError]] = []
        stopped: set[tuple[str, Any]] = set()
        for f, (table, w, errors, ends, rank) in zip(frags, results):
            key = (f.tape, f.segment)
            if f.segment is not None and key in stopped:
                continue
            if ends:
                stopped.add(key)
            tables.append(table)
            warns.extend(w)
            ranked.extend((tape_no[f.tape], rank, e) for e in errors)
        table = pa.concat_tables(tables) if tables else self.schema.empty_table()
        _warn(warns, 2)
        if ranked:
            ranked.sort(key=lambda r: (r[0], r[1]))
            raise _raised([e for _, _, e in ranked], table)
        return table

    def _columns(self, columns: Union[Sequence[str], None]) -> Union[list[str], None]:
        """An engine's ``columns=`` argument checked against the schema (a
        usage error names the unknown ones): the names, or ``None`` for
        all."""
        if columns is None:
            return None
        columns = list(columns)
        names = self.schema.names
        unknown = [c for c in columns if c not in names]
        if unknown:
            raise _args.usage(f"columns: {unknown} not in the {self.type} schema ({', '.join(names)})")
        return columns

    def to_dask(self, columns: Union[Sequence[str], None] = None) -> Any:
        """A ``dask.dataframe.DataFrame``, one partition per fragment
        (``dask.dataframe.from_map``; ``meta`` from the schema; columns
        projected when a computation needs fewer). The ``symbol`` column is
        plain text (each tape has its own names). A fragment's error fails
        the computation with it. Needs ``dask``."""
        from ._dask import to_dask

        return to_dask(self, columns)

    def to_ray(self, columns: Union[Sequence[str], None] = None) -> Any:
        """A ``ray.data.Dataset``, one read task per fragment (a
        ``ray.data.Datasource``; ``columns``: only these, and Ray's own
        projections, ``select_columns``..., are pushed into the read). The
        fragments are listed here, once. Tables are Arrow with the
        ``symbol`` column as plain text. A fragment's error fails the job
        with it. Needs ``ray[data]`` and a Ray cluster (``ray.init()``, or
        one Ray starts)."""
        from ._ray import to_ray

        return to_ray(self, columns)


def _expand(paths: PathsLike, storage: Union[_storage.Options, None] = None) -> list[str]:
    """Absolute paths (or URLs) of the tapes: each as given, or a glob's
    matches, sorted; each once."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    out: list[str] = []
    for p in paths:
        p = os.fspath(p)
        if not isinstance(p, str):
            raise TypeError(f"paths: expected str or os.PathLike, got {type(p).__name__}")
        if _storage.is_url(p):
            _storage.apply(p, storage)
            found = _storage.glob(p) if any(c in p for c in "*?[") else [p]
            if not found:
                raise FloxlogError(f"{p}: no object or prefix matches", kind="io", path=p)
            out.extend(found)
        elif any(c in p for c in "*?["):
            found = sorted(glob.glob(p))
            if not found:
                raise FloxlogError(f"{p}: no file or directory matches", kind="io", path=p)
            out.extend(found)
        else:
            out.append(p)
    seen: dict[str, None] = {}
    for p in out:
        seen.setdefault(p if _storage.is_url(p) else os.path.abspath(p), None)
    if not seen:
        raise _args.usage("paths: give at least one tape")
    return list(seen)


def dataset(
    paths: PathsLike,
    type: str = "trade",
    *,
    start: Any = None,
    end: Any = None,
    symbols: Any = None,
    strict: bool = False,
    prices: str = "decimal",
    timestamps: str = "ns",
    fragment_bytes: int = DEFAULT_FRAGMENT_BYTES,
    storage_options: Union[dict[str, Any], None] = None,
) -> Dataset:
    """A :class:`Dataset` of one record type over one or many tapes:
    ``paths`` is a tape directory, a segment file, a glob of either
    (``"data/2024-04-*"``), or a list of these; each is a tape of its own
    (symbol names from its own ``metadata.json``).

    Filters as :class:`floxlog.Tape` reads take them (``start``, ``end``,
    ``symbols``, ``strict``; reads are in file order), ``prices`` as there,
    ``timestamps``: ``"ns"`` (default), ``"us"`` or ``"ms"`` for the
    ``exchange_ts`` / ``recv_ts`` columns (floored; the ``*_ts_ns``
    integers stay exact). ``fragment_bytes``: segments larger than twice
    this are cut into fragments of about this size. Raises
    :class:`FloxlogError` for a path that is not a tape.

    ``s3://bucket/prefix`` URLs are read in place (a prefix is a tape
    directory; a glob's wildcards only in the last part), with credentials
    and endpoint from the AWS environment variables, or
    ``storage_options`` (fsspec's keys: ``key``, ``secret``, ``token``,
    ``endpoint_url``, ``region``), which fragments carry to workers."""
    if not isinstance(type, str):
        raise TypeError(f"type: expected str, got {builtins.type(type).__name__}")
    _floxlog.record_type_name(type)  # an unknown type raises here
    settings = ReadSettings(
        type=type,
        start=_args.time_arg(start, "start"),
        end=_args.time_arg(end, "end"),
        symbols=None if (s := _args.symbols_arg(symbols)) is None else tuple(s),
        strict=_args.flag(strict, "strict"),
        prices=_prices.check(prices),
        timestamps=_timestamps.check(timestamps),
        fragment_bytes=_args.count(fragment_bytes, "fragment_bytes", hi=2**62),
        storage=_storage.options(storage_options),
    )
    tapes = _expand(paths, settings.storage)
    for t in tapes:
        _floxlog.open(t)  # not a tape: raises here, naming it
    return Dataset(tapes, settings)


def _with(ds: Dataset, **changes: Any) -> Dataset:
    """The dataset with other settings (the engines' options)."""
    return Dataset(ds.tapes, replace(ds.settings, **changes))
