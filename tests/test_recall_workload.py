"""The recall benchmark's workload (``benchmarks/recall_workload.py``): adding the ``blind3`` split left every
other question as it was, blind3 asks each held-out fact once per wording, and no development split asks it.
"""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from recall_fusion import DEVELOPMENT  # noqa: E402
from recall_workload import _BLIND3, _TEXTS, KINDS, build_workload  # noqa: E402

#: The digest of every question of the other splits, computed at main (3856d2b) before blind3 was added,
#: by :func:`_digest` over a workload of 12 sessions of 20 entries with 48 facts. Session ids are random
#: uuids, so the evidence is pinned by entry id only.
PINNED = {7: (310, "c45b1b6f206e39cc0cf5d513d934cb8924904eef069cd6101661ba932164b717"),
          11: (305, "e40d446edca85ab557864ee1e87b1b38f4102e5d6c866a8f089276a4f9370371")}


def _digest(questions: list) -> str:
    rows = sorted("\x1f".join((q.qid, q.fact_id, q.split, q.wording, q.language, q.kind, q.carrier, q.text, q.answer or "",
                               repr([entry for _, entry in q.evidence]), str(q.aggregation))) for q in questions)
    return hashlib.sha256("\x1e".join(rows).encode()).hexdigest()


@pytest.mark.parametrize("seed", sorted(PINNED))
def test_the_other_splits_are_unchanged_and_blind3_asks_every_held_out_fact_once_per_wording(tmp_path: Path, seed: int) -> None:
    workload = build_workload(str(tmp_path), seed=seed, sessions=12, entries_per_session=20, facts=48)
    others = [q for q in workload.questions if q.split != "blind3"]
    assert (len(others), _digest(others)) == PINNED[seed], f"seed {seed}: a question of another split changed"
    blind3 = [q for q in workload.questions if q.split == "blind3"]
    held = [f for f in workload.facts if f.split == "held_out"]
    assert held, f"seed {seed}: no held-out fact"
    asked = sorted((q.fact_id, q.wording) for q in blind3)
    assert asked == sorted((f.fact_id, w) for f in held for w in ("paraphrase", "other_language")), f"seed {seed}"
    by_fact = {f.fact_id: f for f in held}
    for q in blind3:
        fact = by_fact[q.fact_id]
        assert q.answer == fact.answer and q.evidence == ((fact.session_id, fact.entry_id),), q.qid
        assert "{" not in q.text and fact.subject in q.text, q.qid  # every slot filled, the subject named
        # The paraphrase is in the statement's language, the other wording in the other one.
        chinese = sum("\u4e00" <= c <= "\u9fff" for c in q.text) > 3
        assert chinese == ((q.language) == "zh"), q.qid
        assert q.language == (fact.language if q.wording == "paraphrase" else ("zh" if fact.language == "en" else "en")), q.qid
        assert fact.answer not in q.text, f"{q.qid}: the question gives its answer away"


def test_blind3_has_a_wording_per_kind_and_is_no_development_split() -> None:
    assert set(_BLIND3) == set(KINDS)
    assert all(en and zh and en != zh for en, zh in _BLIND3.values())
    assert "blind3" not in DEVELOPMENT


def test_blind3_uses_none_of_the_template_relation_words() -> None:
    # The template's own words, less question words, the slots both wordings must name (the subject, the bug, ...)
    # and "user" (who a preference belongs to, named by every wording).
    common = set("what which is the of for in does do to and why did we use user".split())
    for kind, (en, _) in _BLIND3.items():
        template = _TEXTS[kind]["ask"][0]  # type: ignore[index]
        relation = {w for w in re.findall(r"[a-z]+", re.sub(r"\{\w+\}", " ", template.lower())) if w not in common}
        assert not relation & set(re.findall(r"[a-z]+", re.sub(r"\{\w+\}", " ", en.lower()))), kind
    assert "{key}" not in _BLIND3["env"][0]  # the env template's relation is its key (DATABASE_URL, ...)
