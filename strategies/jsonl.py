"""The reference strategy: aptmem's append-only JSONL log, exposed for the harness.

The implementation lives in :mod:`aptmem.jsonl_store` because it is the library's own design;
this module is its plug point, so every strategy is named ``strategies.<module>.<Class>``.
"""

from aptmem.jsonl_store import SYNC_POLICIES, JsonlStore

__all__ = ["JsonlStore", "SYNC_POLICIES"]
