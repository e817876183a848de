"""The one tier-spec parser (:mod:`aptmem.tokens.tiers`): what it accepts, what it refuses and how it says so."""

from __future__ import annotations

import subprocess
import sys

import pytest

from aptmem.errors import AptmemError, InvalidTierSpec
from aptmem.importers.usage import counter_spec
from aptmem.tokens.tiers import TierSpec, build_estimator, parse_tier_spec
from experiments.measurements.compaction.settings import CompactionSettings
from experiments.measurements.crash.settings import CrashSettings
from experiments.measurements.crash_explore.settings import CrashExploreSettings
from experiments.measurements.memory_quality.settings import MemoryQualitySettings
from experiments.measurements.tokens.settings import TokensSettings
from experiments.measurements.transcripts.settings import TranscriptsSettings


@pytest.mark.parametrize(("spec", "tier", "option"), [
    ("rough", "rough", "bytes"),
    ("rough:bytes", "rough", "bytes"),
    ("rough:chars", "rough", "chars"),
    ("medium", "medium", "auto"),
    ("medium:compiled", "medium", "compiled"),
    ("medium:python", "medium", "python"),
    ("precise", "precise", None),
    ("precise:cl100k_base", "precise", "cl100k_base"),
    ("precise:hf:/some/folder", "precise", "hf:/some/folder"),  # only the first ':' separates
])
def test_plain_specs(spec: str, tier: str, option: str | None) -> None:
    parsed = parse_tier_spec(spec)
    assert (parsed.text, parsed.tier, parsed.option, parsed.base) == (spec, tier, option, None)


def test_counter_specs_carry_their_base_tier() -> None:
    assert parse_tier_spec("anchored", counters=True) == TierSpec(text="anchored", tier="anchored")
    parsed = parse_tier_spec("model:precise:tekken", counters=True)
    assert parsed.tier == "model"
    assert parsed.base == TierSpec(text="precise:tekken", tier="precise", option="tekken")


@pytest.mark.parametrize(("spec", "counters", "reason"), [
    ("", False, "it is empty"),
    (" medium", False, "spaces around it"),
    ("meduim", False, "unknown tier 'meduim'"),
    ("rough:words", False, "rough counts bytes or chars, not 'words'"),
    ("medium:cl100k_base", False, "medium's option is when its kernel loads (auto, compiled, python)"),
    ("precise:", False, "nothing follows the ':'"),
    ("anchored", False, "anchored counts a provider's context"),
    ("model:anchored", True, "its base tier 'anchored' is not a plain tier"),
    ("anchored:rough:lines", True, "its base tier 'rough:lines' is not a plain tier (rough counts bytes or chars"),
    ("tiktoken", True, "unknown tier 'tiktoken'"),
])
def test_bad_specs_name_the_spec_and_the_reason(spec: str, counters: bool, reason: str) -> None:
    with pytest.raises(InvalidTierSpec) as caught:
        parse_tier_spec(spec, counters=counters)
    message = str(caught.value)
    assert message.startswith(f"invalid tier spec {spec!r}: ")
    assert reason in message
    assert "rough:bytes, rough:chars, medium" in message  # what would have been accepted
    assert ("anchored[:<tier>]" in message) == counters
    assert isinstance(caught.value, AptmemError) and isinstance(caught.value, ValueError)


def test_a_spec_that_is_not_text_is_refused() -> None:
    with pytest.raises(InvalidTierSpec, match="a tier spec is a string, not int"):
        parse_tier_spec(3)  # type: ignore[arg-type]


def test_build_estimator_builds_what_the_spec_names() -> None:
    assert build_estimator("rough").name == "rough:bytes/4"
    assert build_estimator("rough:chars").name == "rough:chars/4"
    assert build_estimator("medium").tier == "medium"
    assert [build_estimator(f"medium:{k}").kernel for k in ("auto", "compiled", "python")] == ["auto", "compiled", "python"]
    assert build_estimator(parse_tier_spec("precise:cl100k_base")).name == "tiktoken:cl100k_base"
    with pytest.raises(InvalidTierSpec, match="anchored is a counter, not an estimator"):
        build_estimator(parse_tier_spec("anchored", counters=True))


def test_usage_counters_and_harness_settings_use_the_one_parser() -> None:
    assert counter_spec("medium", "claude-code").name == build_estimator("medium").name
    assert counter_spec("anchored:rough", "claude-code").name.startswith("anchored(")
    with pytest.raises(InvalidTierSpec, match="invalid tier spec 'anchored:medium:x'"):
        counter_spec("anchored:medium:x", "claude-code")
    with pytest.raises(InvalidTierSpec, match="invalid tier spec 'rough:words'"):
        TokensSettings(estimators=["rough:words"])
    with pytest.raises(InvalidTierSpec, match="invalid tier spec 'precise:'"):
        CompactionSettings(tiers=["precise:"])
    with pytest.raises(InvalidTierSpec, match="invalid tier spec 'anchored'"):
        TranscriptsSettings(replay_tiers=["anchored"])  # a replay needs an estimator, not a counter
    for settings, field in ((CrashSettings, "estimator"), (CrashExploreSettings, "estimator"),
                            (MemoryQualitySettings, "tier")):
        with pytest.raises(InvalidTierSpec, match="invalid tier spec 'rough:lines'"):
            settings(**{field: "rough:lines"})
        assert getattr(settings(**{field: "rough:chars"}), field) == "rough:chars"  # any spec, not just a bare tier


def test_usage_check_refuses_a_bad_tier_before_reading(tmp_path) -> None:
    missing = tmp_path / "not-there"  # never read: the spec is checked first
    done = subprocess.run([sys.executable, "-m", "aptmem", "usage-check", str(missing), "--from", "pi",
                           "--tiers", "medium,rough:lines"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "invalid tier spec 'rough:lines': rough counts bytes or chars" in done.stderr
