"""The salient summarizer: facts survive repeated compactions, updates replace, the budget always holds."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.salient import SalientSummarizer
from aptmem.entries import Assistant, ToolResult, User
from aptmem.tokens import get_estimator

# Counted with the rough tier (UTF-8 bytes / 4): what these tests hold is the summarizers' behaviour under a budget,
# which must not move when the medium tier is refitted.
COUNT = get_estimator("rough").count


def _noise(rng: random.Random, n: int) -> list:
    """Fact-shaped distractors that repeat (the kind a FIFO Facts section fills up with)."""
    pool = [f"In src/mod_{i}.py, load_config is {rng.randrange(10**6)} bytes long and set to retry." for i in range(12)]
    return [Assistant(ts=i, id=f"n{i}", content=" ".join(rng.choice(pool) for _ in range(6))) for i in range(n)]


def _roll(summarizer, batches: list[list], budget: int) -> str:  # type: ignore[no-untyped-def]
    summary = None
    for batch in batches:
        summary = summarizer.summarize(batch, previous=summary, budget=budget, count=COUNT)
    return summary or ""


def test_a_fact_said_once_outlives_many_compactions_of_repeated_distractors() -> None:
    rng = random.Random(11)
    fact = User(ts=0, id="f", content="Service atlas-rpc listens on port 31234.")
    batches = [[fact, *_noise(rng, 6)], *([*_noise(rng, 6)] for _ in range(25))]
    assert "31234" in _roll(SalientSummarizer(), batches, 400), "seed 11"
    assert "31234" not in _roll(ExtractiveSummarizer(), batches, 400), "the old summarizer drops it (the cause fixed)"


def test_facts_in_json_logs_comments_and_chinese_reach_the_summary() -> None:
    entries = [ToolResult(ts=1, id="r1", call_id="c", content='{"items":[{"service":"atlas-rpc","port":31234}]}'),
               ToolResult(ts=2, id="r2", call_id="c", content="2024-05-29T12:00:00Z INFO [billing-api] incident opened: OPS-4821"),
               ToolResult(ts=3, id="r3", call_id="c", content="def f():\n    # deploy key: dk_0a1b2c3d4e5f60718293\n    return 1"),
               User(ts=4, id="u", content="项目atlas的负责人是王伟芳。")]
    summary = SalientSummarizer().summarize(entries, previous=None, budget=600, count=COUNT)
    for value in ("31234", "OPS-4821", "dk_0a1b2c3d4e5f60718293", "王伟芳"):
        assert value in summary


def test_an_update_replaces_the_old_line_and_names_the_value_it_replaced() -> None:
    first = SalientSummarizer().summarize([User(ts=1, id="a", content="You can reach atlas-rpc on port 31234 from the VPN.")],
                                          previous=None, budget=400, count=COUNT)
    later = [Assistant(ts=2, id="b", content="atlas-rpc moved to port 40001, so update your tunnels.")]
    summary = SalientSummarizer().summarize(later, previous=first, budget=400, count=COUNT)
    lines = [line for line in summary.splitlines() if "31234" in line]
    assert len(lines) == 1 and "40001" in lines[0] and "before: 31234" in lines[0]


def test_a_repeated_item_keeps_the_place_it_was_first_said() -> None:
    said = [User(ts=i, id=f"u{i}", content=text) for i, text in
            enumerate(["The API endpoint of atlas-api is https://a.example.dev/v1.", "Service kestrel-rpc listens on port 22222.",
                       "The API endpoint of atlas-api is https://a.example.dev/v1."])]
    summary = SalientSummarizer().summarize(said, previous=None, budget=600, count=COUNT)
    facts = [line for line in summary.splitlines() if line.startswith("- ") and ("22222" in line or "a.example" in line)]
    assert "a.example" in facts[0] and "22222" in facts[1]


@settings(max_examples=40, deadline=None, derandomize=True)
@given(budget=st.integers(min_value=40, max_value=1500), seed=st.integers(min_value=0, max_value=10**6))
def test_the_summary_always_fits_its_budget(budget: int, seed: int) -> None:
    batches = [_noise(random.Random(seed + i), 8) for i in range(3)]
    assert COUNT(_roll(SalientSummarizer(), batches, budget)) <= budget, f"seed {seed}"


def test_a_request_clipped_before_the_new_value_of_its_update_never_shows_the_stale_one() -> None:
    # The update is said at the end of a long request: its clip in "User requests" ends at the old value.
    filler = "Please look at the flaky save path in src/utils/entry_items.tsx again, it fails under load. " * 2
    said = [User(ts=1, id="a", content="ember-indexer serves HTTP on port 39823."),
            User(ts=2, id="b", content=f"{filler}Port for ember-indexer changed: it was 39823, it is 30647 from today.")]
    summary = SalientSummarizer().summarize(said, previous=None, budget=600, count=COUNT)
    assert "30647" in summary
    assert all("30647" in line for line in summary.splitlines() if "39823" in line), summary


def test_without_its_facts_section_the_summary_still_drops_a_request_clipped_before_an_update_s_new_value() -> None:
    # kv_dict's summarizer keeps no Facts: the fact the update replaces is not among its items.
    filler = "Please look at the flaky save path in src/utils/entry_items.tsx again, it fails under load. " * 2
    said = [User(ts=2, id="b", content=f"{filler}Port for ember-indexer changed: it was 39823, it is 30647 from today.")]
    summary = SalientSummarizer(facts=False).summarize(said, previous=None, budget=600, count=COUNT)
    assert all("30647" in line for line in summary.splitlines() if "39823" in line), summary
