"""Token estimators named by a spec, ``tier[:option]``, as the run config names them.

``rough:bytes`` (UTF-8 bytes / 4), ``rough:chars`` (characters / 4), ``medium``, and
``precise:<tokenizer>`` (``precise:cl100k_base``, ``precise:tekken``, a local folder). The
tokens, compaction and fuzz measurements all read their tiers through here.
"""

from __future__ import annotations

from aptmem.tokens import Estimator, get_estimator

__all__ = ["build_estimator", "parse_spec"]


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split an estimator spec ``tier[:option]`` into (tier, option); raise ValueError if it names none."""
    tier, _, option = spec.partition(":")
    if tier not in ("rough", "medium", "precise"):
        raise ValueError(f"unknown estimator {spec!r}: use rough:bytes, rough:chars, medium or precise:<tokenizer>")
    if tier == "rough" and option not in ("", "bytes", "chars"):
        raise ValueError(f"unknown rough unit in {spec!r}: bytes or chars")
    if tier == "medium" and option:
        raise ValueError(f"medium takes no option: {spec!r}")
    return tier, option or None


def build_estimator(spec: str) -> Estimator:
    """The estimator a spec names: ``rough:bytes``, ``rough:chars``, ``medium``, ``precise:<tokenizer>``."""
    tier, option = parse_spec(spec)
    if tier == "rough":
        return get_estimator("rough", unit=option or "bytes")
    if tier == "medium":
        return get_estimator("medium")
    return get_estimator("precise", option)
