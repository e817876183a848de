"""Memory strategies: the seam, the registry and its YAMLs, each strategy in a real Session, hand-over, the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from hydra.utils import instantiate
from omegaconf import OmegaConf

from aptmem.compaction.extractive import ExtractiveSummarizer
from aptmem.compaction.policy import CompactionPolicy
from aptmem.continuation import create_session
from aptmem.entries import Assistant, Compaction, ToolCall, ToolResult, User
from aptmem.errors import MemoryStrategyError
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.memory.base import MemoryStrategy
from aptmem.memory.handoff import continue_with_memory, run_with_memory
from aptmem.memory.hierarchical import SUMMARIES_KEY
from aptmem.memory.kv_dict import FACTS_KEY, FactRecord
from aptmem.memory.masking import MASK_PREFIX, ObservationMasking
from aptmem.memory.recall import RecallMemory
from aptmem.memory.registry import MEMORY_STRATEGIES, memory_names, memory_strategy
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.working_memory import WorkingMemory
from experiments.workloads.synthetic import generate

ROOT = Path(__file__).resolve().parent.parent
OFFLINE = [name for name in memory_names() if name != "llm"]
MEDIUM = get_estimator("medium")


def _turn(i: int, fact: str = "", pad: int = 3000) -> list:
    """One turn: a question, a tool call with a long output, a reply carrying ``fact``."""
    filler = " ".join(f"line {i}.{k} of the log says nothing in particular today" for k in range(pad // 50))
    return [User(ts=1000 * i, id=f"u{i}", content=f"Please look at step {i}."),
            ToolCall(ts=1000 * i + 1, id=f"c{i}", name="bash", args={"command": "make"}),
            ToolResult(ts=1000 * i + 2, id=f"r{i}", call_id=f"c{i}", name="bash", content=filler),
            Assistant(ts=1000 * i + 3, id=f"a{i}", content=f"Done with step {i}. {fact}".strip())]


def _history(turns: int, facts: dict[int, str]) -> list:
    return [e for i in range(turns) for e in _turn(i, facts.get(i, ""))]


def _session(store: JsonlStore, root: Path, strategy: MemoryStrategy, window: int = 4000) -> Session:
    sid = create_session(store, root)
    return Session(store, sid, policy=CompactionPolicy(window=window), estimator=MEDIUM,
                   memory=WorkingMemory(root, sid), memory_strategy=strategy)


@pytest.mark.parametrize("path", sorted((ROOT / "configs" / "memory").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_memory_yaml_builds_the_registered_strategy(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # never contacted: only built
    monkeypatch.setenv("APTMEM_LLM_MODEL", "m")
    built = instantiate(OmegaConf.load(path))
    registered = memory_strategy(path.stem, **({"model": "m"} if path.stem == "llm" else {}))
    assert isinstance(built, MemoryStrategy)
    assert built.name == registered.name == path.stem
    assert type(built) is type(registered) and type(built.summarizer) is type(registered.summarizer)
    assert set(memory_names()) == {p.stem for p in path.parent.glob("*.yaml")}
    # One source of truth: the YAML states the registry's defaults, every setting of the strategy and its summarizer.
    assert _settings(built) == _settings(registered), f"{path} and the registry's {path.stem} disagree"


def _settings(value: object, depth: int = 0) -> object:
    """An object's public attributes, recursively (caches, private, are left out)."""
    if depth > 3 or not hasattr(value, "__dict__"):
        return value
    return {k: _settings(v, depth + 1) for k, v in vars(value).items() if not k.startswith("_")}


def test_the_measurement_builds_each_strategy_from_its_yaml_as_the_registry_does() -> None:
    from experiments.measurements.memory_quality.job import memory_config

    for name in OFFLINE:
        assert _settings(memory_config(name)) == _settings(memory_strategy(name)), name
    assert memory_config("salient", recent_share=0.5).summarizer.recent_share == 0.5  # type: ignore[attr-defined]


def test_unknown_names_and_double_summarizers_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown memory strategy"):
        memory_strategy("telepathy")
    with JsonlStore(tmp_path) as store, pytest.raises(ValueError, match="not both"):
        Session(store, new_session_id(), policy=CompactionPolicy(window=4000), estimator=MEDIUM,
                summarizer=ExtractiveSummarizer(), memory_strategy=memory_strategy("salient"))


@pytest.mark.parametrize("name", OFFLINE)
def test_each_strategy_runs_a_session_and_a_reopened_session_shows_the_same_context(name: str, tmp_path: Path) -> None:
    strategy = MEMORY_STRATEGIES[name]()
    with JsonlStore(tmp_path) as store:
        session, report = run_with_memory(generate(turns=40, seed=5).entries, store, tmp_path, strategy=strategy,
                                          policy=CompactionPolicy(window=8000), estimator=MEDIUM)
        assert (report.compactions > 0) == strategy.compacts
        if strategy.compacts:
            assert report.max_occupancy < 1.0
        again = Session(store, session.session_id, policy=session.policy, estimator=MEDIUM,
                        memory=WorkingMemory(tmp_path, session.session_id), memory_strategy=strategy)
        if isinstance(strategy, RecallMemory):
            # What recall finds depends on the index beside the logs, which learnt of the entries appended
            # since the last turn (BM25 statistics move): the system text may differ, the history may not.
            assert again.context().messages[1:] == session.context().messages[1:]
            assert again.context().messages[0]["content"].startswith(session.context().messages[0]["content"][:40])
        else:
            assert again.context().messages == session.context().messages
            assert again.tokens() == session.tokens()


def test_none_keeps_no_summary_and_full_history_keeps_everything(tmp_path: Path) -> None:
    history = _history(12, {0: "The deploy key for atlas is dk_0123456789abcdef01."})
    with JsonlStore(tmp_path) as store:
        none = _session(store, tmp_path, memory_strategy("none"))
        full = _session(store, tmp_path, memory_strategy("full_history"))
        for entry in history:
            none.append(entry)
            full.append(entry)
        assert any(isinstance(e, Compaction) and e.summary == "" for e in none.live)
        text = full.context().text()
        assert "dk_0123456789abcdef01" in text and full.tokens() > full.policy.window
        assert "dk_0123456789abcdef01" not in none.context().text()


def test_kv_dict_keeps_facts_in_the_sidecar_and_an_update_supersedes_only_its_own_slot(tmp_path: Path) -> None:
    history = _history(14, {0: "Service atlas-rpc listens on port 31234.", 1: "Service atlas-admin listens on port 31999.",
                            6: "atlas-rpc moved to port 40001, so update your tunnels."})
    with JsonlStore(tmp_path) as store:
        session = _session(store, tmp_path, memory_strategy("kv_dict"))
        for entry in history:
            session.append(entry)
        records = msgspec.convert(session.memory.get(FACTS_KEY), list[FactRecord])  # type: ignore[union-attr]
        rpc = [r for r in records if r.value == "40001"]
        assert rpc and [b.value for b in rpc[0].before] == ["31234"]
        assert any(r.value == "31999" and not r.before for r in records), "a near miss of another service is no update"
        system = session.context().rendered.system_text
        assert "40001" in system and "31999" in system
        assert "Working state" not in system, "the strategy's own keys are not dumped as JSON"


def test_kv_dict_shows_the_records_a_question_asks_about_even_when_others_fill_its_budget() -> None:
    from aptmem.memory.kv_dict import KeyValueMemory
    from aptmem.working_memory import SessionMeta

    count = get_estimator("medium").count
    noise = [FactRecord(value=f"{i:05d}", shape="number", text=f"worker-{i} retried job {i:05d}", subject=[f"worker-{i}"],
                        anchors=["job", "retried"], salience=20.0, since=i) for i in range(400)]
    wanted = FactRecord(value="dk_5d250efb8f794e", shape="key", text="raven deploy key: dk_5d250efb8f794e", subject=["raven"],
                        anchors=["deploy", "key"], salience=1.0, since=0)
    meta = SessionMeta(session_id=new_session_id(), created=0, updated=0,
                       working={FACTS_KEY: msgspec.to_builtins([*noise, wanted])})
    memory = KeyValueMemory()
    assert "dk_5d250efb8f794e" not in memory.system_text(meta, query="", window=8000, count=count)
    assert "dk_5d250efb8f794e" in memory.system_text(meta, query="What is the deploy key of raven?", window=8000, count=count)
    assert "dk_5d250efb8f794e" not in KeyValueMemory(query_records=0).system_text(
        meta, query="What is the deploy key of raven?", window=8000, count=count)


def test_kv_dict_and_hier_summary_need_a_sidecar(tmp_path: Path) -> None:
    for name in ("kv_dict", "hier_summary"):
        with JsonlStore(tmp_path / name) as store:
            session = Session(store, new_session_id(), policy=CompactionPolicy(window=4000), estimator=MEDIUM,
                              memory_strategy=memory_strategy(name))
            with pytest.raises(MemoryStrategyError, match="WorkingMemory"):
                for entry in _history(10, {}):
                    session.append(entry)


def test_obs_mask_hides_old_tool_output_in_the_context_but_not_on_disk(tmp_path: Path) -> None:
    with JsonlStore(tmp_path) as store:
        masked = _session(store, tmp_path, memory_strategy("obs_mask"), window=200_000)
        plain = _session(store, tmp_path, memory_strategy("extractive"), window=200_000)
        for entry in _history(8, {}):
            masked.append(entry)
            plain.append(entry)
        shown = [m.text for m in masked.context().rendered.messages if m.role == "tool"]
        assert sum(MASK_PREFIX in c for c in shown) == 8 - 3, "all but the last 3 turns' outputs are masked"
        assert masked.tokens() < plain.tokens() / 2
        assert masked.cheap_tokens() == masked._cheap.recount(), "the running total is the masked view's"
        on_disk = [e for e in store.iter_entries(masked.session_id) if isinstance(e, ToolResult)]
        assert not any(MASK_PREFIX in e.content for e in on_disk)


def test_hier_summary_keeps_a_leaf_per_compaction_and_retrieves_old_lines_for_a_query(tmp_path: Path) -> None:
    facts = {i: f"Service svc-{i} listens on port {30000 + i}." for i in range(0, 40, 2)}
    with JsonlStore(tmp_path) as store:
        session = _session(store, tmp_path, memory_strategy("hier_summary"), window=4000)
        for entry in _history(40, facts):
            session.append(entry)
        tree = session.memory.get(SUMMARIES_KEY)  # type: ignore[union-attr]
        compactions = sum(isinstance(e, Compaction) for e in store.iter_entries(session.session_id))
        assert len(tree["leaves"]) == compactions > 3
        asked = session.context("Which port does service svc-2 listen on?").text()
        assert "30002" in asked


@pytest.mark.parametrize(("name", "kept"), [("none", False), ("salient", True), ("kv_dict", True), ("full_history", True)])
def test_continuing_carries_what_the_strategy_declares(name: str, kept: bool, tmp_path: Path) -> None:
    strategy = memory_strategy(name)
    with JsonlStore(tmp_path) as store:
        session = _session(store, tmp_path, strategy, window=6000)
        for entry in _history(4, {3: "The deploy key for atlas is dk_0123456789abcdef01."}):
            session.append(entry)  # the fact is in the last turn: kept verbatim, never summarized
        new_id = continue_with_memory(strategy, store, tmp_path, session.session_id, policy=session.policy,
                                      count=MEDIUM.count)
        after = Session(store, new_id, policy=session.policy, estimator=MEDIUM, memory=WorkingMemory(tmp_path, new_id),
                        memory_strategy=strategy)
        text = after.context().text()
        assert ("dk_0123456789abcdef01" in text) is kept
        assert WorkingMemory(tmp_path, new_id).load().parent == session.session_id


def test_the_command_line_replays_through_a_memory_strategy_into_a_root(tmp_path: Path) -> None:
    src = tmp_path / "src.jsonl"
    src.write_bytes(generate(turns=30, seed=2).encode())
    root = tmp_path / "root"
    done = subprocess.run([sys.executable, "-m", "aptmem", "replay", str(src), "--window", "8000", "--memory", "kv_dict",
                           "--into", str(root), "--no-confirm", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["memory"] == "kv_dict" and out["compactions"] > 0
    assert WorkingMemory(root, out["session_id"]).get(FACTS_KEY)
    bad = subprocess.run([sys.executable, "-m", "aptmem", "replay", str(src), "--window", "8000", "--memory", "nope"],
                         capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "unknown memory strategy" in bad.stderr


@pytest.mark.parametrize("name", ["kv_dict", "obs_mask", "hier_summary"])
def test_aptmem_context_prints_what_the_strategy_puts_in_context_after_a_replay_into_a_root(name: str, tmp_path: Path) -> None:
    from aptmem.context.openai import to_openai
    from aptmem.memory.registry import STRATEGY_KEY
    from experiments.core.knowledge import rendered

    src = tmp_path / "src.jsonl"
    src.write_bytes(generate(turns=30, seed=3).encode())
    root = tmp_path / "root"
    done = subprocess.run([sys.executable, "-m", "aptmem", "replay", str(src), "--window", "8000", "--memory", name,
                           "--into", str(root), "--no-confirm", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    sid = json.loads(done.stdout.splitlines()[-1])["session_id"]
    assert WorkingMemory(root, sid).get(STRATEGY_KEY)["name"] == name
    shown = subprocess.run([sys.executable, "-m", "aptmem", "context", "--root", str(root), sid, "--format", "openai"],
                           capture_output=True, text=True, cwd=ROOT)
    assert shown.returncode == 0, shown.stderr
    with JsonlStore(root) as store:  # the session as the measurement opens and scores it
        session = Session(store, sid, policy=CompactionPolicy(window=8000), estimator=MEDIUM,
                          memory=WorkingMemory(root, sid), memory_strategy=memory_strategy(name))
        assert json.loads(shown.stdout) == to_openai(session.context().rendered)
        scored = "\n".join(text for _, text in rendered(session))
    printed = json.loads(shown.stdout)["messages"]
    assert printed[0]["role"] == "system" and printed[0]["content"] in scored
    plain = subprocess.run([sys.executable, "-m", "aptmem", "context", "--root", str(root), sid, "--no-memory"],
                           capture_output=True, text=True, cwd=ROOT)
    assert plain.returncode == 0 and (name != "kv_dict" or json.loads(plain.stdout) != json.loads(shown.stdout))


class _Recording(ObservationMasking):
    """obs_mask that also records what each ``remember`` was handed."""

    def __init__(self) -> None:
        super().__init__()
        self.handed: list[list] = []

    def remember(self, summarized, summary, memory, *, count):  # type: ignore[no-untyped-def]
        self.handed.append(list(summarized))


def _tool_turn(i: int, secret: str = "") -> list:
    """A turn whose tool output (long enough to be masked) holds ``secret`` in its middle."""
    body = " ".join(f"row {i}.{k} nothing to see" for k in range(60))
    return [User(ts=1000 * i, id=f"u{i}", content=f"Please run step {i}."),
            ToolCall(ts=1000 * i + 1, id=f"c{i}", name="bash", args={"command": "make"}),
            ToolResult(ts=1000 * i + 2, id=f"r{i}", call_id=f"c{i}", name="bash",
                       content=f"{body}\nThe staging deploy key is {secret}.\n{body}" if secret else body),
            Assistant(ts=1000 * i + 3, id=f"a{i}", content=f"Step {i} done.")]


def test_what_leaves_the_context_is_summarized_and_remembered_as_the_context_showed_it(tmp_path: Path) -> None:
    # A masked output's value was never shown: neither the summary nor the strategy's memory may hold it,
    # at a compaction or at a hand-over; an output still shown when it leaves is summarized.
    strategy = _Recording()
    secret, kept_masked, shown = "dk_masked0123456789ab", "dk_keptmasked01234567", "dk_shown0123456789abcd"
    secrets = {0: secret, 5: kept_masked, 13: shown}
    with JsonlStore(tmp_path) as store:
        session = _session(store, tmp_path, strategy, window=200_000)
        for i in range(14):  # a compaction keeps the last 10 turns: it summarizes turns 0-3, keeps 5 (masked) and 13
            for entry in _tool_turn(i, secrets.get(i, "")):
                session.append(entry)
        assert secret not in session.context().text(), "turn 0's output is masked in the context"
        session.compact()
        marker = next(e for e in store.iter_entries(session.session_id) if isinstance(e, Compaction))
        assert secret not in marker.summary
        handed = [e for batch in strategy.handed for e in batch]
        assert handed and not any(secret in getattr(e, "content", "") for e in handed)
        new_id = continue_with_memory(strategy, store, tmp_path, session.session_id, policy=session.policy,
                                      count=MEDIUM.count)
        carried = next(e for e in store.iter_entries(new_id) if isinstance(e, Compaction))
        assert secret not in carried.summary and kept_masked not in carried.summary
        assert shown in carried.summary, "the last turn's output was shown: the hand-over summarizes it"


def test_a_compaction_that_shortens_a_kept_output_summarizes_what_the_cut_takes_out(tmp_path: Path) -> None:
    # The turn in progress is kept, but its tool output is too big for the target: its middle is cut from
    # the context, and the fact in it goes to the summary rather than nowhere.
    from aptmem.compaction.compactor import build_compaction
    from aptmem.compaction.salient import SalientSummarizer

    filler = "\n".join(f"row {k}: nothing of note in this part of the listing" for k in range(120))
    entries = [*_turn(0), User(ts=9000, id="u9", content="Please check the build."),
               ToolCall(ts=9001, id="c9", name="bash", args={"command": "make"}),
               ToolResult(ts=9002, id="r9", call_id="c9", name="bash",
                          content=f"{filler}\nService atlas-rpc listens on port 31234.\n{filler}")]
    policy = CompactionPolicy(window=6000)
    counts = [MEDIUM.count(e.content if hasattr(e, "content") else "x") + 4 for e in entries]
    result = build_compaction(entries, counts, policy=policy, summarizer=SalientSummarizer(), count_text=MEDIUM.count,
                              count_entry=lambda e: MEDIUM.count(getattr(e, "content", "") or "x") + 4, fixed_tokens=0)
    assert result.plan.truncated, "the kept output is shortened"
    kept_text = " ".join(getattr(e, "content", "") for e in result.plan.kept)
    assert "31234" not in kept_text, "the cut took the fact out of the context"
    assert result.plan.shortened and "31234" in result.plan.shortened[0].content
    assert result.entry is not None and "31234" in result.entry.summary
