"""Plain JSON values: the check that a value will read back exactly as it was stored.

The working-memory sidecar stores caller-given values; a value its reader would refuse must be
refused *before* it is written, or one bad value would make the whole sidecar unreadable.
"""

from __future__ import annotations

import math
from typing import Any

from aptmem.errors import InvalidWorkingValue

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "check_json_value"]

#: Deeper nesting than this is refused (it also stops a value that contains itself).
MAX_DEPTH = 200
#: msgspec's JSON decoder reads integers of at most this many characters (a minus sign counts),
#: whatever ``sys.set_int_max_str_digits`` says; its encoder follows that setting. A process that
#: raised the setting could therefore write an integer no reader can read back.
MAX_INT_DIGITS = 4300
_INT_HIGH, _INT_LOW = 10**MAX_INT_DIGITS, -(10 ** (MAX_INT_DIGITS - 1))


def check_json_value(value: Any, where: str = "value", _depth: int = 0) -> None:
    """Raise :class:`InvalidWorkingValue` unless ``value`` is plain JSON that reads back equal.

    Plain JSON is ``dict`` (string keys), ``list``, ``str``, ``int`` (at most
    :data:`MAX_INT_DIGITS` characters), finite ``float``, ``bool`` and ``None``. Tuples, sets, bytes,
    datetimes and the like are refused rather than converted, because a converted value would
    come back as something else than what was stored.
    """
    if value is None or isinstance(value, (str, bool)):
        return
    if isinstance(value, int):
        if not _INT_LOW < value < _INT_HIGH:
            digits = int(value.bit_length() * math.log10(2)) + 1  # str() itself may refuse it
            sign = " and a sign" if value < 0 else ""
            raise InvalidWorkingValue(where, f"an integer of about {digits} digits{sign}: JSON readers here read back at "
                                             f"most {MAX_INT_DIGITS} characters (store it as a string)")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidWorkingValue(where, f"{value!r} is not a JSON number")
        return
    if _depth >= MAX_DEPTH:
        raise InvalidWorkingValue(where, f"nested deeper than {MAX_DEPTH} levels (or contains itself)")
    if type(value) is list:
        for index, item in enumerate(value):
            check_json_value(item, f"{where}[{index}]", _depth + 1)
        return
    if type(value) is dict:
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidWorkingValue(where, f"key {key!r} is a {type(key).__name__}; JSON object keys are strings")
            check_json_value(item, f"{where}[{key!r}]", _depth + 1)
        return
    hint = "; use a list" if isinstance(value, (tuple, set, frozenset)) else ""
    raise InvalidWorkingValue(
        where, f"a {type(value).__name__} is not a JSON value (use dict, list, str, int, float, bool or None){hint}"
    )
