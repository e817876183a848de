"""Token estimation in three tiers, and token counts of session entries and contexts.

* ``rough``: length / 4 (UTF-8 bytes by default): :class:`RoughEstimator`.
* ``medium``: weighted character classes fitted to cl100k_base: :class:`MediumEstimator`.
* ``precise``: a real tokenizer, offline (tiktoken, or transformers with Mistral's Tekken or
  any local tokenizer): built by :func:`get_estimator`.

Typical use::

    from aptmem.tokens import ContextTally, get_estimator

    tally = ContextTally(get_estimator("medium"))
    tally.add(entry)          # counts only the new entry
    tally.total               # the live context, in tokens

Nothing here imports tiktoken or transformers until a precise tokenizer is asked for.
"""

from aptmem.tokens.base import TIERS, Estimator
from aptmem.tokens.factory import DEFAULT_TOKENIZER, canonical_tokenizer, get_estimator
from aptmem.tokens.medium import MediumEstimator
from aptmem.tokens.render import MESSAGE_OVERHEAD, count_entries, count_entry, message_count, render_entry, role_of
from aptmem.tokens.rough import RoughEstimator
from aptmem.tokens.tally import ContextTally

__all__ = [
    "DEFAULT_TOKENIZER",
    "MESSAGE_OVERHEAD",
    "TIERS",
    "ContextTally",
    "Estimator",
    "MediumEstimator",
    "RoughEstimator",
    "canonical_tokenizer",
    "count_entries",
    "count_entry",
    "get_estimator",
    "message_count",
    "render_entry",
    "role_of",
]
