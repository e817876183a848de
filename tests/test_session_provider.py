"""A Session that knows its provider: the trigger uses the anchored tier whenever usage is present, the context
model otherwise."""

from __future__ import annotations

from pathlib import Path

from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Assistant, Entry, User
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.tokens.context_model import ContextModel
from aptmem.tokens.profile import load_profile


def provider() -> ContextModel:
    return ContextModel(load_profile("claude-code"), get_estimator("rough"))


def turns(n: int, *, usage_at: int | None = None, reported: int = 0) -> list[Entry]:
    """``n`` turns, each a short question and a 12k-token answer; the reply of turn ``usage_at`` reports
    ``reported`` input tokens."""
    out: list[Entry] = []
    for i in range(n):
        out.append(User(ts=2 * i, content=f"question {i}: " + "why " * 30))
        usage = {"input_tokens": reported, "output_tokens": 50} if i == usage_at else None
        out.append(Assistant(ts=2 * i + 1, content=f"answer {i}: " + "because " * 6_000, usage=usage))
    return out


def replayed(tmp_path: Path, entries: list[Entry], model: ContextModel | None) -> tuple[Session, list[int]]:
    store = JsonlStore(tmp_path / ("provider" if model else "plain"))
    session = Session(store, new_session_id(), policy=CompactionPolicy(window=200_000),
                      estimator=get_estimator("rough"), provider=model)
    fired = [i for i, e in enumerate(entries) if session.append(e).compaction is not None]
    return session, fired


def test_a_reported_usage_past_the_trigger_compacts_though_the_transcript_is_small(tmp_path: Path) -> None:
    # The provider counted 170k for the 10th request (the transcript, in its tokens, plus the system prompt and
    # tool definitions the transcript does not hold): past 80% of 200k. By the transcript alone it is 120k.
    entries = turns(10, usage_at=9, reported=170_000)
    session, fired = replayed(tmp_path, entries, provider())
    assert fired == [19]  # on the reply that carried the usage
    plain, plain_fired = replayed(tmp_path, entries, None)
    assert plain_fired == [] and 110_000 < plain.tokens() < 130_000
    # After the compaction the count is the model's (not anchored) until the next usage, well below the trigger.
    assert not session.provider_anchored() and session.tokens() < 120_000


def test_without_usage_the_context_model_counts_the_fixed_part(tmp_path: Path) -> None:
    model = provider()
    session, fired = replayed(tmp_path, turns(3), model)
    assert fired == [] and not session.provider_anchored()
    # Before any usage: the profile's fixed part plus the live context in the provider's tokens.
    assert session.tokens() == model.fixed + sum(model.count_entry(e) for e in session.live)
    # The profile's fixed part (system prompt and tool definitions) is in the count before any usage.
    assert session.tokens() > model.fixed > 20_000
    with_usage, _ = replayed(tmp_path, turns(3, usage_at=2, reported=70_000), provider())
    # The reported count, plus the reply it answered with (its output, or its text if larger).
    reply = with_usage.live[-1]
    assert with_usage.provider_anchored() and with_usage.tokens() == 70_000 + model.count_entry(reply)


def test_a_session_reopened_counts_its_live_context_by_the_model(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    sid = new_session_id()
    first = Session(store, sid, policy=CompactionPolicy(window=200_000), estimator=get_estimator("rough"),
                    provider=provider())
    for entry in turns(4):
        first.append(entry)
    again = Session(store, sid, policy=CompactionPolicy(window=200_000), estimator=get_estimator("rough"),
                    provider=provider())
    assert again.tokens() == first.tokens()


def test_a_compaction_leaves_room_for_a_large_fixed_part(tmp_path: Path) -> None:
    # System prompt and tool definitions of 40k provider tokens (a given count), a window of 200k: the target
    # (60k) leaves 20k for the summary and the kept turns. Planned by the transcript alone (no fixed part), the
    # compaction would keep 4 turns and the next request would be about 100k by the provider's count.
    model = ContextModel(load_profile("claude-code"), get_estimator("rough"), fixed=40_000)
    policy = CompactionPolicy(window=200_000)
    session = Session(JsonlStore(tmp_path), new_session_id(), policy=policy, estimator=get_estimator("rough"),
                      provider=model)
    outcomes = [session.append(e) for e in turns(12)]
    fired = [o for o in outcomes if o.compaction is not None]
    assert fired, "the provider's count (fixed part + entries) passed the trigger"
    for outcome in fired:
        assert outcome.tokens >= policy.trigger_tokens
        result = outcome.compaction
        assert result is not None and result.entry is not None
        # The plan's own figure and the provider's count of the next request agree, and both are at the target.
        assert outcome.after == result.tokens_after
        assert outcome.after is not None and model.fixed < outcome.after <= policy.target_tokens
    # And the session's count stays the provider's: the fixed part is in it after the compaction.
    assert session.tokens() >= model.fixed
