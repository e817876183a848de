"""The context a model is sent: the original design's lines, provider formats checked against the SDKs' types,
pairing of results with calls, and token counts that are the counts of what is rendered."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.compaction.policy import CompactionPolicy
from aptmem.context.assemble import Context, read_context
from aptmem.continuation import create_session
from aptmem.context.pairing import pair_tools
from aptmem.context.render import NO_RESULT, ContextBuilder, count_messages, render_context
from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, User, decode_line, encode_line
from aptmem.ids import new_session_id
from aptmem.importers import import_session
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import ContextTally, count_entries, get_estimator
from aptmem.working_memory import WorkingMemory
from context_checks import check_anthropic, check_both, check_openai
from experiments.workloads.synthetic import generate
from sdk_schema import SchemaError, anthropic_request, openai_request

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "real"
SEED = 12

#: The original design's example session, exactly as written there.
ORIGINAL = [line.encode() for line in (
    '{"type":"user","content":"帮我看看这个 bug","ts":1717000000000}',
    '{"type":"assistant","content":"让我先读一下代码","ts":1717000001000}',
    '{"type":"tool_call","name":"read","args":{"path":"src/foo.ts"},"result":"...","ts":1717000002000}',
    '{"type":"tool_result","name":"read","content":"...","ts":1717000002001}',
)]


def original() -> list[Entry]:
    return [decode_line(line) for line in ORIGINAL]


def context_of(entries: list[Entry], system: list[str] | None = None) -> Context:
    est = get_estimator("medium")
    builder = ContextBuilder(system or [], count=est.count)
    builder.extend(entries)
    return Context(builder.rendered(), builder.total, 128_000)


# -- the original design's four lines --------------------------------------------------------------


def test_the_original_lines_render_as_a_user_an_assistant_a_call_and_its_answer() -> None:
    messages = context_of(original()).openai()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant", "tool"]
    assert messages[0]["content"] == "帮我看看这个 bug" and messages[1]["content"] == "让我先读一下代码"
    (call,) = messages[2]["tool_calls"]
    assert call["function"] == {"name": "read", "arguments": '{"path":"src/foo.ts"}'} and call["type"] == "function"
    assert messages[3] == {"role": "tool", "content": "...", "tool_call_id": call["id"]}
    assert "content" not in messages[2]  # a tool-call message carries no text
    anthropic = context_of(original()).anthropic()
    assert "system" not in anthropic
    assert [m["role"] for m in anthropic["messages"]] == ["user", "assistant", "user"]
    use = anthropic["messages"][1]["content"][1]
    assert use == {"type": "tool_use", "id": call["id"], "name": "read", "input": {"path": "src/foo.ts"}}
    assert anthropic["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": call["id"], "content": "..."}]
    check_both(context_of(original()))


def test_made_ids_are_the_same_on_every_rendering() -> None:
    first = context_of(original()).openai()
    again = context_of(original()).openai()
    assert first == again
    other = context_of([*original()[:2], decode_line(ORIGINAL[2].replace(b"foo", b"bar"))]).openai()
    assert other["messages"][2]["tool_calls"][0]["id"] != first["messages"][2]["tool_calls"][0]["id"]


def test_an_inline_result_alone_becomes_a_call_and_its_answer() -> None:
    call = decode_line(ORIGINAL[2])
    messages = context_of([call]).openai()["messages"]
    assert [m["role"] for m in messages] == ["assistant", "tool"]
    assert messages[1] == {"role": "tool", "content": "...", "tool_call_id": messages[0]["tool_calls"][0]["id"]}


# -- pairing -----------------------------------------------------------------------------------------


def test_a_result_answers_the_nearest_open_call_by_id_or_by_name() -> None:
    entries = [
        ToolCall(ts=1, name="read", id="call_0"),        # 0: aborted, never answered
        User(ts=2, content="go on"),                     # 1
        ToolCall(ts=3, name="read", id="call_0"),        # 2: the id reused by the next turn
        ToolResult(ts=4, call_id="call_0", content="a"),  # 3 -> 2
        ToolCall(ts=5, name="grep"),                     # 4
        ToolCall(ts=6, name="read"),                     # 5
        ToolResult(ts=7, name="read", content="b"),      # 6 -> 5, by name
        ToolResult(ts=8, name="grep", content="c"),      # 7 -> 4, by name
        ToolResult(ts=9, name="grep", content="d"),      # 8: no open grep call: an orphan
        ToolResult(ts=10, call_id="call_9", content="e"),  # 9: an answer before its call counts for nothing
        ToolCall(ts=11, name="x", id="call_9"),          # 10
    ]
    pairs = pair_tools(entries)
    assert pairs.call_of == {3: 2, 6: 5, 7: 4}
    assert pairs.orphans == [8, 9]
    rendered = context_of(entries)
    check_both(rendered)
    tools = [m for m in rendered.openai()["messages"] if m["role"] == "tool"]
    assert [t["content"] for t in tools] == [NO_RESULT, "a", "c", "b", NO_RESULT]
    orphans = [m["content"] for m in rendered.openai()["messages"] if m["role"] == "user" and m["content"].startswith("(result")]
    assert len(orphans) == 2 and orphans[0].endswith("\nd") and "call_9" in orphans[1]


def test_reused_ids_get_distinct_rendered_ids_and_bad_ids_are_replaced() -> None:
    entries = []
    for turn in range(3):
        entries += [User(ts=turn, content=f"turn {turn}"), ToolCall(ts=turn, name="ls", id="call_0"),
                    ToolResult(ts=turn, call_id="call_0", content=str(turn))]
    entries += [ToolCall(ts=9, name="ls", id="call_abc|fc_def" + "x" * 40), ToolResult(ts=9, call_id="call_abc|fc_def" + "x" * 40, content="z")]
    body = context_of(entries).openai()
    ids = [c["id"] for m in body["messages"] for c in m.get("tool_calls", [])]
    assert len(set(ids)) == 4 and ids[0] == "call_0"
    check_both(context_of(entries))


# -- counts are of what is rendered ------------------------------------------------------------------


def _sessions_with_tools(seed: int) -> list[Entry]:
    return generate(turns=30, seed=seed).entries


def _without_ids(entries: list[Entry]) -> list[Entry]:
    """The original design's way: calls without ids, results naming their tool only."""
    out: list[Entry] = []
    for e in entries:
        if isinstance(e, ToolCall):
            out.append(msgspec.structs.replace(e, id=None))
        elif isinstance(e, ToolResult):
            out.append(msgspec.structs.replace(e, call_id=None, id=None))
        else:
            out.append(e)
    return out


@pytest.mark.parametrize("variant", ["with ids", "without ids"])
def test_the_running_tally_equals_a_fresh_count_of_the_rendering(variant: str) -> None:
    entries = _sessions_with_tools(SEED)
    if variant == "without ids":
        entries = _without_ids(entries)
    fixed = ["You are a coding agent.", "Working memory:\nplan: fix the bug"]
    for tier in ("rough", "medium", "precise"):
        est = get_estimator(tier)
        tally = ContextTally(est)
        tally.set_fixed(fixed)
        for i, entry in enumerate(entries):
            tally.add(entry)
            if i % 37 == 0:
                assert tally.total == count_messages(est.count, render_context(entries[: i + 1], fixed)), (tier, variant, i)
        assert tally.total == tally.recount() == count_messages(est.count, render_context(entries, fixed))
        assert sum(tally.counts) + tally.base == tally.total
        tally.set_fixed([])
        assert tally.total == count_entries(est, entries)


def test_a_session_reports_the_tokens_of_the_context_it_renders(tmp_path: Path) -> None:
    precise = get_estimator("precise")
    with JsonlStore(tmp_path) as store:
        sid = create_session(store, title="compacting")
        memory = WorkingMemory(tmp_path, sid)
        memory.set_text("The user wants small commits.")
        session = Session(store, sid, policy=CompactionPolicy(window=6_000), estimator=get_estimator("medium"),
                          confirm=precise, memory=memory, system_prompt="You are careful.")
        compactions = 0
        for entry in generate(turns=40, seed=SEED).entries:
            compactions += session.append(entry).compaction is not None
            context = session.context()
            assert context.tokens == count_messages(precise.count, context.rendered)
        assert compactions >= 2
        check_both(context)
        assert "Summary of the conversation so far" in context.rendered.system_text
        assert context.rendered.system[:2] == ["You are careful.", "Working memory:\nThe user wants small commits."]
        # The same context, assembled from the files alone (as ``aptmem context`` does).
        again = read_context(store.path(sid), system_prompt="You are careful.", meta=memory.load(), count=precise.count)
        assert again.openai() == context.openai() and again.tokens == context.tokens


# -- every rendered context of the test sessions passes the SDKs' types --------------------------------


def _real_sessions(tmp_path: Path) -> list[tuple[str, Path]]:
    out = []
    for src in sorted(REAL.glob("*.jsonl")):
        report = import_session("auto", src, tmp_path / "imported")
        out.append((src.name, tmp_path / "imported" / f"{report.session_id}.jsonl"))
    return out


def test_every_rendered_context_of_the_test_sessions_validates(tmp_path: Path) -> None:
    checked = 0
    cases: list[tuple[str, list[Entry]]] = [
        ("original", original()),
        ("original with metadata and a marker", [
            decode_line(b'{"type":"metadata","title":"bug hunt","created":1717000000000,"model":"claude-sonnet-4","ts":1717000000000}'),
            *original(),
            decode_line(b'{"type":"compaction_marker","summary":"read src/foo.ts","ts":1717000003000}'),
            User(ts=1717000004000, content="and now?"),
        ]),
        ("generated", generate(turns=30, seed=SEED).entries),
        ("generated without ids", _without_ids(generate(turns=30, seed=SEED + 1).entries)),
    ]
    for name, path in _real_sessions(tmp_path):
        with JsonlStore(path.parent) as store:
            cases.append((f"imported {name}", list(store.iter_entries(path.stem))))
        live = read_context(path, system_prompt="You are an agent.")
        check_both(live)
        checked += 1
    for name, entries in cases:
        # The whole history, and every prefix a request could have carried along the way.
        prefixes = random.Random(SEED).sample(range(1, len(entries) + 1), min(8, len(entries)))
        for end in sorted({len(entries), *prefixes}):
            try:
                check_both(context_of(entries[:end], ["system prompt"] if end % 2 else []))
            except (AssertionError, SchemaError) as exc:
                raise AssertionError(f"{name}, first {end} entries: {exc}") from exc
            checked += 1
    # Sessions with compactions (appended and rewritten), shortened output and working memory.
    for persist in ("append", "rewrite"):
        sid = new_session_id()
        with JsonlStore(tmp_path / persist) as store:
            session = Session(store, sid, policy=CompactionPolicy(window=3_000, persist=persist),
                              estimator=get_estimator("medium"), system_prompt="You are careful.")
            for i, entry in enumerate(generate(turns=30, seed=SEED).entries):
                outcome = session.append(entry)
                if outcome.compaction is not None or i % 20 == 0:
                    check_both(session.context())
                    checked += 1
    assert checked > 50


def test_the_validator_refuses_what_a_provider_refuses() -> None:
    with pytest.raises(SchemaError):
        openai_request({"messages": [{"role": "tool", "content": "x"}]})  # no tool_call_id
    with pytest.raises(SchemaError):
        openai_request({"messages": [{"role": "user", "content": "x", "extra": 1}]})
    with pytest.raises(SchemaError):
        anthropic_request({"messages": [{"role": "tool", "content": "x"}]})
    with pytest.raises(SchemaError):
        anthropic_request({"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": "x"}]}]})
    with pytest.raises(AssertionError):  # the types fit, the order does not
        check_openai({"messages": [{"role": "assistant", "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, {"role": "user", "content": "x"}]})
    with pytest.raises(AssertionError):
        check_anthropic({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]},
                                      {"role": "user", "content": [{"type": "text", "text": "b"}]}]})


# -- any sequence of entries renders as a request a provider accepts -----------------------------------

_names = st.sampled_from(["read", "grep", "bash"])
_ids = st.one_of(st.none(), st.sampled_from(["call_0", "call_1", "toolu_01", "fc|x"]))
_text = st.text(alphabet="ab \n帮", max_size=6)
_entry = st.one_of(
    st.builds(User, ts=st.just(1), content=_text),
    st.builds(Assistant, ts=st.just(1), content=_text),
    st.builds(ToolCall, ts=st.just(1), name=_names, id=_ids, args=st.just({"p": 1}), result=st.one_of(st.none(), _text)),
    st.builds(ToolResult, ts=st.just(1), name=_names, call_id=_ids, content=_text, is_error=st.booleans()),
    st.builds(Compaction, ts=st.just(1), summary=_text),
    st.builds(Metadata, ts=st.just(1), kind=st.just("k")),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(_entry, max_size=14), st.booleans())
def test_any_sequence_renders_as_a_request_both_providers_accept(entries: list[Entry], system: bool) -> None:
    fixed = ["be brief"] if system else []
    context = context_of(entries, fixed)
    check_both(context)
    medium = get_estimator("medium")
    assert context.tokens == count_messages(medium.count, context.rendered)
    tally = ContextTally(medium)
    tally.set_fixed(fixed)
    for entry in entries:  # one at a time, as a session appends
        tally.add(entry)
    assert tally.total == context.tokens == tally.reset(entries) == tally.recount()
    if entries:
        assert tally.remove_prefix(1) == context.tokens - context_of(entries[1:], fixed).tokens
    # Every entry's text reaches the model: nothing said is dropped.
    sent = context.text()
    for e in entries:
        for text in (getattr(e, "content", ""), getattr(e, "summary", "")):
            assert text.strip() == "" or text in sent
    # The log round trip gives the same request.
    again = context_of([decode_line(encode_line(e)[:-1]) for e in entries], fixed)
    assert again.openai() == context.openai()
