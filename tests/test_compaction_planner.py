"""Turns, the compaction plan and the extractive summarizer, with a simple exact token count."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.planner import plan_compaction
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.shorten import shorten_entry, shorten_text
from aptmem.compaction.turns import split_tool_pairs, split_turns, turn_starts
from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, User


def words(text: str) -> int:
    """A stand-in tokenizer: one token per 4 characters, at least one per non-empty text."""
    return (len(text) + 3) // 4


def count_entry(entry: Entry) -> int:
    text = getattr(entry, "content", None) or getattr(entry, "summary", None) or getattr(entry, "result", None) or ""
    return words(text) + 4


def turn(i: int, tool_chars: int = 40, calls: int = 1) -> list[Entry]:
    out: list[Entry] = [User(content=f"request {i}: please look at src/mod{i}.py", ts=i, id=f"u{i}")]
    for c in range(calls):
        out.append(ToolCall(name="read", args={"path": f"src/mod{i}.py"}, ts=i, id=f"c{i}.{c}"))
        out.append(ToolResult(call_id=f"c{i}.{c}", content="x" * tool_chars, ts=i, id=f"r{i}.{c}"))
    out.append(Assistant(content=f"done with {i}", ts=i, id=f"a{i}"))
    return out


def history(n: int, **kw: int) -> list[Entry]:
    return [e for i in range(n) for e in turn(i, **kw)]


# -- turns ---------------------------------------------------------------------------------------


def test_turns_start_at_user_entries_and_a_preamble_stands_alone() -> None:
    entries = [Compaction(summary="s", ts=0), Metadata(ts=0), *history(3)]
    turns = split_turns(entries)
    assert [len(t) for t in turns] == [2, 4, 4, 4]
    assert sum(turns, []) == entries


def test_a_user_entry_between_a_call_and_its_result_does_not_split_them() -> None:
    entries = [User(content="a", ts=0), ToolCall(name="x", ts=1, id="c1"), User(content="interjection", ts=2),
               ToolResult(call_id="c1", ts=3), User(content="b", ts=4)]
    assert turn_starts(entries) == [0, 4]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_no_cut_at_a_turn_start_splits_a_tool_pair(seed: int) -> None:
    rng = random.Random(seed)
    entries: list[Entry] = []
    open_calls: list[str] = []
    for i in range(rng.randint(1, 60)):
        r = rng.random()
        if r < 0.25:
            entries.append(User(content="u", ts=i))
        elif r < 0.55:
            entries.append(ToolCall(name="t", ts=i, id=f"c{i}"))
            open_calls.append(f"c{i}")
        elif r < 0.85 and open_calls:
            entries.append(ToolResult(call_id=open_calls.pop(rng.randrange(len(open_calls))), ts=i))
        else:
            entries.append(Assistant(content="a", ts=i))
    for start in turn_starts(entries):
        assert split_tool_pairs(entries[start:], entries[:start]) == 0, f"seed={seed} cut at {start}"


# -- the plan ------------------------------------------------------------------------------------


def plan(entries: list[Entry], policy: CompactionPolicy, fixed: int = 0):  # type: ignore[no-untyped-def]
    return plan_compaction(entries, [count_entry(e) for e in entries], policy=policy, fixed_tokens=fixed,
                           count_entry=count_entry)


def test_keeps_the_last_ten_turns_when_they_fit() -> None:
    entries = history(40)
    p = plan(entries, CompactionPolicy(window=100_000))
    assert p.kept_turns == 10 and p.turns == 40
    assert p.kept == entries[-40:] and p.summarized == entries[:-40]
    assert p.notes == [] and p.truncated == {}


def test_keeps_fewer_turns_when_ten_do_not_fit_the_target() -> None:
    entries = history(40, tool_chars=4000)  # ~1,020 tokens a turn
    policy = CompactionPolicy(window=20_000, memory_floor=0)  # target 6,000 minus a summary budget of 1,980
    p = plan(entries, policy)
    assert p.kept_turns == 3 and p.summary_budget == policy.summary_budget
    assert p.kept_tokens <= policy.target_tokens - policy.summary_budget
    assert "kept 3 of the last 10 turns" in p.notes[0]
    assert split_tool_pairs(p.kept, p.summarized) == 0


def test_when_ten_turns_do_not_fit_memory_keeps_its_floor() -> None:
    entries = history(40, tool_chars=4000)  # ~1,020 tokens a turn
    policy = CompactionPolicy(window=20_000)  # target 6,000; memory floor half of it
    p = plan(entries, policy, fixed=600)
    # The summary grows until the fixed part and it take half the target; the turns get the rest.
    assert p.summary_budget == 3000 - 600 > policy.summary_budget
    assert p.kept_turns == 2 and p.kept_tokens <= policy.target_tokens - 3000
    assert any("memory keeps 50% of the target" in n for n in p.notes)
    assert any("kept 2 of the last 10 turns" in n for n in p.notes)
    assert split_tool_pairs(p.kept, p.summarized) == 0


def test_the_floor_leaves_a_plan_alone_when_the_turns_fit_or_memory_already_has_it() -> None:
    fits = plan(history(40), CompactionPolicy(window=100_000))
    assert fits.summary_budget == CompactionPolicy(window=100_000).summary_budget and fits.kept_turns == 10
    big = history(40, tool_chars=4000)
    policy = CompactionPolicy(window=20_000)
    heavy = plan(big, policy, fixed=3500)  # the memory strategy's rendering alone is over the floor
    assert heavy.summary_budget == policy.summary_budget
    capped = plan(big, CompactionPolicy(window=20_000, summary_max_tokens=2500))
    assert capped.summary_budget == 2500


def test_the_summarizer_writes_within_the_plans_budget() -> None:
    from aptmem.compaction.compactor import build_compaction

    budgets: list[int] = []

    class Recording:
        name = "recording"

        def summarize(self, entries, *, previous, budget, count):  # type: ignore[no-untyped-def]
            budgets.append(budget)
            return "summary"

    entries = history(40, tool_chars=4000)
    policy = CompactionPolicy(window=20_000)
    result = build_compaction(entries, [count_entry(e) for e in entries], policy=policy, summarizer=Recording(),
                              count_text=words, count_entry=count_entry, fixed_tokens=0)
    assert budgets == [result.plan.summary_budget] == [3000]


def test_memory_floor_must_be_a_share() -> None:
    import pytest

    for bad in (-0.1, 1.0):
        with pytest.raises(ValueError, match="memory_floor"):
            CompactionPolicy(window=20_000, memory_floor=bad)


def test_keep_tokens_caps_what_is_kept_like_pi() -> None:
    p = plan(history(40, tool_chars=400), CompactionPolicy(window=1_000_000, keep_tokens=500))
    assert p.kept_tokens <= 500 and p.kept_turns == 3


def test_a_huge_last_turn_is_kept_with_its_tool_output_shortened_visibly() -> None:
    entries = [*history(5), *turn(99, tool_chars=200_000)]  # ~50k tokens of tool output
    policy = CompactionPolicy(window=8_000)
    p = plan(entries, policy)
    assert p.kept_turns == 1 and p.kept[0].id == "u99"
    room = policy.target_tokens - policy.summary_budget
    assert p.kept_tokens <= room
    result = next(e for e in p.kept if isinstance(e, ToolResult))
    assert "characters cut by aptmem compaction" in result.content
    position = next(i for i, e in enumerate(p.kept) if e.id == "r99.0")  # entries are named by position
    assert set(p.truncated) == {position} and p.truncated[position] < 200_000
    assert any("shortened ToolResult r99.0" in n for n in p.notes)
    assert p.oversized == ["r99.0"] and any("larger than the window" in n for n in p.notes)
    # The truncation map reproduces exactly the shortened copy (the append layout's view).
    original = next(e for e in entries if e.id == "r99.0")
    assert shorten_entry(original, p.truncated[position]) == result


def test_the_previous_summary_is_folded_in_not_kept_as_an_entry() -> None:
    entries = [Compaction(summary="Summary:\nFacts:\n- the port is 8443", ts=0, id="c0"), *history(20)]
    p = plan(entries, CompactionPolicy(window=100_000))
    assert p.previous_summary == "Summary:\nFacts:\n- the port is 8443"
    assert all(not isinstance(e, Compaction) for e in p.summarized + p.kept)


def test_shorten_text_keeps_head_and_tail() -> None:
    text = "".join(chr(ord("a") + i % 26) for i in range(1000))
    short = shorten_text(text, 90)
    assert short.startswith(text[:60]) and short.endswith(text[-30:])
    assert "[... 910 characters cut by aptmem compaction ...]" in short
    assert shorten_text("short", 90) == "short"


# -- the extractive summarizer ---------------------------------------------------------------------


def test_extractive_summary_keeps_what_an_agent_needs_within_budget() -> None:
    entries: list[Entry] = [
        User(content="Please fix the login timeout in services/auth/session.py.", ts=1),
        Assistant(content="I decided to switch the session store to Redis. The deploy key for project atlas is dk_0123456789abcdef0123.", ts=2),
        ToolResult(call_id="c", content="Traceback: ConnectionError: connection refused on port 6379", ts=3, is_error=True),
        Assistant(content="TODO: add a retry around the Redis connect. 下一步：更新文档。", ts=4),
        User(content="部署服务器的负责人是王伟。", ts=5),
    ]
    summary = ExtractiveSummarizer().summarize(entries, previous=None, budget=400, count=words)
    assert words(summary) <= 400
    for needle in ("login timeout", "switch the session store to Redis", "dk_0123456789abcdef0123",
                   "ConnectionError", "TODO: add a retry", "services/auth/session.py", "王伟"):
        assert needle in summary, needle
    assert summary.splitlines()[0].startswith("Summary of the conversation so far (5 entries summarized)")


def test_extractive_summary_is_deterministic_and_drops_old_low_priority_items_first() -> None:
    entries = [User(content=f"request number {i} about module m{i}", ts=i) for i in range(200)]
    s = ExtractiveSummarizer()
    small = s.summarize(entries, previous=None, budget=120, count=words)
    assert small == s.summarize(entries, previous=None, budget=120, count=words)
    assert words(small) <= 120
    assert "request number 199" in small and "request number 0 " not in small


def test_previous_summary_items_survive_another_compaction() -> None:
    s = ExtractiveSummarizer()
    first = s.summarize([Assistant(content="The deploy key for project atlas is dk_feedfacefeedface0001.", ts=1)],
                        previous=None, budget=200, count=words)
    second = s.summarize([User(content="now rename the module", ts=2)], previous=first, budget=200, count=words)
    assert "dk_feedfacefeedface0001" in second and "rename the module" in second


def test_a_summarizer_that_keeps_nothing_gives_the_floor_back_to_the_turns() -> None:
    from aptmem.compaction.compactor import build_compaction
    from aptmem.memory.strategies import DropSummarizer

    entries = history(40, tool_chars=4000)
    policy = CompactionPolicy(window=20_000)
    counts = [count_entry(e) for e in entries]
    result = build_compaction(entries, counts, policy=policy, summarizer=DropSummarizer(), count_text=words,
                              count_entry=count_entry, fixed_tokens=0)
    unfloored = plan(entries, CompactionPolicy(window=20_000, memory_floor=0))
    assert result.plan.summary_budget == policy.summary_budget
    assert result.plan.kept_turns == unfloored.kept_turns == 3 and result.entry is not None
