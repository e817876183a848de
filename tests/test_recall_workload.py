"""The recall benchmark's workload (``benchmarks/recall_workload.py``): adding the ``blind3`` split (phase 9) and
the ``blind4`` split (phase 10), and moving the wordings to ``benchmarks/recall_wordings.py`` (phase 11), left every
other question as it was; the ``blind5`` split (phase 11) and the ``blind6`` split (phase 12) did the same; each asks
every held-out fact once per wording, and no development split asks blind5 or blind6 (blind3 is one from phase 10,
blind4 from phase 11).
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
from recall_wordings import BLIND as _BLIND, BLIND2 as _BLIND2, BLIND3 as _BLIND3, BLIND4 as _BLIND4, BLIND5 as _BLIND5  # noqa: E402
from recall_wordings import BLIND6 as _BLIND6, STYLED  # noqa: E402
from recall_wordings import FRESH as _FRESH  # noqa: E402
from recall_workload import _TEXTS, KINDS, SPLITS, build_workload  # noqa: E402

#: The digest of every question of the other splits, computed at main (3856d2b) before blind3 was added,
#: by :func:`_digest` over a workload of 12 sessions of 20 entries with 48 facts. Session ids are random
#: uuids, so the evidence is pinned by entry id only.
PINNED = {7: (310, "c45b1b6f206e39cc0cf5d513d934cb8924904eef069cd6101661ba932164b717"),
          11: (305, "e40d446edca85ab557864ee1e87b1b38f4102e5d6c866a8f089276a4f9370371")}
#: The same digest over every question but blind4's (blind3's too), computed at main (b8e4941) before blind4 was added.
PINNED_BEFORE_BLIND4 = {7: (358, "c3a2ba526085512b84e879cf6fbc8ab5316bdef5b3b8896b17b263b67e1f66f9"),
                        11: (353, "beb59bc29afd5689760c9df4b960cda84cac2f2b71895f7e3e8d37700ca07a17")}

#: The same digest over every question (blind5's aside), computed at main (319a7fa) before the wordings were moved
#: to ``benchmarks/recall_wordings.py`` and blind5 was added: the move and the new split change no other question.
PINNED_BEFORE_BLIND5 = {7: (406, "dfbfce5265ae7add3e6b7171c0cd7091999848b56ffc50e665125967ff12fe11"),
                        11: (401, "f5ead39c7d2131bb0fd5cb9999dcd054dddcc701f30de13e58b6d69145d01e0d")}

#: The same digest over every question (blind6's aside), computed at 5e34cbd before blind6 was added.
PINNED_BEFORE_BLIND6 = {7: (454, "84b1f7b79eff96e601e3f7f540949743e8dc26c93380c65db0e59b4a7af9b73a"),
                        11: (449, "32f9f414452fd3c62c96423149f804d3cab932f851541b2ebfd1e5ad204de85d")}
#: The splits added after each pin, left out of the questions it is compared with.
_AFTER_BLIND5 = ("blind6",)


def _digest(questions: list) -> str:
    rows = sorted("\x1f".join((q.qid, q.fact_id, q.split, q.wording, q.language, q.kind, q.carrier, q.text, q.answer or "",
                               repr([entry for _, entry in q.evidence]), str(q.aggregation))) for q in questions)
    return hashlib.sha256("\x1e".join(rows).encode()).hexdigest()


@pytest.mark.parametrize("seed", sorted(PINNED))
@pytest.mark.parametrize("split", ["blind3", "blind4", "blind5", "blind6"])
def test_the_other_splits_are_unchanged_and_a_blind_split_asks_every_held_out_fact_once_per_wording(
        tmp_path: Path, seed: int, split: str) -> None:
    workload = build_workload(str(tmp_path), seed=seed, sessions=12, entries_per_session=20, facts=48)
    before_blind4 = [q for q in workload.questions if q.split not in ("blind4", "blind5", *_AFTER_BLIND5)]
    assert (len(before_blind4), _digest(before_blind4)) == PINNED_BEFORE_BLIND4[seed], f"seed {seed}: blind4 changed another split"
    others = [q for q in before_blind4 if q.split != "blind3"]
    assert (len(others), _digest(others)) == PINNED[seed], f"seed {seed}: a question of another split changed"
    blind = [q for q in workload.questions if q.split == split]
    held = [f for f in workload.facts if f.split == "held_out"]
    assert held, f"seed {seed}: no held-out fact"
    asked = sorted((q.fact_id, q.wording) for q in blind)
    assert asked == sorted((f.fact_id, w) for f in held for w in ("paraphrase", "other_language")), f"seed {seed}"
    by_fact = {f.fact_id: f for f in held}
    for q in blind:
        fact = by_fact[q.fact_id]
        assert q.answer == fact.answer and q.evidence == ((fact.session_id, fact.entry_id),), q.qid
        assert "{" not in q.text and fact.subject in q.text, q.qid  # every slot filled, the subject named
        # The paraphrase is in the statement's language, the other wording in the other one.
        chinese = sum("\u4e00" <= c <= "\u9fff" for c in q.text) > 3
        assert chinese == ((q.language) == "zh"), q.qid
        assert q.language == (fact.language if q.wording == "paraphrase" else ("zh" if fact.language == "en" else "en")), q.qid
        assert fact.answer not in q.text, f"{q.qid}: the question gives its answer away"


def test_the_blind_splits_have_a_wording_per_kind_and_only_blind5_and_blind6_are_held_out_of_development() -> None:
    for wordings in (_BLIND3, _BLIND4, _BLIND5, _BLIND6):
        assert set(wordings) == set(KINDS)
        assert all(en and zh and en != zh for en, zh in wordings.values())
    assert "blind3" in DEVELOPMENT and "blind4" in DEVELOPMENT and "blind5" not in DEVELOPMENT and "blind6" not in DEVELOPMENT
    # blind6 is built last and printed last before tune, so no earlier split's questions move.
    assert STYLED[-1] == ("blind6", _BLIND6) and SPLITS[-2:] == ("blind6", "tune")


@pytest.mark.parametrize("wordings", [_BLIND3, _BLIND4, _BLIND5, _BLIND6], ids=["blind3", "blind4", "blind5", "blind6"])
def test_a_blind_split_uses_none_of_the_template_relation_words(wordings: dict[str, tuple[str, str]]) -> None:
    # The template's own words, less question words, the slots both wordings must name (the subject, the bug, ...)
    # and "user" (who a preference belongs to, named by every wording).
    common = set("what which is the of for in does do to and why did we use user".split())
    for kind, (en, _) in wordings.items():
        template = _TEXTS[kind]["ask"][0]  # type: ignore[index]
        relation = {w for w in re.findall(r"[a-z]+", re.sub(r"\{\w+\}", " ", template.lower())) if w not in common}
        assert not relation & set(re.findall(r"[a-z]+", re.sub(r"\{\w+\}", " ", en.lower()))), kind
    assert "{key}" not in wordings["env"][0]  # the env template's relation is its key (DATABASE_URL, ...)


@pytest.mark.parametrize("split", ["blind4", "blind5", "blind6"])
def test_a_blind_split_shares_no_wording_with_the_earlier_splits(split: str) -> None:
    styled = [_FRESH, _BLIND, _BLIND2, _BLIND3, _BLIND4, _BLIND5, _BLIND6]
    mine = {"blind4": _BLIND4, "blind5": _BLIND5, "blind6": _BLIND6}[split]
    earlier = [*styled[:styled.index(mine)], {k: tuple(p for pair in _TEXTS[k]["para"] for p in pair) for k in KINDS}]  # type: ignore[attr-defined]
    for kind, pair in mine.items():
        for text in pair:
            assert not any(text in w[kind] for w in earlier), (kind, text)
            # nor a run of five words of one (a shape copied with the slots changed)
            words = re.findall(r"\w+", text.lower())
            runs = {" ".join(words[i:i + 5]) for i in range(len(words) - 4)}
            assert not any(run in " ".join(re.findall(r"\w+", t.lower())) for w in earlier for t in w[kind] for run in runs), (kind, text)


@pytest.mark.parametrize("seed", sorted(PINNED_BEFORE_BLIND5))
def test_moving_the_wordings_out_changed_no_question(tmp_path: Path, seed: int) -> None:
    workload = build_workload(str(tmp_path), seed=seed, sessions=12, entries_per_session=20, facts=48)
    before = [q for q in workload.questions if q.split not in ("blind5", *_AFTER_BLIND5)]
    assert (len(before), _digest(before)) == PINNED_BEFORE_BLIND5[seed], f"seed {seed}: a question changed"


@pytest.mark.parametrize("seed", sorted(PINNED_BEFORE_BLIND6))
def test_adding_blind6_changed_no_other_question(tmp_path: Path, seed: int) -> None:
    workload = build_workload(str(tmp_path), seed=seed, sessions=12, entries_per_session=20, facts=48)
    before = [q for q in workload.questions if q.split != "blind6"]
    assert (len(before), _digest(before)) == PINNED_BEFORE_BLIND6[seed], f"seed {seed}: a question changed"
    assert len(workload.questions) - len(before) == 2 * sum(f.split == "held_out" for f in workload.facts)


#: Per kind, the relation words of its template and fact statement (English words, Chinese substrings) and the
#: brief's list of the usual names for the relation: blind6 must say what the thing is for, never what it is called.
_RELATION_WORDS: dict[str, tuple[set[str], tuple[str, ...]]] = {
    "env": ({"connect", "connects", "connection", "string", "address", "url", "dsn", "host", "port", "environment", "env",
             "database_url", "redis_url", "queue_dsn"}, ("连接", "地址", "环境", "主机", "端口")),
    "branch": ({"release", "branch", "branches"}, ("发布", "分支")),
    "commit": ({"commit", "commits", "fixed", "fix", "fixes", "sha", "hash"}, ("提交", "修复")),
    "ticket": ({"ticket", "tickets", "track", "tracks", "tracker", "issue"}, ("工单", "跟踪")),
    "endpoint": ({"health", "check", "endpoint", "route", "url"}, ("健康检查", "接口", "路由")),
    "pin": ({"pin", "pins", "pinned", "version", "versions", "release", "locked"}, ("固定", "版本", "锁定")),
    "preference": ({"prefer", "prefers", "preference", "preferred"}, ("偏好",)),
    "decision": ({"decide", "decided", "decision", "use", "instead", "because"}, ("决定", "使用", "而不是", "因为")),
}
#: The slots that tell one fact of a kind from another (besides the subject), which each wording must name.
_NEEDED = {"env": (("{env}", "{proto}"), ("{env_zh}", "{proto}")), "commit": (("{bug}",), ("{bug}",)),
           "ticket": (("{topic}",), ("{topic}",)), "pin": (("{lib}",), ("{lib}",))}


@pytest.mark.parametrize("kind", KINDS)
def test_blind6_names_what_tells_a_fact_apart_and_none_of_its_relation_words(kind: str) -> None:
    en, zh = _BLIND6[kind]
    words, substrings = _RELATION_WORDS[kind]
    said = set(re.findall(r"[a-z_]+", re.sub(r"\{\w+\}", " ", en.lower())))
    assert not said & words, (kind, said & words)
    assert not [w for w in substrings if w in re.sub(r"\{\w+\}", " ", zh)], kind
    needed_en, needed_zh = _NEEDED.get(kind, ((), ()))
    assert "{s}" in en and "{s}" in zh and all(slot in en for slot in needed_en) and all(slot in zh for slot in needed_zh), kind
    assert "{v}" not in en + zh and "{v_zh}" not in en + zh, kind  # the answer is never put in the question
