"""The count a session's trigger uses when it knows its provider: anchored on usage, the context model before."""

from __future__ import annotations

from aptmem.entries import Assistant, Compaction, ToolCall, ToolResult, User
from aptmem.tokens import get_estimator
from aptmem.tokens.context_model import ContextModel
from aptmem.tokens.profile import load_profile
from aptmem.tokens.provider_count import ProviderCount


def model() -> ContextModel:
    return ContextModel(load_profile("claude-code"), get_estimator("rough"))


def test_before_any_usage_it_is_the_context_model_then_the_usage_anchors_it() -> None:
    count = ProviderCount(model())
    user = User(ts=1, id="u", content="look at the parser " * 20)
    count.add(user)
    assert not count.anchored and count.total == count.fixed + count.model.count_entry(user)
    reply = Assistant(ts=2, id="a", content="reading it", usage={"input_tokens": 3, "cache_read_input_tokens": 40_000,
                                                                 "cache_creation_input_tokens": 120, "output_tokens": 900})
    count.add(reply)
    # The provider's count of the request, plus the reply as the provider counted its output (more than its text).
    assert count.anchored and count.total == 40_123 + 900 + round(count.model.framing)
    result = ToolResult(ts=3, id="r", name="read", content="x = 1\n" * 300)
    count.add(ToolCall(ts=2, id="c", name="read", args={"path": "p.py"}))
    count.add(result)
    assert count.total > 40_123 + 900 + count.model.count_entry(result)
    assert count.fixed == 40_123 - count.model.count_entry(user)  # learned from the first usage


def test_after_a_compaction_it_counts_the_live_context_until_the_next_usage() -> None:
    given = model()
    count = ProviderCount(given)
    count.add(User(ts=1, id="u", content="hello " * 500))
    count.add(Assistant(ts=2, id="a", content="hi", usage={"input_tokens": 30_000, "output_tokens": 10}))
    kept = User(ts=3, id="k", content="the newest question")
    summary = Compaction(ts=4, id="s", summary="we said hello", first_kept="k")
    count.add(kept)
    count.reset([summary, kept])
    fixed = 30_000 - count.model.count_entry(User(ts=1, id="u", content="hello " * 500))
    assert not count.anchored and count.fixed == fixed
    # Nothing re-attached by aptmem's own compaction; the caller's model keeps its profile.
    assert count.total == fixed + count.model.count_entry(summary) + count.model.count_entry(kept)
    assert given.profile.reattached > 0 and count.model.profile.reattached == 0
    count.add(Assistant(ts=5, id="b", content="ok", usage={"input_tokens": 9_000, "output_tokens": 5}))
    assert count.anchored and count.fixed == fixed  # re-anchored; the fixed part is not learned again
