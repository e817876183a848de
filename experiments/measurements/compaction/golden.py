"""Golden figures of compaction on deterministic 500-turn sessions, kept in the repository.

The regression tests replay the same sessions and compare the number of compactions per
window with ``tests/golden/compaction.json``. A change of behaviour (policy, estimator
constants, summarizer, planner) changes those numbers and fails the tests; if the change is
intended, update the file explicitly, so the new numbers show up in review::

    python -m experiments.measurements.compaction.golden            # print the figures, compare with the file
    python -m experiments.measurements.compaction.golden --update   # rewrite the file
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import msgspec

from aptmem.compaction.policy import CompactionPolicy
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.compaction.replay import ReplayReport, replay
from aptmem.session import Session
from aptmem.tokens import get_estimator
from experiments.workloads.synthetic import generate

__all__ = ["GOLDEN_FILE", "TURNS", "SEED", "WINDOWS", "replay_window", "load_golden"]

GOLDEN_FILE = Path(__file__).resolve().parents[3] / "tests" / "golden" / "compaction.json"
TURNS = 500
SEED = 7
WINDOWS = (128_000, 32_000, 8_000)


def replay_window(window: int, persist: str = "append") -> ReplayReport:
    """Replay the golden session at ``window`` under the default policy (medium tier, cl100k confirms)."""
    session_entries = generate(turns=TURNS, seed=SEED).entries
    with tempfile.TemporaryDirectory(prefix="aptmem-golden-") as root, JsonlStore(root) as store:
        session = Session(store, new_session_id(), policy=CompactionPolicy(window=window, persist=persist),
                          estimator=get_estimator("medium"), confirm=get_estimator("precise"))
        report, _ = replay(session_entries, session)
    return report


def load_golden(path: Path = GOLDEN_FILE) -> dict[str, int]:
    """The stored number of compactions per window (keys are the window as a string)."""
    return msgspec.json.decode(path.read_bytes())["compactions"]


def main(argv: list[str] | None = None) -> int:
    """Print the figures; with --update, write them to the golden file."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--update", action="store_true", help=f"rewrite {GOLDEN_FILE.name} with the figures measured now")
    args = p.parse_args(argv)
    figures = {str(window): replay_window(window).compactions for window in WINDOWS}
    stored = load_golden() if GOLDEN_FILE.exists() else {}
    for window, n in figures.items():
        print(f"window {window:>7}: {n} compactions (stored: {stored.get(window, 'none')})")
    if args.update:
        doc = {"turns": TURNS, "seed": SEED, "policy": "trigger 0.8, target 0.3, keep 10 turns; medium tier, cl100k_base confirms",
               "compactions": figures}
        GOLDEN_FILE.write_bytes(msgspec.json.format(msgspec.json.encode(doc)) + b"\n")
        print(f"wrote {GOLDEN_FILE}")
        return 0
    return 0 if figures == stored else 1


if __name__ == "__main__":
    sys.exit(main())
