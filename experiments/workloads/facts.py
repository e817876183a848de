"""Planted facts: sentences with known answers hidden in a synthetic session.

A compaction summary is good when it keeps what the conversation will need later. To score
that, the workload plants facts (a deploy key, a config path, a port, an owner's name, ...) at
known places and records each with a question and its exact answer; a scorer then checks
whether the answer survives in the summary or the kept turns.

Every answer is a distinctive token (hex keys, five-digit ports, absolute paths, dates), so
finding it in a text means the fact was kept, not that it turned up by chance.
"""

from __future__ import annotations

import random

import msgspec

from experiments.workloads.text import PROJECTS, name_zh

__all__ = ["FACT_KINDS", "PlantedFact", "draw_fact"]


class PlantedFact(msgspec.Struct, frozen=True, kw_only=True):
    """One fact planted in a session, where it was put, and how to ask for it back."""

    #: ``fact_000``, ``fact_001``, ... in order of planting.
    id: str
    #: what sort of fact (``deploy_key``, ``config_path``, ``port``, ...), see :data:`FACT_KINDS`.
    kind: str
    #: ``english`` or ``chinese``: the language of ``text`` and ``question``.
    lang: str
    #: what the fact is about (a project or service name).
    subject: str
    #: the sentence as planted, verbatim in the carrying entry's content.
    text: str
    #: a question whose answer is ``answer``.
    question: str
    #: the exact string a summary must contain to have kept the fact.
    answer: str
    #: 0-based turn of the session the fact was planted in.
    turn: int = -1
    #: id of the entry carrying the fact, and its type (user, assistant, tool_result).
    entry_id: str = ""
    entry_type: str = ""


def _deploy_key(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = rng.choice(PROJECTS)
    answer = f"dk_{rng.getrandbits(80):020x}"
    return ("english", subject, f"The deploy key for project {subject} is {answer}.",
            f"What is the deploy key for project {subject}?", answer)


def _config_path(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = f"{rng.choice(PROJECTS)}-{rng.choice(('api', 'worker', 'gateway', 'indexer'))}"
    answer = f"/srv/{subject}/etc/{rng.choice(('main', 'prod', 'live'))}-{rng.randrange(100, 999)}.toml"
    return ("english", subject, f"The config file of service {subject} is at {answer}.",
            f"Where is the config file of service {subject}?", answer)


def _port(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = f"{rng.choice(PROJECTS)}-{rng.choice(('metrics', 'admin', 'rpc'))}"
    answer = str(rng.randrange(20000, 39999))
    return ("english", subject, f"Service {subject} listens on port {answer}.",
            f"Which port does service {subject} listen on?", answer)


def _budget(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = rng.choice(PROJECTS)
    answer = f"{rng.randrange(100, 999)},{rng.randrange(100, 999)} USD"
    return ("english", subject, f"The Q3 budget for team {subject} is {answer}.",
            f"What is the Q3 budget for team {subject}?", answer)


def _release_date(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = rng.choice(PROJECTS)
    answer = f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    version = f"v{rng.randrange(1, 9)}.{rng.randrange(0, 20)}"
    return ("english", subject, f"The {version} release of {subject} is scheduled for {answer}.",
            f"When is the {version} release of {subject} scheduled?", answer)


def _owner_zh(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = rng.choice(PROJECTS)
    answer = name_zh(rng, given=2)  # two given parts: no such name occurs in the prose pools
    return ("chinese", subject, f"项目{subject}的负责人是{answer}。", f"项目{subject}的负责人是谁？", answer)


def _backup_zh(rng: random.Random) -> tuple[str, str, str, str, str]:
    subject = f"{rng.choice(PROJECTS)}_db"
    answer = f"/backup/{subject}/{rng.getrandbits(32):08x}"
    return ("chinese", subject, f"数据库{subject}的备份路径是{answer}。", f"数据库{subject}的备份路径是什么？", answer)


#: fact kinds and how to draw one; each returns (lang, subject, text, question, answer).
FACT_KINDS = {
    "deploy_key": _deploy_key,
    "config_path": _config_path,
    "port": _port,
    "budget": _budget,
    "release_date": _release_date,
    "owner": _owner_zh,
    "backup_path": _backup_zh,
}


def draw_fact(rng: random.Random, index: int, taken: set[tuple[str, str]]) -> PlantedFact:
    """Draw fact number ``index``: a kind and subject not used yet, so every question has one answer."""
    kinds = list(FACT_KINDS)
    for _ in range(1000):
        kind = rng.choice(kinds)
        lang, subject, text, question, answer = FACT_KINDS[kind](rng)
        if (kind, subject) not in taken:
            taken.add((kind, subject))
            return PlantedFact(id=f"fact_{index:03d}", kind=kind, lang=lang, subject=subject,
                               text=text, question=question, answer=answer)
    raise ValueError("ran out of distinct fact subjects; plant fewer facts")
