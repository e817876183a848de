"""What only the firmware workload generator (``memory_quality.workload.generator=firmware``) writes: its minified
JSON OTA manifest and its twelve tool formats. The checks every day-world generator passes are in
``test_day_worlds.py``.
"""

from __future__ import annotations

import json

import pytest

from aptmem.entries import ToolResult
from experiments.measurements.memory_quality.firmware import build_firmware
from experiments.measurements.memory_quality.firmware_filler import TOOL_FORMATS
from experiments.measurements.memory_quality.firmware_text import AGGREGATES, KINDS
from experiments.measurements.memory_quality.workload import WorkloadShape

SEEDS = (13, 200, 4242)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_ota_manifest_is_minified_json_with_its_planted_members(seed: int) -> None:
    """The OTA manifest is one line of JSON that parses, and a digest planted in it is a member under its board."""
    workload = build_firmware(WorkloadShape(), seed)
    manifests = {e.id: e.content for s in workload.sessions for e in s
                 if isinstance(e, ToolResult) and e.content.startswith('{"ota":')}
    assert manifests, f"seed {seed}: no manifest was read"
    for content in manifests.values():
        assert "\n" not in content, "a manifest is minified"
        json.loads(content)
    for item in (i for i in workload.items if i.type == "fact" and i.format == "json"):
        members = [json.loads(manifests[e]) for e in item.evidence if e in manifests]
        assert any(m["ota"].get(item.subject, {}).get("digest") == item.answers[0] for m in members), item.id


def test_the_tool_formats_are_the_firmware_teams() -> None:
    """Every format a kind is said in by a tool is one the filler writes, and the kinds use at least ten of the twelve."""
    used = {fmt for kind in KINDS for carrier, fmt, _ in kind.said if carrier == "tool"}
    used |= {fmt for spec in AGGREGATES for carrier, fmt, _ in spec[2] if carrier == "tool"}
    assert used <= set(TOOL_FORMATS) and len(used) >= 10, sorted(used)
