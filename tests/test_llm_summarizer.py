"""The LLM summarizer against a local OpenAI-compatible server started by the test, never the network.

The server (``http.server`` on 127.0.0.1, a free port) records every request and answers as the
test tells it: a chat-completions reply, an HTTP error, bytes that are not JSON, a reply cut
short, or nothing until the client gives up.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from aptmem.compaction.llm import SYSTEM_PROMPT, LlmSummarizer
from aptmem.compaction.policy import CompactionPolicy
from aptmem.context.render import summary_section
from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, User
from aptmem.errors import SummarizerError
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import get_estimator
from experiments.workloads.synthetic import generate

SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"


def words(text: str) -> int:
    """A stand-in tokenizer: one token per 4 characters, rounded up."""
    return (len(text) + 3) // 4


def chat_reply(content: str | None) -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "test",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                    "finish_reason": "stop"}]}).encode()


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeApi:
    """What the server answers next, and every request it got."""

    base_url: str = ""
    status: int = 200
    body: bytes = field(default_factory=lambda: chat_reply("- a summary"))
    delay: float = 0.0  # wait this long (or until teardown) before answering
    raw: bytes | None = None  # send these bytes instead of an HTTP response, then close
    requests: list[Request] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


def _handler(api: FakeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            api.requests.append(Request("POST", self.path, {k.lower(): v for k, v in self.headers.items()},
                                        json.loads(raw) if raw else None))
            if api.delay and api.stop.wait(api.delay):
                return  # the test is over: do not answer
            try:
                if api.raw is not None:
                    self.wfile.write(api.raw)
                    self.close_connection = True
                    return
                self.send_response(api.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(api.body)))
                self.end_headers()
                self.wfile.write(api.body)
            except OSError:
                pass  # the client gave up (a timeout test): nothing to answer to

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
            pass

    return Handler


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeApi]:
    """A local chat-completions server; no API key or base URL from the environment leaks in."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    fake = FakeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield fake
    fake.stop.set()
    server.shutdown()
    server.server_close()
    thread.join()


ENTRIES: list[Entry] = [
    User(content="Please fix the login timeout in services/auth/session.py.", ts=1, id="u1"),
    ToolCall(name="read", args={"path": "services/auth/session.py"}, ts=2, id="c1"),
    ToolResult(call_id="c1", name="read", content="TIMEOUT = 5", ts=3, id="r1"),
    Assistant(content="I raised TIMEOUT to 30 seconds.", ts=4, id="a1"),
]

EXPECTED_TRANSCRIPT = (
    "user\nPlease fix the login timeout in services/auth/session.py.\n"
    'assistant tool_call read\n{"path":"services/auth/session.py"}\n'
    "tool read\nTIMEOUT = 5\n"
    "assistant\nI raised TIMEOUT to 30 seconds."
)


def summarize(api: FakeApi, budget: int = 300, previous: str | None = None, **options: Any) -> str:
    summarizer = LlmSummarizer(base_url=api.base_url, model="test-model", **options)
    return summarizer.summarize(ENTRIES, previous=previous, budget=budget, count=words)


# -- the request ---------------------------------------------------------------------------------


def test_request_is_a_chat_completion_with_the_transcript_and_the_previous_summary(api: FakeApi) -> None:
    summarize(api, budget=300, previous="Facts:\n- the port is 8443")
    assert len(api.requests) == 1
    request = api.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.headers["content-type"] == "application/json"
    assert "authorization" not in request.headers  # no key in the environment: none sent
    assert request.body == {
        "model": "test-model",
        "messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": "Earlier summary:\nFacts:\n- the port is 8443\n\n"
                                        f"Conversation to summarize:\n{EXPECTED_TRANSCRIPT}\n\n"
                                        "Write the summary in at most 300 tokens."},
        ],
        "temperature": 0.0,
        "max_tokens": 300,
    }


def test_without_a_previous_summary_the_prompt_is_only_the_conversation(api: FakeApi) -> None:
    summarize(api, budget=120, temperature=0.7)
    body = api.requests[0].body
    assert body["messages"][1]["content"] == (f"Conversation to summarize:\n{EXPECTED_TRANSCRIPT}\n\n"
                                              "Write the summary in at most 120 tokens.")
    assert (body["max_tokens"], body["temperature"]) == (120, 0.7)


def test_a_base_url_with_a_trailing_slash_posts_to_the_same_path(api: FakeApi) -> None:
    LlmSummarizer(base_url=api.base_url + "/", model="m").summarize(ENTRIES, previous=None, budget=50, count=words)
    assert api.requests[0].path == "/v1/chat/completions"


def test_the_api_key_is_sent_as_a_bearer_token_when_its_variable_is_set(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    summarize(api)
    assert api.requests[0].headers["authorization"] == "Bearer sk-test-123"


def test_the_api_key_variable_can_be_renamed(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-this-one")
    monkeypatch.setenv("LOCAL_LLM_KEY", "local-456")
    summarize(api, api_key_env="LOCAL_LLM_KEY")
    assert api.requests[0].headers["authorization"] == "Bearer local-456"


def test_a_long_transcript_keeps_its_newest_part(api: FakeApi) -> None:
    summarizer = LlmSummarizer(base_url=api.base_url, model="m", max_input_chars=40)
    summarizer.summarize(ENTRIES, previous=None, budget=50, count=words)
    assert api.requests[0].body["messages"][1]["content"] == (
        "Conversation to summarize:\n[... older part omitted ...]\n" + EXPECTED_TRANSCRIPT[-40:] +
        "\n\nWrite the summary in at most 50 tokens.")


def test_the_base_url_comes_from_the_environment_when_not_given(api: FakeApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", api.base_url)
    summarizer = LlmSummarizer(model="m")
    assert summarizer.url == api.base_url + "/chat/completions"
    assert summarizer.summarize(ENTRIES, previous=None, budget=50, count=words) == "- a summary"


def test_no_base_url_anywhere_is_a_value_error_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="OPENAI_BASE_URL"):
        LlmSummarizer(model="m")


# -- the reply -----------------------------------------------------------------------------------


def test_the_reply_content_is_the_summary_stripped(api: FakeApi) -> None:
    api.body = chat_reply("\n  Summary:\n- TIMEOUT raised to 30 s in services/auth/session.py\n\n")
    assert summarize(api) == "Summary:\n- TIMEOUT raised to 30 s in services/auth/session.py"


def test_an_over_budget_reply_is_cut_at_line_boundaries_to_fit(api: FakeApi) -> None:
    lines = [f"- item {i:02d} xxxxxxxxxxxxxxxxxxxxxxxxx" for i in range(10)]  # 35 characters: 9 tokens each
    api.body = chat_reply("\n".join(lines))
    # Four lines and their three line ends: 143 characters, 36 tokens; five make 45.
    assert summarize(api, budget=40) == "\n".join(lines[:4])
    assert summarize(api, budget=45) == "\n".join(lines[:5])
    assert summarize(api, budget=1000) == "\n".join(lines)


def test_a_reply_whose_first_line_alone_is_over_budget_is_an_error(api: FakeApi) -> None:
    api.body = chat_reply("x" * 200 + "\nshort")
    with pytest.raises(SummarizerError, match="first line alone is over the budget of 10 tokens"):
        summarize(api, budget=10)


# -- failures --------------------------------------------------------------------------------------


def test_an_http_error_is_a_summarizer_error_with_status_and_body(api: FakeApi) -> None:
    api.status, api.body = 500, b'{"error": "the upstream model exploded"}'
    with pytest.raises(SummarizerError) as caught:
        summarize(api)
    assert str(caught.value) == (f"{api.base_url}/chat/completions: HTTP 500 Internal Server Error: "
                                 '{"error": "the upstream model exploded"}')


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"<html>bad gateway</html>", "not a chat-completions reply: JSON is malformed"),
        (b'{"choices": [{"message": {"content": "cut', "not a chat-completions reply: Input data was truncated"),
        (b'{"error": {"message": "model not found"}}', "not a chat-completions reply: Object missing required field `choices`"),
        (b'{"choices": [{"text": "a completion, not a chat"}]}', "not a chat-completions reply: Object missing required field `message`"),
        (b'{"choices": []}', "the reply has no message content"),
        (chat_reply(None), "the reply has no message content"),
        (chat_reply("  \n "), "the model returned an empty summary"),
    ],
    ids=["not-json", "truncated-json", "error-object", "no-message", "no-choices", "null-content", "blank-content"],
)
def test_a_reply_without_a_summary_is_a_summarizer_error(api: FakeApi, body: bytes, message: str) -> None:
    api.body = body
    with pytest.raises(SummarizerError) as caught:
        summarize(api)
    assert str(caught.value).startswith(f"{api.base_url}/chat/completions: {message}")


def test_a_refused_connection_is_a_summarizer_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    summarizer = LlmSummarizer(base_url=f"http://127.0.0.1:{port}/v1", model="m", timeout=5)
    with pytest.raises(SummarizerError) as caught:
        summarizer.summarize(ENTRIES, previous=None, budget=50, count=words)
    assert str(caught.value) == (f"http://127.0.0.1:{port}/v1/chat/completions: cannot reach the summarizer: "
                                 f"[Errno {errno.ECONNREFUSED}] {os.strerror(errno.ECONNREFUSED)}")


def test_a_server_slower_than_the_timeout_is_a_summarizer_error(api: FakeApi) -> None:
    api.delay = 30.0  # released at teardown; the client gives up after 0.3 s
    with pytest.raises(SummarizerError) as caught:
        summarize(api, timeout=0.3)
    assert str(caught.value) == f"{api.base_url}/chat/completions: no reply within 0.3 s"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"choices\": [",
         "broken HTTP reply: IncompleteRead(13 bytes read, 487 more expected)"),
        (b"SSH-2.0-OpenSSH_9.6\r\n", "broken HTTP reply: BadStatusLine('SSH-2.0-OpenSSH_9.6\\r\\n')"),
        (b"", "cannot reach the summarizer: Remote end closed connection without response"),
    ],
    ids=["body-cut-short", "not-http", "closed-without-reply"],
)
def test_a_broken_http_reply_is_a_summarizer_error(api: FakeApi, raw: bytes, message: str) -> None:
    api.raw = raw
    with pytest.raises(SummarizerError) as caught:
        summarize(api)
    assert str(caught.value) == f"{api.base_url}/chat/completions: {message}"


# -- in a session ----------------------------------------------------------------------------------


def test_a_session_past_its_trigger_writes_the_servers_summary_into_its_compaction(api: FakeApi, tmp_path: Path) -> None:
    text = "Summary:\n- the user asked for a refactor of the billing module\n- open: write the migration"
    api.body = chat_reply(text)
    store = JsonlStore(tmp_path)
    policy = CompactionPolicy(window=4000)
    session = Session(store, SID, policy=policy, estimator=get_estimator("medium"),
                      summarizer=LlmSummarizer(base_url=api.base_url, model="test"))
    entries = generate(turns=40, seed=3, tool_result_median_bytes=300, tool_result_sigma=1.0,
                       max_tool_result_bytes=4096, facts=0).entries
    for appended, entry in enumerate(entries, 1):
        outcome = session.append(entry)
        if outcome.compaction is not None:
            break
    else:
        raise AssertionError("the workload never reached the trigger")
    assert outcome.tokens >= policy.trigger_tokens
    assert outcome.compaction.entry.summary == text
    store.close()

    assert len(api.requests) == 1
    body = api.requests[0].body
    # the plan's budget: the ten turns do not fit a 4,000-token window, so memory keeps its floor
    assert (body["model"], body["max_tokens"]) == ("test", outcome.compaction.plan.summary_budget)
    assert outcome.compaction.plan.summary_budget == policy.floored_summary_budget(0) > policy.summary_budget
    summarized = outcome.compaction.plan.summarized
    assert summarized and summarized[0] is entries[0]
    assert body["messages"][1]["content"].startswith(f"Conversation to summarize:\nuser\n{entries[0].content}")

    on_disk = JsonlStore(tmp_path).read_live(SID)
    assert isinstance(on_disk[0], Compaction) and on_disk[0].summary == text
    assert on_disk[1:] == entries[appended - len(on_disk) + 1 : appended]
    assert Session(JsonlStore(tmp_path), SID, policy=policy, estimator=get_estimator("medium")).context().messages[0] == {
        "role": "system", "content": summary_section(text)}
