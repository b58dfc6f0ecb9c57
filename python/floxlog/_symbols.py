"""Symbol names of a tape being written: the ``metadata=`` and
``symbols=`` arguments of :func:`floxlog.write`, validated, and the
``symbol`` column checked against them (or, when neither is given, the
names learnt from the ``symbol``/``symbol_id`` pairs of the data)."""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pyarrow as pa

from ._args import is_int, usage
from ._values import Col, is_text

MAX_ID = 2**32 - 1
_FORMS = (
    'expected {symbol_id: name}, {name: symbol_id}, flox\'s {"symbols": '
    '[{"symbol_id": 1, "name": "BTCUSDT"}, ...]} or its JSON text'
)


def _id(v: Any, where: str) -> int:
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v)
    if not is_int(v) or not 0 <= int(v) <= MAX_ID:
        raise usage(f"{where}: symbol id {v!r} is not an integer in 0..{MAX_ID}")
    return int(v)


def _name(v: Any, where: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise usage(f"{where}: symbol name {v!r} is not a non-empty string")
    return v


class Names:
    """Symbol id <-> name, one to one (names compared case-insensitively,
    as ``symbols=`` filters look them up)."""

    def __init__(self, extra: dict[str, Any] | None, given: bool) -> None:
        #: The metadata's other keys, kept as given.
        self.extra = extra or {}
        #: Whether names were given (else they are learnt from the data).
        self.given = given
        self.name_of: dict[int, str] = {}
        self.id_of_folded: dict[str, int] = {}

    def add(self, sid: int, name: str, where: str) -> str | None:
        """Adds a pair; returns why it conflicts (``None`` if it does not)."""
        old = self.name_of.get(sid)
        if old is not None and old != name:
            return f"symbol_id {sid} is {old!r} {where}"
        other = self.id_of_folded.get(name.casefold())
        if other is not None and other != sid:
            return f"{name!r} is symbol_id {other} {where}"
        self.name_of[sid] = name
        self.id_of_folded[name.casefold()] = sid
        return None

    def id_of(self, name: str) -> int | None:
        return self.id_of_folded.get(name.casefold())

    def metadata_json(self) -> str | None:
        if not self.name_of and not self.extra:
            return None
        md = dict(self.extra)
        if self.name_of:
            md["symbols"] = [{"symbol_id": i, "name": n} for i, n in sorted(self.name_of.items())]
        return json.dumps(md)


def parse(metadata: Any, symbols: Any) -> Names:
    """The names of ``metadata=`` and ``symbols=`` ({name: id}),
    validated: ids in 0..2^32-1, non-empty names, no id or name twice."""
    if isinstance(metadata, (str, bytes)):
        try:
            metadata = json.loads(metadata)
        except ValueError as e:
            raise usage(f"metadata is not JSON: {e}") from None
    pairs: list[tuple[int, str, str]] = []
    extra: dict[str, Any] = {}
    if metadata is None:
        pass
    elif not isinstance(metadata, Mapping):
        raise usage(f"metadata: {_FORMS}; not {type(metadata).__name__}")
    elif "symbols" in metadata:
        # flox's metadata.json (other keys kept as they are).
        extra = {str(k): v for k, v in metadata.items() if k != "symbols"}
        lst = metadata.get("symbols", [])
        if not isinstance(lst, list):
            raise usage(f"metadata: `symbols` must be a list; {_FORMS}")
        for i, e in enumerate(lst):
            if not isinstance(e, Mapping) or "symbol_id" not in e or "name" not in e:
                raise usage(f"metadata: symbols[{i}] needs `symbol_id` and `name`, not {e!r}")
            w = f"metadata symbols[{i}]"
            pairs.append((_id(e["symbol_id"], w), _name(e["name"], w), w))
    elif metadata and all(isinstance(k, str) and not k.strip().isdigit() for k in metadata):
        for k, v in metadata.items():  # {name: id}
            pairs.append((_id(v, "metadata"), _name(k, "metadata"), "metadata"))
    else:
        for k, v in metadata.items():  # {id: name}; "1" is id 1
            pairs.append((_id(k, "metadata"), _name(v, "metadata"), "metadata"))
    if symbols is not None:
        if not isinstance(symbols, Mapping):
            raise TypeError(f"symbols: expected a dict {{name: symbol_id}}, not {type(symbols).__name__}")
        for k, v in symbols.items():
            pairs.append((_id(v, "symbols"), _name(k, "symbols"), "symbols"))
    names = Names(extra, given=metadata is not None or symbols is not None)
    for sid, name, where in pairs:
        why = names.add(sid, name, "elsewhere")
        if why:
            raise usage(f"{where}: {name!r} as symbol_id {sid} conflicts: {why}")
    return names


def _entries(c: Col) -> tuple[list[str | None], np.ndarray, np.ndarray]:
    """The distinct names, each row's index into them, and the null rows."""
    arr = c.arr
    if not pa.types.is_dictionary(arr.type):
        if not is_text(arr.type):
            raise c.fail_type("symbol names (strings)")
        arr = arr.dictionary_encode()
    elif not is_text(arr.type.value_type):
        raise c.fail_type("symbol names (strings)")
    idx = arr.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    nulls = arr.is_null().to_numpy(zero_copy_only=False)
    return arr.dictionary.to_pylist(), idx, nulls


def ids_of_names(c: Col, names: Names) -> np.ndarray:
    """symbol_id of each row of a ``symbol`` column (no ``symbol_id``)."""
    c.no_nulls()
    entries, idx, _ = _entries(c)
    mapped = np.array([names.id_of(e) if e is not None else None for e in entries] or [0], dtype=object)
    unknown = np.array([m is None for m in mapped])
    if unknown.any():
        hint = "" if names.name_of else " (the write was given no names: pass metadata={id: name} or symbols={name: id})"
        c.fail_where(unknown[idx], f"is not a symbol name of the metadata{hint}")
    return mapped.astype(np.int64)[idx].astype(np.uint32)


def check_names(c: Col, ids: np.ndarray, names: Names) -> None:
    """A ``symbol`` column beside ``symbol_id``: each name must be the
    metadata's name of the row's id (nulls: no claim). Without names given,
    the pairs are learnt, one name per id and one id per name."""
    entries, idx, nulls = _entries(c)
    if names.given:
        mapped = np.array(
            [names.id_of(e) if e is not None else -1 for e in entries] or [-1], dtype=np.int64
        )
        m = mapped[idx]
        bad = ~nulls & ((m == -1) | (m != ids.astype(np.int64)))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            sid = int(ids[i])
            known = names.name_of.get(sid)
            said = f"the metadata names symbol_id {sid} {known!r}" if known else f"the metadata has no name for symbol_id {sid}"
            raise c.fail_at(i, f"disagrees with `symbol_id` {sid}: {said}")
        return
    key = np.where(nulls, -1, idx * (MAX_ID + 1) + ids.astype(np.int64))
    uniq, first = np.unique(key, return_index=True)
    order = np.argsort(first, kind="stable")  # in row order
    for k, i in zip(uniq[order].tolist(), first[order].tolist()):
        if k < 0:
            continue
        sid, name = int(ids[i]), entries[idx[i]]
        why = names.add(sid, name, "in an earlier row")
        if why:
            raise c.fail_at(i, f"disagrees with `symbol_id` {sid}: {why}")
