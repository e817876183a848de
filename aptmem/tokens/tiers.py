"""Tier specs: the one way a config or a command line names a token counter, ``tier[:option]``.

========================  ==========================================================================
``rough``, ``rough:bytes``  UTF-8 bytes / 4 (:class:`~aptmem.tokens.rough.RoughEstimator`)
``rough:chars``             characters / 4
``medium``                  the fitted character-class estimate; ``medium:compiled`` loads its compiled
                            kernel on the first count, ``medium:python`` never (``medium`` alone:
                            once the process has counted long enough for it to pay; same counts)
``precise``                 a real tokenizer: ``precise:<tokenizer>`` names it (``precise:cl100k_base``,
                            ``precise:tekken``, ``precise:hf:/a/folder``: any name
                            :func:`~aptmem.tokens.get_estimator` takes); ``precise`` alone is cl100k_base
``model[:<tier>]``          the provider-side context model (:mod:`aptmem.tokens.context_model`), its
                            entries counted by ``<tier>`` (one of the three above; default the
                            profile's reference tokenizer)
``anchored[:<tier>]``       the latest reported usage plus the model's count of what came after it
========================  ==========================================================================

``model`` and ``anchored`` need a provider profile and a session's reported usage, so they are
accepted only where the caller says so (``counters=True``: ``aptmem usage-check``, the transcripts
measurement); everywhere else a spec names a plain estimator. Parsing never loads a tokenizer: a
spec is checked when a config loads, and :func:`build_estimator` loads what it names later.
"""

from __future__ import annotations

import msgspec

from aptmem.errors import InvalidTierSpec
from aptmem.tokens.base import TIERS, Estimator
from aptmem.tokens.factory import get_estimator
from aptmem.tokens.medium import KERNELS

__all__ = ["COUNTER_TIERS", "ROUGH_UNITS", "TierSpec", "build_estimator", "parse_tier_spec"]

#: Tiers that count what the provider counts, on top of a plain tier.
COUNTER_TIERS = ("model", "anchored")
#: What ``rough`` divides by four.
ROUGH_UNITS = ("bytes", "chars")

_ESTIMATOR_SPELLINGS = "rough:bytes, rough:chars, medium[:compiled|python] or precise:<tokenizer>"
_COUNTER_SPELLINGS = ("rough:bytes, rough:chars, medium[:compiled|python], precise:<tokenizer>, model[:<tier>] "
                      "or anchored[:<tier>]")


class TierSpec(msgspec.Struct, frozen=True, kw_only=True):
    """A parsed tier spec: the tier, its option, and for ``model`` / ``anchored`` the tier they count with."""

    #: the spec as written
    text: str
    #: rough | medium | precise | model | anchored
    tier: str
    #: rough: its unit (bytes or chars, always set); medium: when its kernel loads (auto, compiled or python,
    #: always set); precise: the tokenizer (None = the default one)
    option: str | None = None
    #: model / anchored: the plain tier counting the entries (None = the profile's reference tokenizer)
    base: TierSpec | None = None


def parse_tier_spec(spec: str, *, counters: bool = False) -> TierSpec:
    """Parse ``tier[:option]``; raise :class:`~aptmem.errors.InvalidTierSpec` naming the spec and the reason.

    ``counters`` also accepts ``model[:<tier>]`` and ``anchored[:<tier>]``.
    """
    allowed = _COUNTER_SPELLINGS if counters else _ESTIMATOR_SPELLINGS
    if not isinstance(spec, str):
        raise InvalidTierSpec(spec, f"a tier spec is a string, not {type(spec).__name__}", allowed)
    if not spec:
        raise InvalidTierSpec(spec, "it is empty", allowed)
    if spec != spec.strip():
        raise InvalidTierSpec(spec, "it has spaces around it", allowed)
    tier, colon, option = spec.partition(":")
    if colon and not option:
        raise InvalidTierSpec(spec, f"nothing follows the ':' (write {tier} alone for its default)", allowed)
    if tier in COUNTER_TIERS:
        if not counters:
            raise InvalidTierSpec(spec, f"{tier} counts a provider's context from its reported usage and profile, "
                                        "which this setting has not", allowed)
        if not option:
            return TierSpec(text=spec, tier=tier)
        try:
            base = parse_tier_spec(option)
        except InvalidTierSpec as exc:
            raise InvalidTierSpec(spec, f"its base tier {option!r} is not a plain tier ({exc.reason})", allowed) from None
        return TierSpec(text=spec, tier=tier, base=base)
    if tier not in TIERS:
        raise InvalidTierSpec(spec, f"unknown tier {tier!r}", allowed)
    if tier == "rough":
        if option and option not in ROUGH_UNITS:
            raise InvalidTierSpec(spec, f"rough counts {' or '.join(ROUGH_UNITS)}, not {option!r}", allowed)
        return TierSpec(text=spec, tier=tier, option=option or "bytes")
    if tier == "medium":
        if option and option not in KERNELS:
            raise InvalidTierSpec(spec, f"medium's option is when its kernel loads ({', '.join(KERNELS)}), "
                                        f"not {option!r}", allowed)
        return TierSpec(text=spec, tier=tier, option=option or "auto")
    return TierSpec(text=spec, tier=tier, option=option or None)


def build_estimator(spec: str | TierSpec) -> Estimator:
    """The estimator a plain tier spec names (parsed first when given as text).

    Raises :class:`~aptmem.errors.InvalidTierSpec` for a bad spec or a ``model`` / ``anchored`` one
    (those are counters, built by :func:`aptmem.importers.usage.counter_spec`), and
    :class:`~aptmem.errors.TokenizerUnavailable` for a tokenizer that cannot be loaded offline.
    """
    parsed = parse_tier_spec(spec) if isinstance(spec, str) else spec
    if parsed.tier in COUNTER_TIERS:
        raise InvalidTierSpec(parsed.text, f"{parsed.tier} is a counter, not an estimator", _ESTIMATOR_SPELLINGS)
    if parsed.tier == "rough":
        return get_estimator("rough", unit=parsed.option)
    if parsed.tier == "medium":
        return get_estimator("medium", kernel=parsed.option or "auto")
    return get_estimator("precise", parsed.option)
