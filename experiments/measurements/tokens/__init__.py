"""Token estimates: every tier against the reference tokenizer's exact counts, per content kind, and their speed.

Read top to bottom: :mod:`.settings`, :mod:`.corpus` (the seeded texts), :mod:`.accuracy` (error, speed,
running-tally growth), :mod:`.job` (the tables), :mod:`.report`, :mod:`.gate`. :mod:`.calibration` fits the
medium tier's weights (``benchmarks/calibrate_tokens.py``). The tier specs are parsed by
:mod:`aptmem.tokens.tiers`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from experiments.core.measurement import Progress, RunContext
from experiments.core.metric import Metric
from experiments.measurements.tokens.settings import TokensSettings

__all__ = ["Tokens", "TokensSettings"]


class Tokens:
    """The tokens measurement (timed: its speed-ups are measured side by side)."""

    name = "tokens"
    settings = TokensSettings
    timed = True
    unit = "step"
    tables = ('tokens', 'token_speed', 'token_growth', 'tokens_summary', 'token_speed_summary', 'token_growth_summary', 'token_goals')

    def plan(self, settings: TokensSettings, ctx: RunContext) -> int:
        """Steps: the reference counts, accuracy, speed, one per growth estimator."""
        from experiments.measurements.tokens.job import planned_steps

        return planned_steps(settings)

    def run(self, settings: TokensSettings, ctx: RunContext, progress: Progress) -> None:
        """Score and time every estimator; write the tables."""
        from experiments.measurements.tokens.job import run_tokens

        run_tokens(settings, ctx.folder, progress=progress)

    def section(self, run_dir: Path) -> str | None:
        """The token-estimate section of the report."""
        from experiments.measurements.tokens.report import tokens_section

        return tokens_section(run_dir)

    def metrics(self, run_dir: Path) -> Iterator[Metric]:
        """Error per cheap tier and kind, and speed-ups."""
        from experiments.measurements.tokens.gate import tokens_metrics

        return tokens_metrics(run_dir)
