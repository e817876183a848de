"""The concurrency section of the report, from the stored ``concurrency`` and ``concurrency_modes`` tables."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from experiments.core.markdown import markdown_table

__all__ = ["concurrency_section"]

_MODE_HEADERS = {"line_bytes": "line bytes", "per_writer": "entries each", "acknowledged": "acknowledged",
                 "damaged_lines": "damaged lines", "interleaved_lines": "interleaved lines",
                 "switches": "writer switches", "writers_failed": "writers failed"}


def concurrency_section(run_dir: Path) -> str | None:
    """Markdown: the library writers per strategy, then the command-line modes and the sidecar (None if not measured)."""
    path = run_dir / "concurrency.parquet"
    if not path.exists():
        return None
    table = pl.read_parquet(path)
    first = table.row(0, named=True)
    shown = table.select("strategy", "multi_process_safe", "expected", "acknowledged", "found", "lost", "duplicated",
                         "damaged_lines", "writers_failed", "error").sort("strategy")
    headers = {"multi_process_safe": "declares multi-process safety", "expected": "appends tried",
               "acknowledged": "acknowledged", "found": "found after", "writers_failed": "writers that failed"}
    parts = [
        "## Concurrency safety",
        "",
        f"{first['writers']} processes append {first['appends']} entries each to one session at the same moment "
        "(released together); a fresh reader then counts what survived. `lost` = acknowledged by a writer but "
        "absent afterwards.",
        "",
        markdown_table(shown, headers=headers),
        "",
    ]
    modes_path = run_dir / "concurrency_modes.parquet"
    if modes_path.exists():
        parts += _modes(pl.read_parquet(modes_path))
    return "\n".join(parts)


def _modes(modes: pl.DataFrame) -> list[str]:
    """The command-line and sidecar runs: one table each, the commands, and what the rows mean."""
    log = modes.filter(pl.col("target") == "log")
    sidecar = modes.filter(pl.col("target") == "sidecar")
    parts: list[str] = []
    if log.height:
        writers = log["writers"][0]
        parts += [
            "### Through the command line: with the lock, without it, and a naive buffered logger",
            "",
            f"{writers} processes append to one session at once, each fed its own entries on stdin (lines of the "
            "sizes shown; each entry's content repeats a mark of its writer, so a damaged line shows whose pieces it "
            "holds). *Interleaved* lines hold pieces of two or more writers' entries; *writer switches* count adjacent "
            f"good lines from different writers ({writers - 1} means the writers ran one after another, more means "
            "they really overlapped). `lost` = acknowledged by a writer but not found whole.",
            "",
            markdown_table(log.select("mode", "writer", "line_bytes", "writers", "per_writer", "acknowledged", "found",
                                      "lost", "duplicated", "damaged_lines", "interleaved_lines", "switches",
                                      "writers_failed", "error"), headers=_MODE_HEADERS),
            "",
            "Each writer ran:",
            "",
            *[f"- `{mode}`: `{command}`" for mode, command in
              log.select("mode", "command").unique(maintain_order=True).iter_rows()],
            "",
            "With the lock a writer holds the session for one burst of its input and releases it before it waits "
            "for more. " + _no_lock_finding(log) + " The naive logger's buffered file API hands the kernel chunks "
            "cut mid-line, and other processes' chunks can land between them.",
            "",
        ]
    if sidecar.height:
        parts += [
            "### The working-memory sidecar",
            "",
            f"{sidecar['writers'][0]} processes each `set` {sidecar['per_writer'][0]} keys of their own in one "
            "session's sidecar at once. Every write is atomic (temp file, rename), so the file is never damaged; "
            "without the lock, two read-modify-writes of the same version each write back only their own change.",
            "",
            markdown_table(sidecar.select("mode", "writer", "writers", "per_writer", "acknowledged", "found", "lost",
                                          "damaged_lines", "writers_failed", "error"),
                           headers={**_MODE_HEADERS, "per_writer": "keys each", "damaged_lines": "unreadable"}),
            "",
        ]
    return parts


def _no_lock_finding(log: pl.DataFrame) -> str:
    """What the runs without the lock showed, in a sentence computed from their rows."""
    unlocked = log.filter(pl.col("mode") == "no_lock")
    if not unlocked.height:
        return ""
    damaged = int(unlocked["damaged_lines"].sum())
    lost = int(unlocked["lost"].sum())
    largest = int(unlocked["line_bytes"].max())
    if damaged == 0 and lost == 0:
        return (f"Without it each line is still one `os.write` on an `O_APPEND` descriptor, and here no line was "
                f"damaged or lost at any size up to {largest:,} bytes: the kernel serialized the whole-line writes "
                "(a property of this local file system, not a promise: network file systems do not keep it, and a "
                "line cut short by a full disk stays as damage).")
    return (f"Without it each line is still one `os.write` on an `O_APPEND` descriptor, yet here {damaged} line(s) "
            f"were damaged and {lost} entries lost.")
