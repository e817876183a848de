"""The keep rule for sessions with few user turns: the last N turns or at least K recent tokens, cut inside a
turn where whole turns do not fit, never between a tool call and its result."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.compaction.keep import cut_points, recent_start
from aptmem.compaction.planner import plan_compaction
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.turns import split_tool_pairs
from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User
from aptmem.importers import import_session

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"


def count_entry(entry: Entry) -> int:
    """A stand-in tokenizer: one token per 4 characters of the entry's text, plus 4 of framing."""
    text = getattr(entry, "content", None) or getattr(entry, "summary", None) or ""
    return (len(text) + 3) // 4 + 4


def one_long_turn(calls: int, tool_chars: int = 4000) -> list[Entry]:
    """One user request answered by ``calls`` tool calls: what a Claude Code session's turn looks like."""
    out: list[Entry] = [User(content="fix the failing tests in the parser", ts=0, id="u0")]
    for c in range(calls):
        out.append(Assistant(content=f"step {c}: reading the next file", ts=c, id=f"a{c}"))
        out.append(ToolCall(name="read", args={"path": f"src/f{c}.py"}, ts=c, id=f"c{c}"))
        out.append(ToolResult(call_id=f"c{c}", content=f"{c} " + "y" * tool_chars, ts=c, id=f"r{c}"))
    return out


def plan(entries: list[Entry], policy: CompactionPolicy):  # type: ignore[no-untyped-def]
    return plan_compaction(entries, [count_entry(e) for e in entries], policy=policy, fixed_tokens=0,
                           count_entry=count_entry)


def random_history(seed: int) -> list[Entry]:
    rng = random.Random(seed)
    entries: list[Entry] = []
    open_calls: list[str] = []
    for i in range(rng.randint(1, 60)):
        r = rng.random()
        if r < 0.1:
            entries.append(User(content="u" * rng.randint(1, 400), ts=i, id=f"u{i}"))
        elif r < 0.5:
            entries.append(ToolCall(name="t", ts=i, id=f"c{i}"))
            open_calls.append(f"c{i}")
        elif r < 0.85 and open_calls:
            entries.append(ToolResult(call_id=open_calls.pop(rng.randrange(len(open_calls))),
                                      content="r" * rng.randint(1, 4000), ts=i, id=f"r{i}"))
        else:
            entries.append(Assistant(content="a" * rng.randint(1, 400), ts=i, id=f"a{i}"))
    return entries


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_no_cut_point_splits_a_tool_pair_and_every_other_cut_does(seed: int) -> None:
    entries = random_history(seed)
    points = set(cut_points(entries))
    assert {0, len(entries)} <= points, f"seed={seed}"
    for cut in range(len(entries) + 1):
        splits = split_tool_pairs(entries[cut:], entries[:cut])
        assert (splits == 0) == (cut in points), f"seed={seed} cut at {cut}"


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32), st.integers(50, 3000), st.integers(0, 5000))
def test_every_plan_with_the_rule_reaches_its_target_or_keeps_one_piece(seed: int, room: int, recent: int) -> None:
    entries = random_history(seed)
    counts = [count_entry(e) for e in entries]
    start = recent_start(entries, counts, turns_start=len(entries), room=room, keep_recent_tokens=recent)
    assert start in cut_points(entries) and split_tool_pairs(entries[start:], entries[:start]) == 0, f"seed={seed}"
    later = [p for p in cut_points(entries) if start < p < len(entries)]
    if sum(counts[start:]) > room:  # over the room only when nothing smaller can be kept
        assert not later, f"seed={seed}"


def test_a_session_of_one_turn_compacts_to_its_target() -> None:
    entries = one_long_turn(120, tool_chars=1000)  # about 36k tokens in one user turn, 120 tool calls
    policy = CompactionPolicy(window=32_000, keep_recent_tokens=20_000)
    room = policy.target_tokens - policy.summary_budget
    result = plan(entries, policy)
    assert result.kept_tokens <= room and result.summarized and not result.truncated
    assert split_tool_pairs(result.kept, result.summarized) == 0
    assert result.kept_turns == 1 and any("cut inside a turn" in n for n in result.notes)
    # Whole turns only: the one turn is kept, and with every output shortened to its least it stays over the room.
    whole = plan(entries, CompactionPolicy(window=32_000))
    assert whole.summarized == [] and whole.kept_tokens > room


def test_at_least_k_recent_tokens_are_kept_when_the_last_turns_hold_fewer() -> None:
    entries = [e for i in range(12) for e in (User(content=f"question {i} " + "q" * 400, ts=i, id=f"u{i}"),
                                              Assistant(content="answer " + "a" * 400, ts=i, id=f"a{i}"))]
    few = plan(entries, CompactionPolicy(window=100_000, keep_turns=2))
    recent = plan(entries, CompactionPolicy(window=100_000, keep_turns=2, keep_recent_tokens=1_000))
    assert few.kept_turns == 2 and few.kept_tokens < 1_000
    assert recent.kept_tokens >= 1_000 and recent.kept_turns > 2 and isinstance(recent.kept[0], User)


def test_the_setting_is_checked() -> None:
    with pytest.raises(ValueError, match="keep_recent_tokens"):
        CompactionPolicy(window=32_000, keep_recent_tokens=-1)


def test_a_real_session_of_few_turns_replayed_at_32k_reaches_every_target(tmp_path: Path) -> None:
    """The command line on a real Claude Code session (6 user turns, 517 entries, 170k tokens at its end)."""
    report = import_session("claude-code", FIXTURES / "claude-code-compacted-auto.jsonl", tmp_path)
    log = str(tmp_path / f"{report.session_id}.jsonl")

    def run(*extra: str) -> dict:  # type: ignore[type-arg]
        done = subprocess.run([sys.executable, "-m", "aptmem", "replay", log, "--window", "32000", "--strip-compactions",
                               "--json", *extra], capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])

    rule = run("--keep-recent-tokens", "20000")
    assert rule["compactions"] > 0 and rule["over_target"] == 0 and rule["over_window"] == 0
    assert rule["split_tool_pairs"] == 0 and rule["max_occupancy"] <= 0.8
    # Whole turns only: every compaction keeps the turn in progress and ends over its target.
    whole = run()
    assert whole["over_target"] > 0 and whole["compactions"] > 10 * rule["compactions"]
