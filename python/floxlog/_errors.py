"""The exception and warning classes of floxlog."""

from __future__ import annotations

from typing import Any


class FloxlogError(Exception):
    """A tape operation failed.

    ``str(e)`` is the text the ``floxlog`` command-line tool prints for the
    same failure (file, byte offset, what went wrong and a hint).

    Attributes:
        kind: What failed. For damaged data, the conformance corpus's error
            kind (``"crc_mismatch"``, ``"truncated"``, ``"bad_magic"``, ...);
            for a tape listing problem, the finding's kind
            (``"missing_segment"``, ...); otherwise ``"io"`` (the operating
            system refused), ``"manifest"`` (an unreadable manifest),
            ``"input"`` (not a tape, bad input data) or ``"usage"``
            (arguments that cannot work).
        path: The file concerned, or ``None``.
        offset: The byte offset in that file, or ``None``.
        hint: What to do about it, or ``None``.
        partial: For a read that failed after some events: every event read
            before the failure (a ``pyarrow.Table``, or a numpy array for
            ``Tape.trades_numpy``); ``None`` otherwise.
        errors: Every error the read met, this one first (several when
            more than one segment is damaged or missing).
        report: For ``Tape.verify``: the whole report (a dict).
    """

    def __init__(
        self,
        message: str,
        kind: str = "input",
        path: str | None = None,
        offset: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.path = path
        self.offset = offset
        self.hint = hint
        self.partial: Any = None
        self.report: dict[str, Any] | None = None
        self._others: list[FloxlogError] = []

    @property
    def errors(self) -> list[FloxlogError]:
        """Every error the read met, this one first."""
        return [self, *self._others]

    @errors.setter
    def errors(self, v: list[FloxlogError]) -> None:
        self._others = [e for e in v if e is not self]

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.kind, self.path, self.offset, self.hint))

    def __repr__(self) -> str:
        return (
            f"FloxlogError(kind={self.kind!r}, path={self.path!r}, "
            f"offset={self.offset!r}, message={self.message!r})"
        )


class UsageError(FloxlogError, ValueError):
    """A ``FloxlogError`` of kind ``"usage"`` (an argument that cannot
    work: a size out of range, an unknown option, a bad time). It is also a
    ``ValueError``, so ``except ValueError`` catches bad arguments."""


class InputError(FloxlogError, ValueError):
    """A value of the data given to :func:`floxlog.write` that cannot be
    written as it is (kind ``"input"``; also a ``ValueError``). The message
    names the record type, the column, the row (0-based, counted over the
    whole input) and the value; so do the attributes ``column``, ``row``
    and ``value`` (``None`` when the error is about a whole column)."""

    def __init__(
        self,
        message: str,
        kind: str = "input",
        path: str | None = None,
        offset: int | None = None,
        hint: str | None = None,
        column: str | None = None,
        row: int | None = None,
        value: Any = None,
    ) -> None:
        super().__init__(message, kind, path, offset, hint)
        self.column = column
        self.row = row
        self.value = value


class FloxlogWarning(UserWarning):
    """A read went on past something the ``floxlog`` tool warns about: the
    torn tail of a segment whose writer is still running (or died), a
    segment missing from the manifest. ``strict=True`` makes torn tails errors;
    ``warnings.simplefilter("error", floxlog.FloxlogWarning)`` makes every
    warning one."""
