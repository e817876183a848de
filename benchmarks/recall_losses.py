"""Where answerability within the 1,024-token packet is lost, by category, from a memory-quality run folder.

    python benchmarks/recall_losses.py RUN_DIR            # RUN_DIR written by benchmarks/memory_quality.py --out
    python benchmarks/recall_losses.py RUN_DIR --misses   # and every question lost, with its category
    python benchmarks/recall_losses.py RUN_DIR --by wording   # one table per value of a question column
                                                              # (wording, type, carrier, format)

For every question the measurement calls findable (facts, previous values, sets, orders; the items
``answerable_1024`` averages) and every strategy, window and wording, the first category that holds:

* ``answered``: answerable in the context's 1,024-token packet;
* ``held_missed`` (every strategy): the answer is in what the context holds without any question
  (kept history, summary, working memory: the end checkpoint's ``where``), and the reader's
  1,024 tokens do not take it. Recall never shows the current session's entries still in context,
  so what its index ranks says nothing of these (at 128k most of the history is such);
* ``not_in_context`` (every strategy): some answer is nowhere in what the strategy puts in context;
* ``reader_missed`` (every strategy): in context, but the fixed reader's 1,024 tokens do not take it.

and, for the recall strategies, what their recall packet did with it first:

* ``not_in_store``: an evidence entry is not in the recall index;
* ``not_retrieved``: no evidence entry in the top 10 hits;
* ``not_shown``: retrieved, but ranked below the hits the packet had room for;
* ``cut``: shown, but some answer is not in the packet's text (the excerpt left it out);
* ``judged_wrong``: every answer is in the packet, and the judge does not credit it (order, stale value);
* ``reader_missed``: answerable from the recall packet, not within the reader's 1,024 tokens of the context.

Prints one table per generator run: counts per (strategy, window) and category; with ``--misses``,
then one row per question lost (strategy, window, seed, item, its type, carrier, format, wording,
category, subject and answers), to read which questions a change should win back.
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


#: The end checkpoint's places (:func:`experiments.core.knowledge.where`) that hold an answer without any question.
HELD = ("kept", "summary", "memory")
#: The question columns ``--by`` may split the table by.
_BY = ("wording", "type", "carrier", "format")
CATEGORIES = ("answered", "held_missed", "not_in_store", "not_retrieved", "not_shown", "cut", "judged_wrong",
              "not_in_context", "reader_missed")


def loss_table(frame: "pl.DataFrame", by: str | None = None) -> "pl.DataFrame":
    """Counts per (strategy, window[, ``by``]) and category of ``frame`` (one row per question, with ``category``)."""
    import polars as pl

    index = ["strategy", "window", *([by] if by else [])]
    table = frame.group_by(*index, "category").len().pivot(on="category", index=index, values="len").fill_null(0)
    table = table.select(*index, *(c for c in CATEGORIES if c in table.columns)).sort(*index)
    answered = pl.col("answered") if "answered" in table.columns else pl.lit(0)
    total = pl.sum_horizontal(*(pl.col(c) for c in CATEGORIES if c in table.columns))
    return table.with_columns((answered / total).round(3).alias("answerable_1024"))


def categorized(run: Path) -> "pl.DataFrame | None":
    """One row per findable question of the run folder ``run`` at the 1,024-token packet, with its ``category``
    (the first of the module docstring's that holds); None when the run wrote no items or answers."""
    import polars as pl

    from experiments.core.runfolder import read_table
    from experiments.measurements.memory_quality.tables import FINDABLE

    items = read_table(run, "memory_items")
    answers = read_table(run, "memory_answers")
    if items is None or answers is None:
        return None
    keys = ["strategy", "window", "seed", "item", "wording"]
    types = items.select("seed", "item", "type", "carrier", "format", "subject", "answers")
    answers = answers.join(types, on=["seed", "item"], how="left").filter(pl.col("type").is_in(FINDABLE))
    packet = answers.filter(pl.col("budget") == 1024).select(*keys, "answerable", "type", "carrier", "format", "subject",
                                                              "answers")
    whole = answers.filter(pl.col("budget").is_null()).select(*keys, pl.col("answerable").alias("in_context"))
    frame = packet.join(whole, on=keys, how="left")
    checks = read_table(run, "memory_checks")
    held = (checks.filter(pl.col("at") == "end").select("strategy", "window", "seed", "item", pl.col("where").alias("held"))
            if checks is not None else None)
    if held is not None and held.height:
        frame = frame.join(held, on=["strategy", "window", "seed", "item"], how="left")
    else:
        frame = frame.with_columns(pl.lit(None, dtype=pl.String).alias("held"))
    recall = read_table(run, "memory_recall")
    if recall is not None and recall.height:
        frame = frame.join(recall.select(*keys, "evidence", "evidence_indexed", "entry_rank", "shown", "answers_in_packet",
                                         pl.col("answerable").alias("recall_answerable")), on=keys, how="left")
    else:
        frame = frame.with_columns(*(pl.lit(None).alias(c) for c in ("evidence", "evidence_indexed", "entry_rank", "shown",
                                                                      "answers_in_packet", "recall_answerable")))
    is_recall = pl.col("evidence").is_not_null()
    category = (pl.when(pl.col("answerable")).then(pl.lit("answered"))
                .when(pl.col("held").is_in(HELD)).then(pl.lit("held_missed"))
                .when(is_recall & (pl.col("evidence_indexed") < pl.col("evidence"))).then(pl.lit("not_in_store"))
                .when(is_recall & pl.col("entry_rank").is_null()).then(pl.lit("not_retrieved"))
                .when(is_recall & (pl.col("entry_rank") > pl.col("shown"))).then(pl.lit("not_shown"))
                .when(is_recall & ~pl.col("answers_in_packet")).then(pl.lit("cut"))
                .when(is_recall & ~pl.col("recall_answerable")).then(pl.lit("judged_wrong"))
                .when(~pl.col("in_context")).then(pl.lit("not_in_context"))
                .otherwise(pl.lit("reader_missed")))
    return frame.with_columns(category.alias("category"))


def main(argv: list[str] | None = None) -> int:
    """Print the loss table of the run folder given; return the exit status."""
    import polars as pl

    args = sys.argv[1:] if argv is None else argv
    misses = "--misses" in args
    args = [a for a in args if a != "--misses"]
    by = None
    if "--by" in args:
        at = args.index("--by")
        if at + 1 >= len(args) or args[at + 1] not in _BY:
            print(f"--by takes one of {', '.join(_BY)}", file=sys.stderr)
            return 2
        by = args[at + 1]
        del args[at:at + 2]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    frame = categorized(Path(args[0]))
    if frame is None:
        print(f"{args[0]}: no memory_items / memory_answers table", file=sys.stderr)
        return 1
    keys = ["strategy", "window", "seed", "item", "wording"]
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(loss_table(frame, by))
        if misses:
            lost = frame.filter(pl.col("category") != "answered").sort("strategy", "window", "seed", "item", "wording")
            print(lost.select(*keys, "type", "carrier", "format", "category", "subject", "answers"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
