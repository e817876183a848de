"""What one hostile case observed: the row the hostile table is made of, before its labels."""

from __future__ import annotations

import msgspec

__all__ = ["CaseResult"]


class CaseResult(msgspec.Struct, kw_only=True):
    """The outcome of trying one hostile case (also what a scenario child prints, as JSON)."""

    #: refused | accepted | reported | skipped | failed (the case itself broke)
    outcome: str
    #: the error a user saw, one line (None when accepted)
    error: str | None = None
    #: aptmem's own error, or one ``aptmem: ...`` line and no traceback
    clear: bool = True
    #: everything stored before the case is still there, loadable, and the victim unchanged
    intact: bool
    note: str = ""
    #: what a command printed on stdout (commands only; not part of the table)
    stdout: str = ""
