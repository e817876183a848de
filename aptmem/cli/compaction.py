"""``aptmem replay`` and ``aptmem compact``: compaction from the command line.

``replay SRC --window N`` appends every good entry of a session file through a fresh session
(in a scratch folder, or ``--into DIR``) under the policy, and reports what compaction did. The
file's own compactions (an imported session's) are honoured: the replay continues from the live
context each one left, as the session reopened from disk would; ``--strip-compactions`` leaves
them out so only the policy compacts. With
``--json`` the last line is one object (``entries``, ``turns``, ``compactions``,
``max_occupancy``, ``post_compaction_occupancy``, ``split_tool_pairs``, ``oversized_entries``, ...).

``compact PATH --window N`` compacts a session in place (``PATH`` is ``<root>/<id>.jsonl``) if it
has reached the trigger, or always with ``--force``. The compaction reads, plans and writes under
the session's writer lock, so appends by other processes meanwhile are never lost. With nothing
to summarize (say, right after another compaction) it writes nothing and says so. A rewrite says
what left the file: how many entries and bytes the summary now stands for, and what went to the
quarantine. With ``--json``: ``changed``, ``reason``, ``written`` (what the store did) and
``summarized_digests`` (SHA-256, first 16 hex digits, of each summarized entry's canonical line,
so a caller can audit what the summary stands for).

Both name the session as every single-session command does: a PATH or ``--root DIR SESSION_ID``;
an agent's transcript or another file that is no session log is refused (exit 2).
"""

from __future__ import annotations

import argparse
import hashlib
import tempfile

import msgspec

from aptmem.cli.target import add_target, resolve
from aptmem.entries import encode_entry
from aptmem.ids import new_session_id
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.recovery import LogScan
from aptmem.store import CompactionWritten
from aptmem.tokens import TIERS

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``replay`` and ``compact`` commands."""
    p = commands.add_parser("replay", help="replay a session through a fresh one under a compaction policy",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target(p, dest="src", what="the session to replay (damaged lines are skipped and reported)")
    _policy_options(p)
    p.add_argument("--into", default=None, metavar="DIR", help="keep the replayed session in DIR (default: a scratch folder)")
    p.add_argument("--memory", default=None, metavar="NAME",
                   help="run it through this memory strategy (aptmem.memory.registry: none, full_history, extractive, "
                        "salient, kv_dict, hier_summary, obs_mask, llm); the session gets a sidecar")
    p.add_argument("--strip-compactions", action="store_true",
                   help="leave out the file's own compactions (default: continue from the context each one left)")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.set_defaults(handler=run_replay)

    p = commands.add_parser("compact", help="compact a session in place if it reached the trigger (or --force)")
    add_target(p, dest="path", what="the session to compact (a log named <id>.jsonl in its sessions folder)")
    _policy_options(p)
    p.add_argument("--force", action="store_true", help="compact even below the trigger")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    p.set_defaults(handler=run_compact)


def _policy_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--window", type=int, required=True, help="the model's context window, in tokens")
    p.add_argument("--trigger", type=float, default=0.8, help="compact when the context reaches this share (default 0.8)")
    p.add_argument("--target", type=float, default=0.3, help="bring it down to this share (default 0.3)")
    p.add_argument("--keep-turns", type=int, default=10, help="turns kept verbatim (default 10)")
    p.add_argument("--keep-tokens", type=int, default=None, help="cap on the tokens kept verbatim (as pi's 20,000)")
    p.add_argument("--persist", choices=("append", "rewrite"), default="append", help="how a compaction is written")
    p.add_argument("--tier", choices=TIERS, default="medium", help="the cheap tier checked on every append (default medium)")
    p.add_argument("--tokenizer", default=None, help="the precise tokenizer that confirms near the trigger (default cl100k_base)")
    p.add_argument("--no-confirm", action="store_true", help="let the --tier estimate decide alone")
    p.add_argument("--system-prompt", default="", help="a system prompt counted in the context")
    p.add_argument("--summarizer", choices=("extractive", "llm"), default="extractive", help="who writes the summary")
    p.add_argument("--llm-base-url", default=None, help="OpenAI-compatible API base URL (default $OPENAI_BASE_URL)")
    p.add_argument("--llm-model", default="gpt-4o-mini", help="model name for --summarizer llm")
    p.add_argument("--line-cap", type=int, default=DEFAULT_LINE_CAP, help="longest line accepted, in bytes")


def _session_options(args: argparse.Namespace) -> dict[str, object]:
    """Build the Session keyword arguments (policy, estimators, summarizer) from the options."""
    from aptmem.cli import as_flags
    from aptmem.compaction.policy import CompactionPolicy
    from aptmem.tokens import get_estimator

    try:
        policy = CompactionPolicy(window=args.window, trigger=args.trigger, target=args.target,
                                  keep_turns=args.keep_turns, keep_tokens=args.keep_tokens, persist=args.persist)
    except ValueError as exc:  # the policy names its parameters; the user typed flags
        raise ValueError(as_flags(str(exc), ("window", "trigger", "target", "keep_turns", "keep_tokens", "persist"))) from None
    estimator = get_estimator(args.tier, args.tokenizer if args.tier == "precise" else None)
    confirm = None if args.no_confirm or args.tier == "precise" else get_estimator("precise", args.tokenizer)
    options: dict[str, object] = {"policy": policy, "estimator": estimator, "confirm": confirm,
                                  "system_prompt": args.system_prompt}
    if args.summarizer == "llm":
        from aptmem.compaction.llm import LlmSummarizer

        options["summarizer"] = LlmSummarizer(model=args.llm_model, base_url=args.llm_base_url)
    return options


def run_replay(args: argparse.Namespace) -> int:
    """Replay SRC and print the report."""
    from aptmem.jsonl_store import JsonlStore
    from aptmem.replay import replay
    from aptmem.session import Session

    src = resolve(args.src, args.root, cap=args.line_cap).path
    options = _session_options(args)
    scan = LogScan(src, "skip", args.line_cap, raise_errors=False)
    with tempfile.TemporaryDirectory(prefix="aptmem-replay-") as scratch:
        root = args.into or scratch
        with JsonlStore(root) as store:
            if args.memory is not None:
                session, report = _replay_with_memory(args, scan, store, root, options)
            else:
                sid = new_session_id()
                session = Session(store, sid, **options)  # type: ignore[arg-type]
                report, _ = replay(scan, session, source_compactions="strip" if args.strip_compactions else "honour",
                                   reopen=lambda: Session(store, sid, **options))  # type: ignore[arg-type]
    damage = scan.report
    out = msgspec.to_builtins(report)
    out.update(source=str(src), window=args.window, trigger=args.trigger, target=args.target,
               keep_turns=args.keep_turns, persist=args.persist, tier=args.tier,
               confirm=None if options["confirm"] is None else options["confirm"].tokenizer,  # type: ignore[attr-defined]
               damaged_lines=damage.damaged_lines, damaged_count=damage.damaged_count, torn_tail_bytes=damage.torn_tail_bytes,
               session_id=session.session_id if args.into else None, memory=args.memory)
    if args.json:
        print(msgspec.json.encode(out).decode())
    else:
        _print_replay(out)
    return 0


def _replay_with_memory(args: argparse.Namespace, scan: LogScan, store: object, root: str,
                        options: dict[str, object]) -> tuple[object, object]:
    """Run SRC through a new session of ``root`` under the memory strategy ``--memory`` names."""
    from aptmem.memory.handoff import run_with_memory
    from aptmem.memory.registry import memory_strategy

    llm = {"model": args.llm_model, "base_url": args.llm_base_url} if args.memory == "llm" else {}
    options.pop("summarizer", None)  # the strategy brings its own
    return run_with_memory(scan, store, root, strategy=memory_strategy(args.memory, **llm),  # type: ignore[arg-type]
                           source_compactions="strip" if args.strip_compactions else "honour", **options)


def _print_replay(out: dict) -> None:
    print(f"{out['source']}: {out['entries']} entries, {out['turns']} turns, window {out['window']} tokens")
    print(f"  compactions        {out['compactions']} (trigger {out['trigger']:.0%}, target {out['target']:.0%}, "
          f"keep {out['keep_turns']} turns, {out['persist']})")
    print(f"  max occupancy      {out['max_occupancy']:.1%} after compaction, peak {out['peak_occupancy']:.1%} before")
    post = out["post_compaction_occupancy"]
    if post:
        print(f"  after compaction   {min(post):.1%} .. {max(post):.1%}; over target: {out['over_target']} "
              f"({out['over_target_explained']} with a reason)")
    print(f"  split tool pairs   {out['split_tool_pairs']}; entries larger than the window: {out['oversized_entries']}")
    if out["source_compactions"] or out["stripped_compactions"]:
        print(f"  file's compactions {out['source_compactions']} honoured, {out['stripped_compactions']} left out")
    print(f"  live context       {out['final_tokens']} tokens at the end")
    if out["damaged_count"] or out["torn_tail_bytes"]:
        print(f"  source damage      {out['damaged_count']} damaged lines skipped, torn tail {out['torn_tail_bytes']} bytes")


def run_compact(args: argparse.Namespace) -> int:
    """Compact the session at PATH if due (or forced); print what was done."""
    from aptmem.jsonl_store import JsonlStore
    from aptmem.session import Session

    target = resolve(args.path, args.root, need_id=True, cap=args.line_cap)
    path, session_id = target.path, target.session_id
    assert session_id is not None  # need_id
    options = _session_options(args)
    with JsonlStore(path.parent) as store:
        session = Session(store, session_id, **options)  # type: ignore[arg-type]
        before = session.tokens()
        due = before >= session.policy.trigger_tokens
        result = session.compact() if (due or args.force) else None
    out = {"file": str(path), "window": args.window, "tokens_before": before, "occupancy_before": round(before / args.window, 4),
           "compacted": result is not None and result.changed, "changed": result is not None and result.changed,
           "reason": None if result is None else result.reason}
    if result is not None and result.changed:
        assert result.entry is not None
        out.update(tokens_after=result.tokens_after, occupancy_after=round(result.tokens_after / args.window, 4),
                   summarized=result.entry.summarized, kept_turns=result.entry.kept_turns, notes=result.entry.notes,
                   persist=args.persist, written=msgspec.to_builtins(result.written),
                   summarized_digests=[hashlib.sha256(encode_entry(e)).hexdigest()[:16] for e in result.plan.summarized])
    if args.json:
        print(msgspec.json.encode(out).decode())
    elif result is None:
        print(f"{path}: {before} tokens ({before / args.window:.1%} of {args.window}), below the trigger: nothing to do")
    elif not result.changed:
        print(f"{path}: unchanged: {result.reason}")
    else:
        assert result.entry is not None
        print(f"{path}: compacted ({args.persist}) from {before} to {result.tokens_after} tokens "
              f"({result.tokens_after / args.window:.1%}); {result.entry.summarized} entries summarized, "
              f"{result.entry.kept_turns} turns kept")
        if result.written is not None and result.written.persist == "rewrite":
            _print_rewrite(result.written)
        for note in result.entry.notes:
            print(f"  note: {note}")
    return 0


def _print_rewrite(written: CompactionWritten) -> None:
    """Say what a rewrite took off the disk and where it went."""
    print(f"  left the file: {written.removed_entries} entries ({written.removed_bytes} bytes), which the summary "
          f"now stands for; the file went from {written.bytes_before} to {written.bytes_after} bytes")
    if written.carried:
        print(f"  carried over: {written.carried} entries no summary stands for (metadata, unknown types), byte for byte")
    if written.quarantined:
        print(f"  moved to {written.quarantine_path}: {written.quarantined} pieces of damage ({written.quarantined_bytes} bytes)")
