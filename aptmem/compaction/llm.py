"""An LLM summarizer over an OpenAI-compatible chat-completions HTTP API.

Configuration: ``base_url`` (or ``$OPENAI_BASE_URL``), ``model``, and the API key from the
environment variable named by ``api_key_env`` (default ``OPENAI_API_KEY``; none is sent if it is
unset, as local servers need none). Any failure (connection, timeout, HTTP status, a reply
without text) raises :class:`~aptmem.errors.SummarizerError`; a reply over the budget is cut at
a line boundary to fit.
"""

from __future__ import annotations

import http.client
import os
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence

import msgspec

from aptmem.entries import Entry
from aptmem.errors import SummarizerError
from aptmem.tokens import render_entry

__all__ = ["LlmSummarizer", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = (
    "You compact the conversation of a coding agent so it can continue after its history is "
    "dropped. Write a terse summary that keeps everything the agent will need: the user's "
    "requests, decisions taken and why, file paths, commands, errors and how they were handled, "
    "exact names, numbers, keys and dates, and the open to-dos. Fold in the earlier summary if "
    "one is given. Use short bullet lines under headings. Do not invent anything."
)


class _Message(msgspec.Struct):
    content: str | None = None


class _Choice(msgspec.Struct):
    message: _Message


class _Reply(msgspec.Struct):
    choices: list[_Choice]


_reply_decoder = msgspec.json.Decoder(_Reply)


class LlmSummarizer:
    """Ask a chat model for the summary, within a token budget."""

    name = "llm"

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 120.0,
        max_input_chars: int = 400_000,
        temperature: float = 0.0,
    ) -> None:
        base = base_url or os.environ.get("OPENAI_BASE_URL")
        if not base:
            raise ValueError("LlmSummarizer needs base_url (or $OPENAI_BASE_URL), e.g. http://localhost:8000/v1")
        self.url = base.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_input_chars = max_input_chars
        self.temperature = temperature

    def summarize(self, entries: Sequence[Entry], *, previous: str | None, budget: int, count: Callable[[str], int]) -> str:
        """Send the transcript (newest part, if it is too long) and return the model's summary."""
        prompt = self._prompt(entries, previous, budget)
        body = msgspec.json.encode({
            "model": self.model,
            "messages": [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
            "temperature": self.temperature,
            "max_tokens": budget,
        })
        text = self._post(body).strip()
        if not text:
            raise SummarizerError(f"{self.url}: the model returned an empty summary")
        return _fit(text, budget, count)

    def _prompt(self, entries: Sequence[Entry], previous: str | None, budget: int) -> str:
        # render_entry starts each message with its role; metadata renders empty and is left out.
        transcript = "\n".join(text for text in map(render_entry, entries) if text)
        if len(transcript) > self.max_input_chars:
            # Keep the newest part: the old part is what the previous summary already covers.
            transcript = "[... older part omitted ...]\n" + transcript[-self.max_input_chars :]
        head = f"Earlier summary:\n{previous}\n\n" if previous else ""
        return f"{head}Conversation to summarize:\n{transcript}\n\nWrite the summary in at most {budget} tokens."

    def _post(self, body: bytes) -> str:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace").strip()
            raise SummarizerError(f"{self.url}: HTTP {exc.code} {exc.reason}: {detail}") from None
        except (TimeoutError, urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
                raise SummarizerError(f"{self.url}: no reply within {self.timeout:g} s") from None
            raise SummarizerError(f"{self.url}: cannot reach the summarizer: {reason}") from None
        except http.client.HTTPException as exc:  # a reply cut short, or not HTTP at all
            raise SummarizerError(f"{self.url}: broken HTTP reply: {exc!r}") from None
        try:
            reply = _reply_decoder.decode(raw)
        except msgspec.DecodeError as exc:
            raise SummarizerError(f"{self.url}: not a chat-completions reply: {exc}") from None
        if not reply.choices or reply.choices[0].message.content is None:
            raise SummarizerError(f"{self.url}: the reply has no message content")
        return reply.choices[0].message.content


def _fit(text: str, budget: int, count: Callable[[str], int]) -> str:
    """Cut a summary at line boundaries until it fits the budget (models overrun max_tokens hints)."""
    lines = text.splitlines()
    while len(lines) > 1 and count("\n".join(lines)) > budget:
        lines.pop()
    fitted = "\n".join(lines)
    if count(fitted) > budget:
        raise SummarizerError(f"the summary's first line alone is over the budget of {budget} tokens")
    return fitted
