"""The one interface every token estimator has, whatever its tier."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["TIERS", "Estimator"]

#: The three tiers, cheapest first: length times a constant, a script-aware formula, a real tokenizer.
TIERS = ("rough", "medium", "precise")


@runtime_checkable
class Estimator(Protocol):
    """Counts the tokens of a text.

    ``name`` identifies the estimator in results (e.g. ``medium``, ``tiktoken:cl100k_base``);
    ``tier`` is one of :data:`TIERS`; ``tokenizer`` is the tokenizer it is (precise) or
    approximates (rough, medium), e.g. ``cl100k_base`` or ``mistral:tekken_240911``.
    ``count`` never fails on a ``str``: empty text is 0 tokens, any other text at least 1.
    """

    name: str
    tier: str
    tokenizer: str

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        ...
