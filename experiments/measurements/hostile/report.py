"""The report's hostile-input section, from the stored ``hostile`` table alone."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table

__all__ = ["hostile_section"]

_ERROR_CHARS = 150


def _short(text: str | None) -> str | None:
    """An error as shown in the report: scratch paths shortened, long texts cut."""
    if text is None:
        return None
    import re

    text = re.sub(r"/\S*?/aptmem-hostile-[^/\s]+", "…", text)
    return text if len(text) <= _ERROR_CHARS else text[: _ERROR_CHARS - 1] + "…"


def hostile_section(run_dir: Path) -> str | None:
    """Markdown: a summary per category, each session id across every surface, every other case."""
    path = run_dir / "hostile.parquet"
    if not path.exists():
        return None
    table = pl.read_parquet(path)
    summary = (table.group_by("category", maintain_order=True)
               .agg(pl.len().alias("cases"), (pl.col("outcome") == "refused").sum().alias("refused"),
                    (pl.col("outcome") == "reported").sum().alias("reported"),
                    (pl.col("outcome") == "accepted").sum().alias("accepted"),
                    (pl.col("outcome") == "skipped").sum().alias("skipped"),
                    pl.col("as_expected").sum().alias("as expected"), pl.col("clear").sum().alias("clear errors"),
                    pl.col("intact").sum().alias("nothing stored lost")))
    ids = (table.filter(pl.col("category") == "session id").group_by("case", maintain_order=True)
           .agg(pl.len().alias("surfaces"), (pl.col("outcome") == "refused").sum().alias("refused"),
                pl.col("intact").all().alias("nothing stored lost"), pl.col("error").first().alias("error (library)")))
    ids = ids.with_columns(pl.col("error (library)").map_elements(_short, return_dtype=pl.String))
    rest = (table.filter(pl.col("category") != "session id")
            .select("category", "case", "surface", "expect", "outcome", "clear", "intact", "error", "note")
            .with_columns(pl.col("error").map_elements(_short, return_dtype=pl.String),
                          pl.col("note").map_elements(_short, return_dtype=pl.String)))
    surprises = table.filter(~pl.col("as_expected") | ~pl.col("clear") | ~pl.col("intact"))
    verdict = (f"**{surprises.height} case(s) did not behave as expected** (listed below with ✗)."
               if surprises.height else "Every case behaved as expected, with a clear error, and lost nothing stored.")
    surfaces = ", ".join(sorted(table.filter(pl.col("category") == "session id")["surface"].unique().to_list()))
    return "\n".join([
        "## Hostile input",
        "",
        f"{table.height} hostile cases tried, each in a fresh folder holding one stored session (a log and its "
        "sidecar) and a victim file outside it. *Clear*: the library raised one of aptmem's own errors, or the "
        "command printed one `aptmem: ...` line and no traceback. *Nothing stored lost*: afterwards the stored "
        "entries and working memory load as written and the victim is unchanged. " + verdict,
        "",
        markdown_table(summary),
        "",
        f"Session ids, each tried through {surfaces} (a NUL byte cannot be passed in argv, so only the library "
        "is handed that one):",
        "",
        markdown_table(ids),
        "",
        "Every other case (the error column is what a user saw):",
        "",
        markdown_table(rest, formats={"clear": _mark, "intact": _mark}, headers={"intact": "nothing lost"}),
        "",
    ])


def _mark(value: bool) -> str:
    return "✓" if value else "✗"
