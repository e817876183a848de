"""The context model and the anchored tier: known answers step by step, and the targets on every real session."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.entries import Assistant, Compaction, Metadata, ToolCall, ToolResult, User
from aptmem.errors import InvalidProfile
from aptmem.importers import iter_entries
from aptmem.importers.scan import detect_format
from aptmem.tokens import get_estimator
from aptmem.tokens.anchored import AnchoredCounter, ModelCounter
from aptmem.tokens.calibration.profile_fit import held_out, score_session
from aptmem.tokens.context_model import ContextModel
from aptmem.tokens.profile import ProviderProfile, encode_profile, load_profile, shipped_profiles
from aptmem.tokens.render import render_entry

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"
ROUGH = get_estimator("rough")  # ceil(bytes / 4): easy to count by hand
PROFILE = ProviderProfile(name="test", reference="cl100k_base", ratio=1.5, framing=4.0, fixed=100, reattached=30)


def model() -> ContextModel:
    return ContextModel(PROFILE, ROUGH)


def by_hand(entry: object, thinking: str = "") -> int:
    """What the model should count: the rendered text and thinking times 1.5, plus 4 per message."""
    tokens = ROUGH.count(render_entry(entry)) + (ROUGH.count(thinking) if thinking else 0)
    return round(1.5 * tokens + 4)


def test_the_context_model_counts_fixed_part_entries_framing_and_thinking() -> None:
    m = model()
    plain = Assistant(ts=1, content="a reply of some length")
    thought = Assistant(ts=1, content="a reply of some length", thinking="first I will think about it at length")
    assert m.count_entry(plain) == by_hand(plain)
    assert m.count_entry(thought) == by_hand(thought, thought.thinking) > m.count_entry(plain)
    assert m.count_entry(Metadata(ts=1, kind="x", data={"a": 1})) == 0  # not sent
    counter = ModelCounter(m)
    for entry in (User(ts=1, content="hello there"), thought):
        counter.add(entry)
    assert counter.total == 100 + by_hand(User(ts=1, content="hello there")) + by_hand(thought, thought.thinking)


def test_the_fixed_part_given_as_text_files_or_a_count(tmp_path: Path) -> None:
    prompt, tool = "You are a careful coding agent." * 20, '{"name": "read", "input_schema": {"type": "object"}}'
    (tmp_path / "system.txt").write_text(prompt, encoding="utf-8")
    (tmp_path / "tool.json").write_text(tool, encoding="utf-8")
    expected = round(1.5 * ROUGH.count(prompt)) + round(1.5 * ROUGH.count(tool)) + 8  # framing per part
    assert ContextModel.with_fixed_text(PROFILE, ROUGH, [prompt, tool]).fixed == expected
    from_files = ContextModel.with_fixed_files(PROFILE, ROUGH, [tmp_path / "system.txt", tmp_path / "tool.json"])
    assert (from_files.fixed, from_files.fixed_source) == (expected, "text")
    assert ContextModel(PROFILE, ROUGH, fixed=7).fixed == 7
    assert ContextModel(PROFILE, ROUGH).fixed == 100  # the profile's, until usage teaches it


def test_anchored_step_by_step_across_a_compaction() -> None:
    m = model()
    counter = AnchoredCounter(m)
    ask = User(ts=1, id="u1", content="please read the file and fix it")
    counter.add(ask)
    assert not counter.anchored and counter.total == 100 + by_hand(ask)  # no usage yet: the context model
    reply = Assistant(ts=2, id="a1", content="reading", usage={"input_tokens": 5000, "cache_read_input_tokens": 1000,
                                                                 "output_tokens": 3})
    call = ToolCall(ts=2, id="c1", name="read", args={"path": "x.py"})
    result = ToolResult(ts=3, id="r1", call_id="c1", content="print('hi')\n" * 40)
    for entry in (reply, call, result):
        counter.add(entry)
    assert counter.anchored and m.fixed_source == "learned" and m.fixed == 6000 - by_hand(ask)
    # The anchor, the reply as estimated (its output count, 3 + framing, is smaller), then the result.
    assert counter.total == 6000 + by_hand(reply) + by_hand(call) + by_hand(result)
    summary = Compaction(ts=4, id="k1", summary="the user asked for a fix; the file was read")
    counter.add(summary)
    # A compaction drops the anchor: the learned fixed part, the summary, what agents re-attach.
    assert not counter.anchored and counter.total == m.fixed + by_hand(summary) + 30
    after = Assistant(ts=5, id="a2", content="done", usage={"input_tokens": 9000, "output_tokens": 2})
    counter.add(after)
    assert counter.anchored and counter.total == 9000 + by_hand(after)  # re-based on the first usage after it
    assert (counter.anchors, counter.compactions) == (2, 1)


def test_hidden_thinking_counts_by_the_reported_output() -> None:
    counter = AnchoredCounter(model())
    counter.add(User(ts=1, content="think hard"))
    # The provider showed a two-word summary of its thinking, and billed 4,000 output tokens.
    counter.add(Assistant(ts=2, content="ok", thinking="short summary", usage={"input": 800, "output": 4000}))
    assert counter.total == 800 + 4000 + 4  # the output plus the reply's framing
    nxt = User(ts=3, content="next")
    counter.add(nxt)
    assert counter.total == 800 + 4004 + by_hand(nxt)


def test_an_aborted_request_is_not_an_anchor() -> None:
    counter = AnchoredCounter(model())
    counter.add(User(ts=1, content="go"))
    aborted = Assistant(ts=2, content="", usage={"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0})
    counter.add(aborted)
    assert not counter.anchored and counter.anchors == 0


def test_a_kept_entry_stays_counted_after_a_compaction_that_names_it() -> None:
    counter = ModelCounter(model())
    old, kept, later = User(ts=1, id="a", content="old " * 50), User(ts=2, id="b", content="kept"), User(ts=4, id="c", content="new")
    for entry in (old, kept, Compaction(ts=3, id="k", summary="s", first_kept="b"), later):
        counter.add(entry)
    assert counter.total == 100 + by_hand(Compaction(ts=3, summary="s")) + by_hand(kept) + by_hand(later)
    assert len(counter.live) == 3


def test_profiles_are_shipped_data_and_a_bad_one_is_a_clear_error(tmp_path: Path) -> None:
    assert {"claude-code", "pi"} <= set(shipped_profiles())
    for name in ("claude-code", "pi"):
        profile = load_profile(name)
        assert profile.name == name and profile.reference == "cl100k_base" and profile.ratio > 1
        assert profile.calibration["command"].startswith("aptmem usage-check")  # measured by the command
    with pytest.raises(InvalidProfile, match="no shipped profile"):
        load_profile("nobody")
    bad = tmp_path / "bad.json"
    bad.write_bytes(encode_profile(PROFILE).replace(b'"ratio": 1.5', b'"ratio": -1'))
    with pytest.raises(InvalidProfile, match=r"bad\.json: ratio must be a positive number"):
        load_profile(bad)
    bad.write_bytes(b"{not json")
    with pytest.raises(InvalidProfile, match="not a provider profile"):
        load_profile(bad)
    with pytest.raises(InvalidProfile, match="cannot read"):
        load_profile(tmp_path / "missing.json")


REAL = sorted(FIXTURES.glob("*.jsonl"))


@pytest.fixture(scope="module")
def real_sessions() -> dict[str, dict[str, list]]:
    out: dict[str, dict[str, list]] = {}
    for path in REAL:
        fmt = detect_format(path)
        out.setdefault(fmt, {})[path.stem] = list(iter_entries(fmt, path))
    return out


@pytest.mark.parametrize("path", REAL, ids=[p.stem for p in REAL])
def test_anchored_targets_on_every_real_session_with_usage(path: Path, real_sessions: dict) -> None:
    fmt = detect_format(path)
    anchored, _, _ = score_session(real_sessions[fmt][path.stem], load_profile(fmt), get_estimator("precise"))
    assert anchored.requests > 0
    assert anchored.mape <= 2.0 and anchored.p95_abs_error <= 2000, (path.stem, anchored)


def test_anchored_targets_held_out(real_sessions: dict) -> None:
    precise = get_estimator("precise")
    for fmt, sessions in real_sessions.items():
        for h in held_out(fmt, "cl100k_base", sessions, precise):
            assert h.anchored.p95_abs_error <= 2000, h
            if h.anchored.requests >= 2:
                assert h.anchored.mape <= 2.0, h
            else:  # one request, before any usage: the context model's fixed part alone decides
                assert abs(h.first_request_pct) <= 5.0, h
