"""Recall on real sessions with hand-written questions: a check apart from the generated workloads.

    python benchmarks/recall_real.py [--engines fts,fts_xl,wordllama,hybrid] [--min-coverage 0.42]

The six real transcripts of ``tests/fixtures/real/`` (Claude Code and pi, written by real agents)
are imported into a scratch root and indexed. The questions below were written by hand, after
reading the sessions, in three wordings (using the session's words; without them; in Chinese),
plus questions about things the sessions never mention. A question's evidence is every entry
whose text holds its answer string, so a restated fact counts wherever it is. Prints, per engine
and wording: entry recall@1/5/10 and MRR, and, with ``--min-coverage``, how often recall abstains
on present and on absent questions (the threshold fitted on the generated workload's tune half by
``benchmarks/recall_abstention.py``: nothing here was tuned on these sessions).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import polars as pl

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

from aptmem.importers import detect_format, import_session  # noqa: E402
from aptmem.jsonl_store import JsonlStore  # noqa: E402
from aptmem.recall.abstain import best_coverage  # noqa: E402
from aptmem.recall.index import RecallIndex, file_token  # noqa: E402
from aptmem.tokens import render_entry  # noqa: E402

#: (answer string, template, paraphrase, other language)
QUESTIONS = [
    ("scrolling back in xterm.js", "Does scrolling back in xterm.js work now?",
     "The terminal in the browser would not let me scroll up through old output inside tmux: what was that about?",
     "xterm.js 里往回滚动的问题解决了吗？"),
    ("mix phx.server doesnt seem to start", "What happened when I ran mix phx.server?",
     "The web app would not boot locally, which command was it?", "mix phx.server 启动不了是怎么回事？"),
    ("get_current_trace_id()", "What was the Dialyzer false positive on?",
     "The static type checker complained about a function that was fine: which one?", "Dialyzer 误报的是哪个函数？"),
    ("No Igniter installers", "Do credo, dialyxir and mix_audit have Igniter installers?",
     "Can the Elixir code-quality tools be set up by an automatic installer task?", "credo 和 dialyxir 有 Igniter 安装器吗？"),
    ("docs/theme.md", "Did you update docs/theme.md with the new tokens?",
     "Which documentation page describes the colour palette of the terminal UI?", "新的主题 token 写进文档了吗？"),
    ("user-message-selector.ts", "Which selector still used chalk instead of the theme system?",
     "Which part of the UI had its own colouring code rather than the shared styling?", "哪个选择器还在用 chalk 而不是主题系统？"),
    ("EnrichCommits.perform/1", "Which perform function was wrapped in a span?",
     "What background job got instrumented for distributed tracing?", "哪个后台任务被包进了追踪 span？"),
    ("spotter-4te", "Which bead did I ask you to work on with bd show?",
     "What was the id of the issue whose subtasks we went through one by one?", "我让你处理的是哪个 bead？"),
    ("tool_use context index for language inference", "How does the renderer rewrite infer the language of code?",
     "How did we get the transcript view to highlight code in the right syntax?", "渲染器重写时怎么推断代码的语言？"),
]
#: Questions about what none of the sessions mention (checked: none of their key words occurs).
ABSENT = [
    ("Which Kafka topic do the billing events go to?", "账单事件写到哪个 Kafka topic？"),
    ("What is the Redis URL of the staging cache?", "预发环境缓存的 Redis 地址是什么？"),
    ("Which Grafana dashboard shows the checkout latency?", "哪个 Grafana 看板显示结账延迟？"),
    ("What rate limit did we set for the public API?", "公开 API 的限流设成多少？"),
]
_WORDINGS = ("template", "paraphrase", "other_language")


def _import(root: Path) -> None:
    fixtures = _ROOT / "tests" / "fixtures" / "real"
    for path in sorted(fixtures.glob("*.jsonl")):
        import_session(detect_format(path), path, root)


def main(argv: list[str] | None = None) -> int:
    """Import, index, ask; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", default="fts,fts_xl,wordllama,hybrid")
    parser.add_argument("--min-coverage", type=float, default=0.0)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="recall-real-") as scratch:
        root = Path(scratch)
        _import(root)
        store = JsonlStore(root)
        texts = {(sid, e.id or f"@{n}"): render_entry(e) for sid in store.sessions()
                 for n, e in enumerate(store.iter_entries(sid))}
        components = {"fts": ("fts",), "fts_xl": ("fts",), "wordllama": ("wordllama",), "hybrid": ("hybrid",)}
        for engine in args.engines.split(","):
            index = RecallIndex(store, root, engines=components.get(engine, (engine,)), path=root / f"{engine}.sqlite",
                                change_token=lambda s: file_token(store.path(s)))
            index.refresh()
            for answer, *questions in QUESTIONS:
                evidence = {key for key, text in texts.items() if answer in text}
                for wording, text in zip(_WORDINGS, questions, strict=True):
                    hits = index.search(text, k=10, engine=engine)
                    rank = next((n + 1 for n, h in enumerate(hits) if (h.session_id, h.entry_id) in evidence), None)
                    rows.append({"engine": engine, "wording": wording, "absent": False, "evidence": len(evidence),
                                 "rank": rank, "coverage": best_coverage(text, hits)})
            for pair in ABSENT:
                for wording, text in zip(("template", "other_language"), pair, strict=True):
                    hits = index.search(text, k=10, engine=engine)
                    rows.append({"engine": engine, "wording": wording, "absent": True, "evidence": 0, "rank": None,
                                 "coverage": best_coverage(text, hits)})
            index.close()
        store.close()
    frame = pl.DataFrame(rows)
    answered = pl.col("coverage") >= args.min_coverage
    table = frame.group_by("engine", "wording", "absent").agg(
        pl.len().alias("questions"),
        *((pl.col("rank").is_not_null() & (pl.col("rank") <= k)).mean().alias(f"entry_recall@{k}") for k in (1, 5, 10)),
        (1 / pl.col("rank")).fill_null(0).mean().alias("entry_mrr"),
        answered.mean().alias("answered (not abstained)"),
    ).sort("absent", "engine", "wording")
    with pl.Config(tbl_rows=100, tbl_cols=20, tbl_width_chars=200):
        print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
