"""The native half of floxlog (Rust, pyo3, stable ABI). Use the ``floxlog``
package instead: it normalises arguments, builds tables and raises."""

from os import PathLike
from typing import Any, Optional, Sequence, TypedDict, Union

import pyarrow as pa

from ._errors import FloxlogError

__version__: str

_Time = Union[int, str, None]

class _ReadArgs(TypedDict):
    """A read's arguments by name, every key given (values checked by the
    package); the native read converts ``prices``/``timestamps``."""

    rtype: str
    start: _Time
    end: _Time
    symbols: Optional[Sequence[str]]
    order: str  # "time" | "file"
    strict: bool
    rows: int
    prices: str  # "decimal" | "float" | "raw"
    timestamps: str  # "ns" | "us" | "ms"

class ArrowStream:
    """Record batches behind the Arrow PyCapsule interface, consumable once.

    Either batches decoded already (``NativeTape.read``) or a read that
    starts on a background thread when consumed (``NativeTape.stream``),
    handing batches over a channel of two slots (bounded memory); dropping
    the consumer stops the thread."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """An ``arrow_array_stream`` PyCapsule. ``requested_schema`` is
        ignored. A second call raises ``FloxlogError`` (kind ``usage``)."""
    def __arrow_c_schema__(self) -> Any:
        """An ``arrow_schema`` PyCapsule of the batches' schema."""
    @property
    def schema(self) -> pa.Schema:
        """The batches' schema."""
    @property
    def consumed(self) -> bool:
        """Whether ``__arrow_c_stream__`` was called."""
    @property
    def done(self) -> bool:
        """Whether the read finished (every batch sent, or it failed)."""
    @property
    def warnings(self) -> list[str]:
        """Warning texts of the read (complete once ``done``)."""
    @property
    def errors(self) -> list[FloxlogError]:
        """Errors of the read (complete once ``done``)."""

class NativeTape:
    """A tape path that lists as a tape. Every call lists it anew."""

    @property
    def path(self) -> PathLike[str]:
        """The path given to ``open``."""
    def book_at(
        self, symbol: str, at: _Time, depth: int | None = None, strict: bool = False
    ) -> tuple[int, int, int | None, list[tuple[int, int]], list[tuple[int, int]], list[str]]:
        """One symbol's book at a time, on a worker thread (Ctrl-C raises):
        ``(symbol_id, at, last_event_ts, bids, asks, warnings)``."""
    def read(self, args: _ReadArgs) -> tuple[ArrowStream, list[str], list[FloxlogError]]:
        """Reads one record type on a worker thread while polling for
        Ctrl-C (``KeyboardInterrupt`` raised as is). Returns the batches
        read (also those before an error), warning texts, and the errors as
        ``FloxlogError`` objects, not raised (the first is the one to raise;
        listing findings, files that would not open, segments that stopped
        early). Raises for a bad argument or a path that is not a tape."""
    def stream(self, args: _ReadArgs) -> ArrowStream:
        """A stream of batches of at most ``rows`` rows, read on a thread
        once consumed. Lists the tape and checks the arguments now."""
    def book_samples(
        self,
        symbol: str,
        every: int,
        start: int,
        end: int,
        depth: int | None = None,
        strict: bool = False,
        prices: str = "decimal",
    ) -> tuple[pa.RecordBatch, list[str]]:
        """One replay sampling the book (``floxlog book --every``):
        ``(batch, warnings)``, one row a sample (``ts``, ``time``,
        ``last_event_ts``, ``bids``, ``asks`` with ``prices`` converted; the
        symbol id in the schema's metadata)."""
    def inspect(self, quick: bool = False) -> tuple[str, list[str]]:
        """The text ``floxlog inspect --json`` prints, and the errors of
        files that could not be opened."""
    def gaps(self, min_gap_ns: int = 1_000_000_000) -> str:
        """The JSON Lines ``floxlog gaps --json`` prints."""
    def card(self) -> str:
        """The tape's summary and timeline as HTML."""
    def verify(
        self, strict: bool = False, skip_unknown: bool = False
    ) -> tuple[str, Optional[FloxlogError]]:
        """The text ``floxlog verify --json`` prints, and the first finding
        that fails the check as a ``FloxlogError`` (``None`` if it passes)."""

def open(path: Union[str, PathLike[str]]) -> NativeTape:
    """Lists the tape (directory of either layout, or segment file); raises
    ``FloxlogError`` if it is not one."""

def configure_store(url: Union[str, PathLike[str]], options: list[tuple[str, str]]) -> None:
    """The options of ``url``'s bucket's store in this process."""
    ...

def list_url(url: Union[str, PathLike[str]]) -> list[tuple[str, bool]]:
    """``(name, is_prefix)`` directly under a prefix URL."""
    ...

def store_stats() -> tuple[int, int]:
    """(requests, bytes) this process has sent to and received from object
    stores."""
    ...

def dataset_pieces(
    path: Union[str, PathLike[str]], args: _ReadArgs, range_bytes: int
) -> tuple[
    list[tuple[str, Optional[int], Optional[int], Optional[int], Optional[int], Optional[int]]],
    list[str],
    list[Exception],
]:
    """A tape's pieces for ``floxlog.dataset``: ``(segment, first byte,
    end byte, first_ts, last_ts, events)`` each, the listing's warnings and
    errors (not raised)."""

def read_dataset_piece(
    path: Union[str, PathLike[str]],
    segment: Union[str, PathLike[str]],
    at: Optional[int],
    until: Optional[int],
    args: _ReadArgs,
    range_bytes: int,
) -> tuple[ArrowStream, list[str], list[Exception], bool, int]:
    """Reads one piece: ``(stream, warnings, errors, ends_segment, rank)``."""

def schema(rtype: str, prices: Optional[str] = None, timestamps: str = "ns") -> pa.Schema:
    """The Arrow schema of a record type's table: as stored (raw book
    levels), or with ``prices`` (and ``timestamps``) as a read converts it."""

def float_prices(raw: pa.Array) -> pa.Array:
    """``raw / 1e8`` rounded once of an int64 array, as float64: the twin a
    read with ``prices="float"`` makes."""

def optional_fields(rtype: str) -> list[str]:
    """The raw fields of a record type whose definition says 0 means
    unknown (a writer may leave them out)."""

def record_type_name(rtype: str) -> str:
    """The table name of a record type given by any of its names; raises
    ``FloxlogError`` (kind ``usage``) for an unknown one."""

def record_type_of(columns: Sequence[str]) -> Optional[str]:
    """The record type whose raw columns these names carry, if exactly one."""

def parse_time(text: str, what: str) -> int:
    """Nanoseconds of an ISO-8601 time text; raises ``UsageError`` naming
    ``what``."""

class NativeWriter:
    """A tape being written under a temporary name beside ``path``; the
    Python loop hands it batches (so a conversion error or Ctrl-C raised in
    Python propagates as it is). ``abandon`` removes the partial tape."""

    def __init__(
        self,
        path: Union[str, PathLike[str]],
        *,
        compression: str = "lz4",
        layout: str = "flox",
        profile: str = "reference",
        index_interval: Optional[int] = None,
        no_index: bool = False,
        max_segment_bytes: Optional[int] = None,
        rotate_every_ns: Optional[int] = None,
        exchange_id: int = 0,
        created_ns: Optional[int] = None,
        durability: str = "close",
        metadata: Optional[str] = None,
        journal: bool = False,
    ) -> None: ...
    def append(self, rtype: str, batch: pa.RecordBatch) -> int:
        """Appends a batch of raw columns (exact types); checks for a
        pending signal first. Returns the rows written."""
    def append_merged(self, parts: Sequence[tuple[str, Sequence[pa.RecordBatch]]]) -> int:
        """Appends several record types merged by ``exchange_ts_ns`` (each
        part keeps its order; ties in part order)."""
    def set_metadata(self, metadata: str) -> None:
        """The tape's ``metadata.json`` (JSON text)."""
    def health(self) -> dict[str, Any]:
        """The writer's health (``TapeWriter::health``) by field name."""
    def close(self) -> tuple[int, int, int]:
        """Finishes and moves the tape into place: (events, segments, bytes)."""
    def abandon(self) -> None:
        """Removes the partial tape."""

class NativeFollow:
    """A live tape followed: batches of one record type as they arrive
    (``floxlog.follow`` wraps it)."""

    def __init__(
        self,
        path: Union[str, PathLike[str]],
        rtype: str,
        *,
        start: str = "beginning",
        position: Optional[bytes] = None,
        verify_crc: bool = True,
        wait: str = "blocking",
        rows: int = 65536,
        prices: str = "decimal",
    ) -> None: ...
    def next_batch(self, timeout: Optional[float] = None) -> tuple[str, Optional[pa.RecordBatch]]:
        """``("batch", batch)``, or ``(status, None)``: ``"timeout"``,
        ``"end"`` or ``"writer_gone"``."""
    def position(self) -> bytes:
        """The saved position (every series) after the last row read."""
