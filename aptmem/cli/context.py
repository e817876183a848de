"""``aptmem context PATH`` (or ``--root DIR SESSION_ID``): the request a model would be sent now.

    aptmem context sessions/<id>.jsonl --format openai      # {"messages": [...]}
    aptmem context --root sessions <id> --format anthropic  # {"system": "...", "messages": [...]}

Prints one JSON object: the live context (from the latest compaction on) rendered in the
provider's format (:mod:`aptmem.context`): the system prompt (``--system-prompt``), the working
memory of the session's sidecar (``<id>.meta.json`` beside the log, unless ``--no-memory``) and
the latest summary where a system message goes, then the entries as messages, tool calls with
their ids and answers. ``--tokens`` adds ``"tokens"`` (the rendering's count, by ``--tier``).
Exit 2 for anything that is not a session log (a transcript: ``aptmem import`` it first).
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from aptmem.cli.target import Target, add_target, resolve
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.store import RECOVERY_MODES
from aptmem.tokens.base import TIERS
from aptmem.working_memory import SessionMeta

__all__ = ["register", "session_meta"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``context`` command."""
    from aptmem.context.assemble import FORMATS

    p = commands.add_parser("context", help="print the context a model would be sent now (OpenAI or Anthropic format)",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target(p)
    p.add_argument("--format", choices=FORMATS, default="openai", help="the provider's request format (default: openai)")
    p.add_argument("--system-prompt", default="", metavar="TEXT", help="the agent's system prompt, put first")
    p.add_argument("--no-memory", action="store_true", help="leave the sidecar's working memory out")
    p.add_argument("--tokens", action="store_true", help="add the rendering's token count as \"tokens\"")
    p.add_argument("--tier", choices=TIERS, default="precise", help="the tier --tokens counts with (default: precise)")
    p.add_argument("--tokenizer", default=None, metavar="NAME", help="the precise tokenizer (default cl100k_base)")
    p.add_argument("--mode", choices=RECOVERY_MODES, default="skip", help="recovery mode for damage (default: skip)")
    p.add_argument("--line-cap", type=int, default=DEFAULT_LINE_CAP, help="longest line accepted, in bytes")
    p.set_defaults(handler=run_context)


def session_meta(target: Target) -> SessionMeta | None:
    """The working memory beside a session's log, or None when it has no sidecar (or no id)."""
    from aptmem.working_memory import WorkingMemory

    if target.session_id is None or target.root is None:
        return None
    memory = WorkingMemory(target.root, target.session_id)
    return memory.load() if memory.exists() else None


def run_context(args: argparse.Namespace) -> int:
    """Print the live context of one session as one JSON object."""
    from aptmem.context.assemble import read_context

    target = resolve(args.target, args.root, cap=args.line_cap)
    meta = None if args.no_memory else session_meta(target)
    count = None
    if args.tokens:
        from aptmem.tokens.factory import get_estimator

        count = get_estimator(args.tier, args.tokenizer).count
    context = read_context(target.path, system_prompt=args.system_prompt, meta=meta, count=count, mode=args.mode)
    body = context.as_format(args.format)
    if args.tokens:
        body["tokens"] = context.tokens
    sys.stdout.write(msgspec.json.encode(body).decode() + "\n")
    return 0
