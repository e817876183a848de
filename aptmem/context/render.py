"""A session's entries as the messages a chat model is sent, in a provider-neutral form.

What each entry becomes (:class:`ContextBuilder` does it one entry at a time):

* ``user`` / ``assistant``: a message of that role with the content (none when it is empty or
  only white space, which providers refuse as a text block).
  An assistant's ``model`` and ``usage`` are bookkeeping, not sent.
* ``tool_call``: a tool use (id, name, arguments) in an assistant message; consecutive calls
  share one message, as parallel calls do. Right after that message comes one ``tool`` message
  per call, answering it with the same id: the result that answers it (the pairing rule of
  :mod:`aptmem.context.pairing`), else its inline ``result``, else :data:`NO_RESULT` (an aborted
  call: providers refuse a call without an answer). A call without an id gets one made from the
  entry's bytes (the same on every rendering); an id a provider would refuse (over 40
  characters or outside ``[A-Za-z0-9_-]``), or one used twice in the context, is replaced the
  same way, and its answer carries the same replacement.
* ``tool_result``: nothing where it stands when it answers a call (its content is that call's
  ``tool`` message); a result that answers no call in the context becomes a user message that
  says whose result it is.
* ``compaction`` (and ``compaction_marker``): its summary goes where a system message goes,
  after the system prompt and the working memory.
* ``metadata`` and unknown entry types: nothing; they are not conversation.

Token counts are of this rendering, in the OpenAI chat framing (:func:`count_messages`): per
message :data:`MESSAGE_OVERHEAD` plus its role, then each text, each tool use's id, name and
JSON arguments, and a tool message's call id. ChatML frames a message as ``<|im_start|>role\\n
... <|im_end|>\\n``, so "hello world" from the user is 4 + 1 + 2 = 7 cl100k_base tokens. The
system message's sections are counted apart and joined by :data:`SECTION_SEPARATOR`.
:class:`ContextBuilder` keeps those counts per entry as it goes (a call's count drops when a
result takes over its answer), so a running total is O(size of the entry) per append.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

import msgspec

from aptmem.context.pairing import ToolPairing
from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, UnknownEntry, User, encode_entry

__all__ = [
    "MESSAGE_OVERHEAD",
    "NO_RESULT",
    "SECTION_SEPARATOR",
    "ContextBuilder",
    "Message",
    "RenderedContext",
    "ToolUse",
    "count_messages",
    "render_context",
    "summary_section",
]

#: Tokens a chat format adds per message beyond its role and content (ChatML: 4).
MESSAGE_OVERHEAD = 4
#: The answer sent for a call that no result answers and that has no inline result.
NO_RESULT = "(no result was recorded for this call)"
#: What joins the sections of the system message.
SECTION_SEPARATOR = "\n\n"
_SUMMARY_HEAD = "Summary of the conversation so far:\n"
_VALID_ID = re.compile(r"[A-Za-z0-9_-]{1,40}", re.ASCII)
_json = msgspec.json.Encoder()

Role = Literal["user", "assistant", "tool"]


class ToolUse(msgspec.Struct, frozen=True, kw_only=True):
    """One tool call inside an assistant message."""

    id: str
    name: str
    args: dict[str, Any]
    #: ``args`` as one JSON string (what OpenAI's ``arguments`` carries)
    arguments: str


class Message(msgspec.Struct, kw_only=True):
    """One message of the conversation, in no provider's format yet."""

    role: Role
    text: str = ""
    calls: list[ToolUse] = []
    #: a ``tool`` message: the id of the call it answers
    call_id: str | None = None
    is_error: bool = False


class RenderedContext(msgspec.Struct, kw_only=True):
    """The system sections (system prompt, working memory, summaries) and the messages."""

    system: list[str]
    messages: list[Message]

    @property
    def system_text(self) -> str:
        """The system message's text: the sections joined by :data:`SECTION_SEPARATOR`."""
        return SECTION_SEPARATOR.join(self.system)


def summary_section(summary: str) -> str:
    """The system section a compaction's summary becomes."""
    return _SUMMARY_HEAD + summary


def _arguments(args: dict[str, Any]) -> str:
    try:
        return _json.encode(args).decode()
    except (TypeError, ValueError, OverflowError):
        # Arguments built in memory may hold what JSON cannot: send (and count) their repr.
        return _json.encode(repr(args)).decode()


def _made_id(seed: bytes) -> str:
    """A call id made from bytes: the same bytes always give the same id."""
    return "call_" + hashlib.blake2b(seed, digest_size=12).hexdigest()


class _Slot:
    """A call's ``tool`` message: who answers it now, and the parts counted for it."""

    __slots__ = ("message", "owner", "tokens")

    def __init__(self, message: Message, owner: int, tokens: int) -> None:
        self.message = message
        self.owner = owner
        self.tokens = tokens


class ContextBuilder:
    """Renders entries one at a time into a :class:`RenderedContext`, counting if asked.

    ``fixed`` are the system sections before any summary (system prompt, working memory). With
    ``count`` (a text -> tokens function) the builder keeps each entry's tokens in :attr:`counts`
    and the whole rendering's in :attr:`total`.
    """

    def __init__(self, fixed: Sequence[str] = (), count: Callable[[str], int] | None = None) -> None:
        self._count = count
        self.fixed = [s for s in fixed if s]
        self.summaries: list[str] = []
        self.messages: list[Message] = []
        self.counts: list[int] = []
        self.fixed_tokens = 0
        self._pairing = ToolPairing()
        self._group: Message | None = None  # the assistant message the next call may join
        self._group_calls: list[tuple[int, ToolUse, str | None]] = []  # (position, use, inline result)
        self._slots: dict[int, _Slot] = {}  # call position -> its tool message
        self._used_ids: set[str] = set()
        self._first_summary: int | None = None  # position of the compaction that bears the system frame
        self._sum = 0
        self._recount_fixed()

    # -- counting --------------------------------------------------------------------------------

    def _n(self, text: str) -> int:
        return self._count(text) if self._count is not None and text else 0

    def _frame(self, role: str) -> int:
        return MESSAGE_OVERHEAD + self._n(role) if self._count is not None else 0

    def _give(self, position: int, tokens: int) -> None:
        self.counts[position] += tokens
        self._sum += tokens

    @property
    def total(self) -> int:
        """Tokens of the whole rendering: the fixed system sections and every entry's count."""
        return self.fixed_tokens + self._sum

    def _recount_fixed(self) -> None:
        """Count the fixed sections; the first section of the system message bears its frame."""
        if self._count is None:
            return
        tokens = sum(self._n(s) for s in self.fixed)
        if self.fixed:
            tokens += self._frame("system") + (len(self.fixed) - 1) * self._n(SECTION_SEPARATOR)
        self.fixed_tokens = tokens

    def set_fixed(self, fixed: Sequence[str]) -> None:
        """Replace the fixed system sections (the working memory changed); recount them."""
        had = bool(self.fixed)
        self.fixed = [s for s in fixed if s]
        self._recount_fixed()
        if had != bool(self.fixed) and self._first_summary is not None and self._count is not None:
            # The frame moves between the fixed part and the first summary; a separator takes its place.
            frame, sep = self._frame("system"), self._n(SECTION_SEPARATOR)
            self._give(self._first_summary, (sep - frame) if self.fixed else (frame - sep))

    # -- rendering -------------------------------------------------------------------------------

    def extend(self, entries: Iterable[Entry]) -> None:
        """Add several entries, in order."""
        for entry in entries:
            self.add(entry)

    def add(self, entry: Entry) -> int:
        """Render one more entry; return by how much the total changed."""
        before = self.total
        position = len(self.counts)
        self.counts.append(0)
        if isinstance(entry, ToolCall):
            self._add_call(position, entry)
        else:
            if not isinstance(entry, (Metadata, UnknownEntry, Compaction)) and not _renders_nothing(entry):
                self._close_group()
            if isinstance(entry, ToolResult):
                self._add_result(position, entry)
            elif isinstance(entry, (User, Assistant)):
                if not _renders_nothing(entry):
                    role: Role = "user" if isinstance(entry, User) else "assistant"
                    self._add_message(position, Message(role=role, text=entry.content))
            elif isinstance(entry, Compaction):
                self._add_summary(position, entry)
        return self.total - before

    def _add_message(self, position: int, message: Message) -> None:
        self.messages.append(message)
        if self._count is not None:
            self._give(position, self._frame(message.role) + self._n(message.text))

    def _add_summary(self, position: int, entry: Compaction) -> None:
        section = summary_section(entry.summary)
        self.summaries.append(section)
        if self._count is None:
            return
        first = not self.fixed and self._first_summary is None
        if self._first_summary is None:
            self._first_summary = position
        self._give(position, self._n(section) + (self._frame("system") if first else self._n(SECTION_SEPARATOR)))

    def _unique_id(self, raw: str | None, entry: ToolCall) -> str:
        """The id the call is sent with: its own when a provider accepts it and it is not taken."""
        ident = raw if raw is not None and _VALID_ID.fullmatch(raw) else _made_id(
            (raw or "").encode() if raw is not None else encode_entry(entry))
        seed, n = ident, 1
        while ident in self._used_ids:
            n += 1
            ident = _made_id(f"{seed}#{n}".encode())
        self._used_ids.add(ident)
        return ident

    def _add_call(self, position: int, entry: ToolCall) -> None:
        use = ToolUse(id=self._unique_id(entry.id, entry), name=entry.name, args=entry.args,
                      arguments=_arguments(entry.args))
        self._pairing.call(position, entry)
        if self._group is None:
            self._group = Message(role="assistant")
            self.messages.append(self._group)
            if self._count is not None:
                self._give(position, self._frame("assistant"))
        self._group.calls.append(use)
        self._group_calls.append((position, use, entry.result))
        if self._count is not None:
            self._give(position, self._n(use.id) + self._n(use.name) + self._n(use.arguments))
            # Until the group closes, the call's answer is counted as if it closed now.
            self._give(position, self._slot_tokens(use.id, NO_RESULT if entry.result is None else entry.result))

    def _slot_tokens(self, call_id: str, text: str) -> int:
        return self._frame("tool") + self._n(call_id) + self._n(text) if self._count is not None else 0

    def _close_group(self) -> None:
        """End the open assistant message: each of its calls gets its tool message, in order."""
        if self._group is None:
            return
        for position, use, inline in self._group_calls:
            text = NO_RESULT if inline is None else inline
            message = Message(role="tool", text=text, call_id=use.id, is_error=inline is None)
            self.messages.append(message)
            # Its tokens were counted when the call was added; the slot remembers them.
            self._slots[position] = _Slot(message, position, self._slot_tokens(use.id, text))
        self._group, self._group_calls = None, []

    def _add_result(self, position: int, entry: ToolResult) -> None:
        call = self._pairing.answer(entry)
        slot = self._slots.pop(call, None) if call is not None else None
        if slot is None:
            # No call in the context: the content is still sent, as a user message saying whose it is.
            who = entry.name or "a tool"
            head = f"(result of {who}" + (f" call {entry.call_id}" if entry.call_id else "") + \
                   ", whose call is not in this context" + ("; it reported an error" if entry.is_error else "") + ")\n"
            self._add_message(position, Message(role="user", text=head + entry.content))
            return
        message = slot.message
        message.text, message.is_error = entry.content, entry.is_error
        if self._count is not None:
            self._give(slot.owner, -slot.tokens)
            self._give(position, self._slot_tokens(message.call_id or "", entry.content))

    def rendered(self) -> RenderedContext:
        """The rendering so far (a call group still open is closed, as a request would send it)."""
        self._close_group()
        return RenderedContext(system=[*self.fixed, *self.summaries], messages=list(self.messages))


def _renders_nothing(entry: Entry) -> bool:
    """A text entry that adds no message where it stands (empty or white space only: it says nothing)."""
    return isinstance(entry, (User, Assistant)) and not entry.content.strip()


def render_context(entries: Iterable[Entry], system: Sequence[str] = ()) -> RenderedContext:
    """Render ``entries`` (oldest first) after the system sections ``system``."""
    builder = ContextBuilder(system)
    builder.extend(entries)
    return builder.rendered()


def count_messages(count: Callable[[str], int], rendered: RenderedContext) -> int:
    """Tokens of a rendering counted afresh, message by message (what :class:`ContextBuilder` keeps)."""
    def n(text: str) -> int:
        return count(text) if text else 0

    def frame(role: str) -> int:
        return MESSAGE_OVERHEAD + n(role)

    total = 0
    if rendered.system:
        total += frame("system") + sum(n(s) for s in rendered.system) + (len(rendered.system) - 1) * n(SECTION_SEPARATOR)
    for message in rendered.messages:
        total += frame(message.role) + n(message.text)
        for use in message.calls:
            total += n(use.id) + n(use.name) + n(use.arguments)
        if message.call_id is not None:
            total += n(message.call_id)
    return total
