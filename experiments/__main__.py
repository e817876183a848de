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
        return report(rest)
    if command == "check":
        from experiments.gate.check import main as check

        return check(rest)
    print(f"experiments: unknown command {command!r}\n\n{USAGE}", file=sys.stderr, end="")
    return 2


def report(rest: list[str]) -> int:
    """``report RUN_DIR``: rebuild a run's report, or every job's and the combined one of a sweep folder.

    A folder that is neither (no measurement's notes, no ``multirun.yaml``) is refused with one line
    and exit 2: nothing is written into it.
    """
    from pathlib import Path

    from experiments.core.runfolder import is_run_folder, is_sweep_folder

    if len(rest) != 1:
        print(f"experiments report: need one run folder, got {rest}\n\n{USAGE}", file=sys.stderr, end="")
        return 2
    folder = Path(rest[0])
    if is_sweep_folder(folder):
        from experiments.sweep import rebuild

        print(rebuild(folder))
        return 0
    if not is_run_folder(folder):
        what = "does not exist" if not folder.exists() else "is not a folder" if not folder.is_dir() else \
            "is not a run folder (no <measurement>_notes.json) nor a sweep folder (no multirun.yaml)"
        print(f"experiments report: {folder} {what}", file=sys.stderr)
        return 2
    from experiments.report.page import build_report

    print(build_report(folder))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
