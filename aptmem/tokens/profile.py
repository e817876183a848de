"""Provider profiles: how a provider's count of a request relates to what a transcript holds.

A profile is data measured from real transcripts with usage (``aptmem usage-check SRC --from FMT
--calibrate-profile OUT``), never typed in. One file per agent format ships in
``aptmem/tokens/profiles/<name>.json``; anyone can rerun the command and diff the file.

What a profile holds, each figure measured against the precise tier it names (``reference``):

* ``ratio``: the provider's tokens per reference token of the text the transcript holds (its
  tokenizer differs: Claude's counts about 1.2x what cl100k_base counts);
* ``framing``: tokens per message the provider adds beyond its text (roles, block structure);
* ``fixed``: the fixed part of a request: system prompt and tool definitions, which a transcript
  does not hold, as seen at the first request of the calibration sessions (median);
* ``reattached``: what an agent sends after one of its compactions beyond the summary and the
  kept entries (files read again, hook output), median over the compactions seen (0 if none).

``calibration`` says how the figures were made: the command, the sessions, and the error each
held-out session shows with figures fitted on the others.
"""

from __future__ import annotations

import math
import os
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from aptmem.errors import InvalidProfile

__all__ = ["PROFILE_DIR", "ProviderProfile", "decode_profile", "encode_profile", "load_profile", "shipped_profiles"]

#: The folder of the shipped profiles, inside the package ``aptmem.tokens``.
PROFILE_DIR = "profiles"


class ProviderProfile(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """The measured relation of one provider's request counts to a transcript (see the module docstring)."""

    name: str
    #: the precise tokenizer ``ratio`` is relative to
    reference: str
    ratio: float
    framing: float
    fixed: int
    reattached: int = 0
    calibration: dict[str, Any] = {}


_encoder = msgspec.json.Encoder(order="deterministic")
_decoder = msgspec.json.Decoder(ProviderProfile)


def encode_profile(profile: ProviderProfile) -> bytes:
    """Encode a profile as indented JSON (reviewable in a diff), ending in a newline."""
    return msgspec.json.format(_encoder.encode(profile), indent=2) + b"\n"


def decode_profile(raw: bytes, where: str) -> ProviderProfile:
    """Decode and check a profile; a damaged or foreign file is :class:`InvalidProfile`."""
    remake = "remake it with: aptmem usage-check SRC --from FORMAT --calibrate-profile OUT"
    try:
        profile = _decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise InvalidProfile(where, f"not a provider profile ({exc}); {remake}") from None
    if not (math.isfinite(profile.ratio) and profile.ratio > 0):
        raise InvalidProfile(where, f"ratio must be a positive number, not {profile.ratio!r}; {remake}")
    if not (math.isfinite(profile.framing) and profile.framing >= 0) or profile.fixed < 0 or profile.reattached < 0:
        raise InvalidProfile(where, f"framing, fixed and reattached must be >= 0; {remake}")
    return profile


def shipped_profiles() -> list[str]:
    """The names of the profiles shipped with the package."""
    folder = resources.files("aptmem.tokens").joinpath(PROFILE_DIR)
    if not folder.is_dir():
        return []
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load_profile(name_or_path: str | os.PathLike[str]) -> ProviderProfile:
    """A shipped profile by name (``claude-code``, ``pi``) or a profile file by path."""
    text = os.fspath(name_or_path)
    if text.endswith(".json") or os.sep in text:
        try:
            raw = Path(text).read_bytes()
        except OSError as exc:
            raise InvalidProfile(text, f"cannot read it: {exc.strerror or exc}") from None
        return decode_profile(raw, text)
    where = f"aptmem/tokens/{PROFILE_DIR}/{text}.json"
    try:
        raw = resources.files("aptmem.tokens").joinpath(PROFILE_DIR, f"{text}.json").read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        known = ", ".join(shipped_profiles()) or "none"
        raise InvalidProfile(where, f"no shipped profile of that name (shipped: {known}); give a file, or make one "
                             "with: aptmem usage-check SRC --from FORMAT --calibrate-profile OUT") from None
    return decode_profile(raw, where)
