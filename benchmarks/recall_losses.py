"""Where answerability within the 1,024-token packet is lost, by category, from a memory-quality run folder.

    python benchmarks/recall_losses.py RUN_DIR            # RUN_DIR written by benchmarks/memory_quality.py --out
    python benchmarks/recall_losses.py RUN_DIR --misses   # and every question lost, with its category

For every question the measurement calls findable (facts, previous values, sets, orders; the items
``answerable_1024`` averages) and every strategy, window and wording, the first category that holds:

* ``answered``: answerable in the context's 1,024-token packet;
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


def main(argv: list[str] | None = None) -> int:
    """Print the loss table of the run folder given; return the exit status."""
    import polars as pl

    from experiments.core.runfolder import read_table
    from experiments.measurements.memory_quality.tables import FINDABLE

    args = sys.argv[1:] if argv is None else argv
    misses = "--misses" in args
    args = [a for a in args if a != "--misses"]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    run = Path(args[0])
    items = read_table(run, "memory_items")
    answers = read_table(run, "memory_answers")
    if items is None or answers is None:
        print(f"{run}: no memory_items / memory_answers table", file=sys.stderr)
        return 1
    keys = ["strategy", "window", "seed", "item", "wording"]
    types = items.select("seed", "item", "type", "carrier", "format", "subject", "answers")
    answers = answers.join(types, on=["seed", "item"], how="left").filter(pl.col("type").is_in(FINDABLE))
    packet = answers.filter(pl.col("budget") == 1024).select(*keys, "answerable", "type", "carrier", "format", "subject",
                                                              "answers")
    whole = answers.filter(pl.col("budget").is_null()).select(*keys, pl.col("answerable").alias("in_context"))
    frame = packet.join(whole, on=keys, how="left")
    recall = read_table(run, "memory_recall")
    if recall is not None and recall.height:
        frame = frame.join(recall.select(*keys, "evidence", "evidence_indexed", "entry_rank", "shown", "answers_in_packet",
                                         pl.col("answerable").alias("recall_answerable")), on=keys, how="left")
    else:
        frame = frame.with_columns(*(pl.lit(None).alias(c) for c in ("evidence", "evidence_indexed", "entry_rank", "shown",
                                                                      "answers_in_packet", "recall_answerable")))
    is_recall = pl.col("evidence").is_not_null()
    category = (pl.when(pl.col("answerable")).then(pl.lit("answered"))
                .when(is_recall & (pl.col("evidence_indexed") < pl.col("evidence"))).then(pl.lit("not_in_store"))
                .when(is_recall & pl.col("entry_rank").is_null()).then(pl.lit("not_retrieved"))
                .when(is_recall & (pl.col("entry_rank") > pl.col("shown"))).then(pl.lit("not_shown"))
                .when(is_recall & ~pl.col("answers_in_packet")).then(pl.lit("cut"))
                .when(is_recall & ~pl.col("recall_answerable")).then(pl.lit("judged_wrong"))
                .when(~pl.col("in_context")).then(pl.lit("not_in_context"))
                .otherwise(pl.lit("reader_missed")))
    frame = frame.with_columns(category.alias("category"))
    table = frame.group_by("strategy", "window", "category").len() \
        .pivot(on="category", index=["strategy", "window"], values="len").fill_null(0).sort("strategy", "window")
    order = ["answered", "not_in_store", "not_retrieved", "not_shown", "cut", "judged_wrong", "not_in_context", "reader_missed"]
    table = table.select("strategy", "window", *(c for c in order if c in table.columns))
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        print(table)
        if misses:
            lost = frame.filter(pl.col("category") != "answered").sort("strategy", "window", "seed", "item", "wording")
            print(lost.select(*keys, "type", "carrier", "format", "category", "subject", "answers"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
