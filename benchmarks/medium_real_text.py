"""The medium tier on the text of real agent sessions, per kind, against cl100k_base: with the shipped weights and with weights that never saw those sessions.

    python benchmarks/medium_real_text.py                          # the transcripts of tests/fixtures/real
    python benchmarks/medium_real_text.py --transcripts DIR        # any folder of Claude Code / pi sessions

Every message and tool output of every session is one text, of one kind:

* ``bash_output``: what a shell tool returned (Claude Code ``Bash``, pi ``bash``, pi's ``bashExecution``);
* ``read_output``: what a file-reading tool returned (``Read`` / ``read``: numbered source lines);
* ``other_output``: what the other tools returned (search results, edits, web pages...), JSON ones apart:
* ``json``: tool results that are JSON, and the arguments of every tool call (as the model wrote them);
* ``prose``: what the user and the assistant wrote (markdown with code spans, paths, lists).

Two sets of weights are scored: the shipped ones (whose ``agent_output`` kind samples the
tool outputs of the transcripts in tests/fixtures/real, so on those files they are not fully
held out), and weights fitted by the same fit on the same corpus without any transcript (no
``agent_output`` kind): for those the sessions are text they never saw.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

_SHELL, _READ = {"bash", "bashexecution", "shell"}, {"read"}


def session_texts(folder: Path) -> list[tuple[str, str, str]]:
    """(kind, session file, text) for every message, tool call and tool output of every session in ``folder``."""
    import msgspec

    from aptmem.entries import Assistant, ToolCall, ToolResult, User
    from aptmem.importers import detect_format, iter_entries

    out: list[tuple[str, str, str]] = []
    for path in sorted(folder.glob("*.jsonl")):
        names: dict[str, str] = {}
        for entry in iter_entries(detect_format(path), path):
            if isinstance(entry, ToolCall):
                names[entry.id] = entry.name
                out.append(("json", path.name, msgspec.json.encode(entry.args).decode()))
            elif isinstance(entry, ToolResult):
                name = (entry.name or names.get(entry.call_id or "", "")).lower()
                text = entry.content
                if name in _SHELL:
                    kind = "bash_output"
                elif name in _READ:
                    kind = "read_output"
                else:
                    try:
                        msgspec.json.decode(text)
                        kind = "json"
                    except msgspec.DecodeError:
                        kind = "other_output"
                out.append((kind, path.name, text))
            elif isinstance(entry, (User, Assistant)):
                out.append(("prose", path.name, entry.content))
    return [t for t in out if t[2].strip()]


def main(argv: list[str] | None = None) -> int:
    """Score both sets of weights per kind; print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--transcripts", type=Path, default=_ROOT / "tests" / "fixtures" / "real",
                   help="folder of real sessions (default tests/fixtures/real)")
    p.add_argument("--per-kind", type=int, default=200, help="corpus texts per kind of the refit (default 200)")
    args = p.parse_args(argv)

    import numpy as np
    import polars as pl

    from aptmem.tokens import MediumEstimator, get_estimator
    from aptmem.tokens.calibration.corpus import broad_corpus
    from aptmem.tokens.calibration.medium_fit import constants_from_fit, feature_matrix, fit_weights
    from aptmem.tokens.calibration.sources import Sources
    from experiments.core.markdown import markdown_table

    precise, shipped = get_estimator("precise", "cl100k_base"), MediumEstimator()
    texts = session_texts(args.transcripts)
    if not texts:
        print(f"medium_real_text: no session with text in {args.transcripts}", file=sys.stderr)
        return 2
    # The same fit as benchmarks/calibrate_tokens.py, on its corpus without any transcript.
    corpus = broad_corpus(0, args.per_kind, sources=Sources(transcripts=None))
    weights = fit_weights(feature_matrix(corpus, shipped.costs, shipped.vocab), np.array([precise.count(s.text) for s in corpus], dtype=np.float64))
    unseen = MediumEstimator(constants_from_fit(weights, "cl100k_base", shipped.costs, shipped.vocab, {}))
    rows = []
    for kind, session, text in texts:
        exact = precise.count(text)
        if exact:
            rows.append({"kind": kind, "session": session, "chars": len(text), "exact": exact,
                         "shipped": shipped.count(text), "unseen": unseen.count(text)})
    frame = pl.DataFrame(rows)
    err = {w: (pl.col(w) - pl.col("exact")) / pl.col("exact") * 100 for w in ("shipped", "unseen")}
    summary = (pl.concat([frame, frame.with_columns(pl.lit("all").alias("kind"))])
                 .group_by("kind", maintain_order=True)
                 .agg(pl.len().alias("texts"), pl.col("exact").sum().alias("tokens"),
                      err["shipped"].abs().mean().alias("mape_shipped"), err["unseen"].abs().mean().alias("mape_unseen"),
                      err["unseen"].mean().alias("signed_unseen"),
                      ((pl.col("unseen").sum() / pl.col("exact").sum() - 1) * 100).alias("total_unseen"),
                      err["unseen"].abs().filter(pl.col("exact") >= 20).mean().alias("mape_unseen_20plus")))
    pct = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    print(f"# medium tier on {len(frame)} texts of {frame['session'].n_unique()} real sessions ({args.transcripts})\n")
    print(markdown_table(summary, formats={c: pct for c in summary.columns if c not in ("kind", "texts", "tokens")},
                         headers={"mape_shipped": "MAPE % shipped", "mape_unseen": "MAPE % unseen",
                                  "signed_unseen": "mean signed % unseen", "total_unseen": "total % unseen",
                                  "mape_unseen_20plus": "MAPE % unseen, texts of 20+ tokens"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
