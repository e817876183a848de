"""What only the game-studio workload generator (``memory_quality.workload.generator=gamestudio``) writes: its
minified JSON asset manifest. The checks every day-world generator passes are in ``test_day_worlds.py``.
"""

from __future__ import annotations

import json

import pytest

from aptmem.entries import ToolResult
from experiments.measurements.memory_quality.gamestudio import build_gamestudio
from experiments.measurements.memory_quality.workload import WorkloadShape

SEEDS = (13, 200, 4242)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_manifest_is_minified_json_with_its_planted_members(seed: int) -> None:
    """The asset manifest is one line of JSON that parses, and a title id planted in it is a member under its title."""
    workload = build_gamestudio(WorkloadShape(), seed)
    manifests = {e.id: e.content for s in workload.sessions for e in s
                 if isinstance(e, ToolResult) and e.content.startswith('{"manifest":')}
    assert manifests, f"seed {seed}: no manifest was read"
    for content in manifests.values():
        assert "\n" not in content, "a manifest is minified"
        json.loads(content)
    for item in (i for i in workload.items if i.type == "fact" and i.format == "json"):
        members = [json.loads(manifests[e]) for e in item.evidence if e in manifests]
        assert any(m["manifest"].get(item.subject, {}).get("title_id") == item.answers[0] for m in members), item.id
