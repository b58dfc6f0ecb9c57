"""Tapes on object storage: ``storage_options`` (fsspec's keys) and globs
over ``s3://`` URLs. A URL is read in place by the native module
(``object_store``); this module only checks and forwards what Python
callers give."""

from __future__ import annotations

import fnmatch
import re
from typing import Any, Mapping, Union

from . import _args, _floxlog

#: Options as the native store takes them: (name, value) pairs, hashable so
#: that a frozen dataclass holds them.
Options = tuple[tuple[str, str], ...]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL (``s3://bucket/key``) rather than a path."""
    return bool(_URL.match(path))


def _text(name: str, v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (str, int)):
        return str(v)
    raise _args.usage(f"storage_options: {name}: expected str, int or bool, got {type(v).__name__}")


def options(storage_options: Union[Mapping[str, Any], None]) -> Union[Options, None]:
    """``storage_options`` checked: a mapping of fsspec's keys (``key``,
    ``secret``, ``token``, ``endpoint_url``, ``region``, ``anon``; fsspec's
    ``client_kwargs`` with ``endpoint_url``/``region_name`` too) or
    object_store's ``aws_*`` keys. Unknown keys are refused by the native
    store when the options are applied, naming the key, never a value."""
    if storage_options is None:
        return None
    if not isinstance(storage_options, Mapping):
        raise TypeError(f"storage_options: expected a dict, got {type(storage_options).__name__}")
    out: list[tuple[str, str]] = []
    for k, v in storage_options.items():
        if not isinstance(k, str):
            raise TypeError(f"storage_options: keys are str, got {type(k).__name__}")
        if k == "client_kwargs" and isinstance(v, Mapping):
            out.extend((str(ck), _text(f"client_kwargs.{ck}", cv)) for ck, cv in v.items())
        elif v is not None:
            out.append((k, _text(k, v)))
    return tuple(out)


def apply(path: str, opts: Union[Options, None]) -> None:
    """Gives ``path``'s bucket its options in this process (before any read
    of a URL: a worker process that unpickled a fragment has none yet).
    Nothing for a local path or no options."""
    if opts is not None and is_url(path):
        _floxlog.configure_store(path, list(opts))


def glob(url: str) -> list[str]:
    """The objects and prefixes a URL with wildcards in its last part
    matches (``s3://bucket/tapes/2024-04-*``), sorted: one listing."""
    parent, _, pattern = url.rstrip("/").rpartition("/")
    if any(c in parent for c in "*?[") or "://" not in parent:
        raise _args.usage(f"{url}: only the last part of a URL may hold wildcards")
    return sorted(
        f"{parent}/{name}" for name, _ in _floxlog.list_url(parent) if fnmatch.fnmatchcase(name, pattern)
    )
