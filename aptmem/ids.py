"""Session ids and the paths built from them.

A session id is a canonical lowercase UUID version 4 (``xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx``).
It is checked against that exact ASCII shape before any path is built from it, so traversal
(``../``), absolute paths, NUL bytes, look-alike unicode digits or dashes, upper case and other
UUID versions never reach the file system.
"""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

from aptmem.errors import InvalidSessionId

__all__ = ["new_session_id", "validate_session_id", "session_path", "is_session_id"]

# re.ASCII so that \d and friends cannot match look-alike digits; the classes are explicit anyway.
_UUID4 = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.ASCII)


def new_session_id() -> str:
    """Return a fresh random session id (canonical lowercase UUID v4)."""
    return str(uuid.uuid4())


def is_session_id(value: object) -> bool:
    """Tell whether ``value`` is a canonical lowercase UUID v4 string."""
    return isinstance(value, str) and _UUID4.fullmatch(value) is not None


def validate_session_id(value: object) -> str:
    """Return ``value`` if it is a canonical session id, else raise :class:`InvalidSessionId`.

    The reason names what is wrong, so a user sees why ``../../etc/passwd`` or an upper-case
    UUID is refused.
    """
    if not isinstance(value, str):
        raise InvalidSessionId(value, f"must be a string, not {type(value).__name__}")
    if _UUID4.fullmatch(value):
        return value
    raise InvalidSessionId(value, _why_not(value))


def _why_not(value: str) -> str:
    """Explain why a string is not a canonical UUID v4."""
    if "\x00" in value:
        return "contains a NUL byte"
    if "/" in value or "\\" in value or value.startswith(".") or os.sep in value:
        return "looks like a path; a session id is a UUID v4, never a path"
    if not value.isascii():
        return "contains non-ASCII characters (look-alike digits or dashes are not accepted)"
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        return "not a UUID (expected xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx, lowercase hex)"
    if parsed.int == 0:
        return "the nil UUID, not a random (version 4) one"
    if parsed.version != 4 or parsed.variant != uuid.RFC_4122:
        kind = f"a UUID of version {parsed.version}" if parsed.version else f"a UUID of variant {parsed.variant!r}"
        return f"{kind}, not version 4"
    return f"not in canonical form (expected {parsed})"


def session_path(root: str | os.PathLike[str], session_id: str, suffix: str) -> Path:
    """Build the path of a session's file under ``root``, only after the id passed validation.

    ``suffix`` is a fixed string of this library (``.jsonl``, ``.meta.json``, ...), never user input.
    """
    return Path(root) / (validate_session_id(session_id) + suffix)
