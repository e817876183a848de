"""``python -m experiments run|report|check``: the harness's command line.

Hydra would read a bare ``run`` as an override, so the sub-command is taken off ``sys.argv``
here and the rest is handed to the Hydra app (which lives in :mod:`experiments.app`, so the
job is named ``app``, not ``__main__``).
"""

from __future__ import annotations

import sys

USAGE = """usage: python -m experiments run [HYDRA OVERRIDES...]
       python -m experiments report RUN_DIR
       python -m experiments check RUN_DIR --baseline FILE [--update]

  run      measure the strategies of the config (default: configs/config.yaml) and write
           tables, figures and report.md to a new folder under reports/runs/
  report   rebuild report.md and its figures from a run folder's tables
  check    compare a run's ratios and counts with a baseline file; exit 1 on a regression
"""


def main(argv: list[str]) -> int:
    """Dispatch the sub-command; return the exit code."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, end="")
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        from experiments.app import run
        from experiments.core.config import register
        from experiments.measurements import MEASUREMENTS

        register(MEASUREMENTS)  # the typed schemas must be in Hydra's ConfigStore before it composes
        sys.argv = [f"{sys.argv[0]} run", *rest]
        run()
        return 0
    if command == "report":
        from pathlib import Path

        from experiments.report.page import build_report

        if len(rest) != 1 or not Path(rest[0]).is_dir():
            print(f"experiments report: need one run folder, got {rest}\n\n{USAGE}", file=sys.stderr, end="")
            return 2
        print(build_report(Path(rest[0])))
        return 0
    if command == "check":
        from experiments.gate.check import main as check

        return check(rest)
    print(f"experiments: unknown command {command!r}\n\n{USAGE}", file=sys.stderr, end="")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
