"""The ``prices=`` option of the reading calls: fixed-point columns as
exact decimals (``"decimal"``, the default), as float64 (``"float"``:
``raw / 1e8`` rounded once, what pandas and numpy want) or only as the raw
integers (``"raw"``). The native read converts them (``Conversion`` in
floxlog-arrow); here only the argument is checked."""

from __future__ import annotations

from . import _args

PRICES = ("decimal", "float", "raw")


def check(prices: object) -> str:
    return _args.choice(prices, "prices", PRICES)
