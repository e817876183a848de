"""Figures of a run, drawn from its stored tables only (so ``experiments report`` can redraw them)."""

from __future__ import annotations

from pathlib import Path


__all__ = ["pyplot", "save_figure"]


def pyplot():  # noqa: ANN201 - matplotlib's own module
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
    pyplot().close(fig)
    return path
