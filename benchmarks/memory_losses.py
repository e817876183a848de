"""Why a structured-facts memory misses what it misses: one row per planted item lost at the end of a run.

    python benchmarks/memory_losses.py --generator oncall --seeds 200 201 202 --windows 32000 8000
    python benchmarks/memory_losses.py --generator tracker --strategy kv_dict --rows   # one line per lost item

Replays each seed's workload through ``--strategy`` (a strategy that keeps records under the working
dict's ``aptmem.facts``: ``kv_dict`` by default) at each window, keeps the scratch root, and for every
item whose answers are not all in the context at the end says why, from the evidence entries and the
last session's records:

* ``never_extracted``: no fact the finder takes from the item's evidence entries holds the answer;
* ``superseded``: a record held it and another statement took its slot (the answer is among a record's
  old values, ``before``);
* ``evicted``: extracted, but no record holds it now (the store's cap forgot it, or it was never folded);
* ``not_rendered``: a record holds it, but the render's token budget left it out;
* ``stale_above`` (updates, within 1,024 tokens): the current value is there but the stale one follows it.

Prints the counts per (window, cause) and, with ``--rows``, each lost item: its kind, carrier, format,
the answer and the evidence statement. A diagnostic: it never changes what the measurement scores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))


def _last_meta(root: Path) -> dict:
    """The working dict of the newest session's sidecar in ``root`` (the run's last session)."""
    import json

    metas = sorted(root.glob("*.meta.json"), key=lambda p: p.stat().st_mtime_ns)
    return json.loads(metas[-1].read_text()).get("working", {}) if metas else {}


def _classify(entries, records, present_end: bool, answer: str) -> str:  # noqa: ANN001 - script-local
    """The cause of one item's loss (see the module docstring), or ``present``."""
    from aptmem.memory.facts import facts_of_entry

    if present_end:
        return "present"
    extracted = any(answer in fact.text or answer in fact.value for entry in entries for fact in facts_of_entry(entry))
    if not extracted:
        return "never_extracted"
    if any(answer in r["text"] or answer in r["value"] for r in records):
        return "not_rendered"
    if any(answer in old["value"] for r in records for old in r.get("before", [])):
        return "superseded"
    return "evicted"


def main(argv: list[str] | None = None) -> int:
    """Run, classify, print; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", default="oncall")
    parser.add_argument("--strategy", default="kv_dict")
    parser.add_argument("--seeds", type=int, nargs="+", default=[200, 201, 202])
    parser.add_argument("--windows", type=int, nargs="+", default=[32_000, 8_000])
    parser.add_argument("--rows", action="store_true", help="print one line per lost item")
    args = parser.parse_args(argv)

    from aptmem.memory.kv_dict import FACTS_KEY
    from aptmem.tokens.tiers import build_estimator
    from experiments.measurements.memory_quality.generators import GENERATORS
    from experiments.measurements.memory_quality.job import memory_config
    from experiments.measurements.memory_quality.replay import replay_workload
    from experiments.measurements.memory_quality.settings import MemoryQualitySettings

    settings = MemoryQualitySettings(strategies=[args.strategy], windows=args.windows, seeds=args.seeds)
    settings.workload.generator = args.generator
    estimator = build_estimator(settings.tier)
    totals: Counter[tuple[int, str]] = Counter()
    for seed in args.seeds:
        workload = GENERATORS[args.generator](settings.workload, seed)
        by_id = {entry.id: entry for session in workload.sessions for entry in session if entry.id}
        for window in args.windows:
            strategy = memory_config(args.strategy)
            with tempfile.TemporaryDirectory(prefix="aptmem-losses-") as scratch:
                root = Path(scratch)
                rows = replay_workload(workload, strategy, settings.policy(window), estimator, [1024], root)
                records = _last_meta(root).get(FACTS_KEY, [])
            end = {row["item"]: row["present"] for row in rows.checks if row["at"] == "end"}
            answered = {(row["item"], row["wording"]): row["answerable"] for row in rows.answers if row["budget"] == 1024}
            for item in workload.items:
                if item.type == "absent" or item.id not in end:
                    continue
                entries = [by_id[e] for e in item.evidence if e in by_id]
                answer = next((a for a in item.answers if a not in "".join(r["text"] for r in records)), item.answers[0])
                cause = _classify(entries, records, end[item.id], answer)
                if cause == "present" and item.type == "update" and not answered.get((item.id, "template"), True):
                    cause = "stale_above"
                totals[(window, cause)] += 1
                if args.rows and cause != "present":
                    said = " / ".join(around(e, answer) for e in entries if answer in around(e, answer))
                    print(f"{seed} {window:>6} {cause:<16} {item.type:<13} {item.kind:<14} {item.carrier:<9} "
                          f"{item.format:<7} {answer!r:<30} {said[:220]!r}")
    for window in args.windows:
        counts = {cause: n for (w, cause), n in totals.items() if w == window}
        print(window, dict(sorted(counts.items())))
    return 0


def around(entry, answer: str, width: int = 110) -> str:  # noqa: ANN001 - script-local
    """The text of an entry around ``answer`` (its planted statement), on one line."""
    from aptmem.memory.statements import entry_text

    text = " ".join(entry_text(entry).split())
    at = text.find(answer)
    return text[max(0, at - width):at + len(answer) + width] if at >= 0 else ""


if __name__ == "__main__":
    sys.exit(main())
