"""Figures of a run, drawn from its stored tables only (so ``experiments report`` can redraw them)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

__all__ = ["append_latency_figure", "save_figure"]


def _pyplot():
    """matplotlib's pyplot on the file-only Agg backend (no display is needed or wanted)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path: Path, *, rect: tuple[float, float, float, float] | None = None) -> Path:  # noqa: ANN001
    """Lay ``fig`` out (within ``rect``, when a shared legend takes the rest), write it to ``path``
    as PNG (making its folder), close it and return ``path``."""
    if rect is None:
        fig.tight_layout()
    else:
        fig.tight_layout(rect=rect)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    _pyplot().close(fig)
    return path


def append_latency_figure(samples: pl.DataFrame, path: Path, *, window: int = 50) -> Path:
    """Append latency against entry number, one line per strategy, log scale; raw write for scale.

    Each line is the median over consecutive blocks of ``window`` entries (every sample is in
    the table; the blocks only make 5,000 points per strategy readable).
    """
    plt = _pyplot()
    blocked = (
        samples.with_columns(((pl.col("seq") - 1) // window * window + window // 2).alias("block"))
        .group_by("strategy", "kind", "block")
        .agg(pl.col("latency_ns").median().alias("p50_ns"))
        .sort("block")
    )
    fig, ax = plt.subplots(figsize=(10, 6))
    names = samples.filter(pl.col("kind") == "strategy")["strategy"].unique(maintain_order=True).to_list()
    colors = plt.get_cmap("tab20").colors  # 20 distinct colours: one per strategy, none repeated
    for index, name in enumerate(names):
        part = blocked.filter((pl.col("strategy") == name) & (pl.col("kind") == "strategy"))
        ax.plot(part["block"], part["p50_ns"] / 1000, label=name, linewidth=1.4, color=colors[index % len(colors)],
                linestyle=("-", "--", ":", "-.")[index // len(colors) % 4])
    raw = (
        samples.filter(pl.col("kind") == "raw_write")
        .with_columns(((pl.col("seq") - 1) // window * window + window // 2).alias("block"))
        .group_by("block").agg(pl.col("latency_ns").median().alias("p50_ns")).sort("block")
    )
    ax.plot(raw["block"], raw["p50_ns"] / 1000, label="raw os.write (same bytes)", color="black", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_xlabel("entry number in the session")
    ax.set_ylabel(f"append latency, median per {window} entries (µs, log scale)")
    ax.set_title("Append latency as the session grows")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=2)
    return save_figure(fig, path)
