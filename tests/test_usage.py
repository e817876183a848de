"""Token estimates against the usage the provider reported: request extraction, the statistics, and
``aptmem usage-check`` on the shared fixtures."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.entries import Assistant, Compaction, User
from aptmem.importers import iter_entries
from aptmem.importers.usage import Request, calibrate, input_tokens, session_requests, tier_stats
from aptmem.tokens import MESSAGE_OVERHEAD
from aptmem.tokens.tiers import build_estimator

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"


def requests_of(name: str, tiers: tuple[str, ...] = ("rough:bytes",)) -> tuple[list[Request], int]:
    fmt = "pi" if name.startswith("pi") else "claude-code"
    estimators = {t: build_estimator(t) for t in tiers}
    return session_requests(iter_entries(fmt, FIXTURES / name), estimators, session=name, fmt=fmt)


@pytest.mark.parametrize(("name", "with_usage", "without"), [
    ("claude-code-short.jsonl", 1, 0), ("claude-code-tool_heavy.jsonl", 4, 0),
    ("claude-code-subagent.jsonl", 12, 0), ("claude-code-compacted-auto.jsonl", 139, 0),
    ("claude-code-compacted-manual.jsonl", 217, 0), ("pi-large-session.jsonl", 439, 14)])
def test_requests_with_usage_per_fixture(name: str, with_usage: int, without: int) -> None:
    found, none = requests_of(name)
    assert (len(found), none) == (with_usage, without)
    assert [r.index for r in found] == list(range(with_usage))
    assert all(r.reported > 0 for r in found)


def test_reported_input_side_of_each_format() -> None:
    assert input_tokens({"input_tokens": 3, "cache_creation_input_tokens": 13835, "cache_read_input_tokens": 11515,
                         "output_tokens": 13}) == 25353
    assert input_tokens({"input": 3, "output": 191, "cacheRead": 7, "cacheWrite": 1684}) == 1694
    assert input_tokens({"output": 5}) is None and input_tokens(None) is None
    first, _ = requests_of("claude-code-short.jsonl")
    request = first[0]
    # The context of the first request is the session metadata (0 tokens) and the user's message.
    assert (request.reported, request.seq, request.context_entries, request.output) == (25353, 2, 2, 13)
    # As the user message is rendered: the message's framing, its role, its text (rough: bytes / 4, rounded up).
    text = "mix phx.server doesnt seem to start"
    assert request.estimates["rough:bytes"] == MESSAGE_OVERHEAD + -(-len("user") // 4) + -(-len(text) // 4) == 14


def test_estimates_grow_with_the_context_and_a_compaction_resets_them() -> None:
    usage = {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    entries = [User(ts=1, id="u1", content="x" * 400), Assistant(ts=2, id="a1", content="ok", usage=usage),
               User(ts=3, id="u2", content="y" * 400), Assistant(ts=4, id="a2", content="ok", usage=usage),
               Compaction(ts=5, id="c", summary="short", first_kept="u2"),
               Assistant(ts=6, id="a3", content="ok", usage=usage),
               Compaction(ts=7, id="c2", summary="tiny"),
               Assistant(ts=8, id="a4", content="ok", usage=usage)]
    found, _ = session_requests(entries, {"r": build_estimator("rough:bytes")}, session="s", fmt="claude-code")
    totals = [r.estimates["r"] for r in found]
    assert totals[0] < totals[1]
    assert totals[2] < totals[1] and found[2].context_entries == 3  # summary, u2, a2 (first_kept u2)
    assert found[3].context_entries == 1  # only the summary (no first_kept)


def _req(session: str, index: int, estimate: int, reported: int) -> Request:
    return Request(session=session, format="f", index=index, seq=index, entry_id=None, ts=0, model=None,
                   reported=reported, output=None, estimates={"t": estimate}, context_entries=1)


def test_statistics_on_known_answers() -> None:
    # reported = 1000 + 1.25 * estimate exactly, in three sessions: the fit recovers it out of sample.
    requests = [_req(s, i, e, 1000 + e * 5 // 4) for s in "abc" for i, e in enumerate((400, 800, 1600, 3200))]
    stats = tier_stats(requests, "t")
    assert stats.requests == 12 and stats.overhead_requests == 9
    assert stats.median_overhead == pytest.approx(1100)  # reported - estimate at each session's first request
    assert stats.median_ratio == pytest.approx(statistics.median(e / (1000 + e * 5 // 4) for e in (400, 800, 1600, 3200)))
    assert stats.mape_overhead > 0  # adding the first gap misses the slope: the calibration below does not
    cal = calibrate(requests, "t")
    assert cal.split == "leave one session out" and cal.folds == 3 and cal.test_requests == 12
    assert (cal.intercept, cal.slope) == (pytest.approx(1000), pytest.approx(1.25))
    assert cal.test_mape == pytest.approx(0, abs=1e-9) and cal.train_mape == pytest.approx(0, abs=1e-9)
    one = calibrate([r for r in requests if r.session == "a"], "t")
    assert one.split == "chronological halves of one session" and one.test_requests == 2
    assert calibrate(requests[:1], "t").split == "too few requests"


def _usage_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aptmem", "usage-check", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_command_line_usage_check_claude_code_folder() -> None:
    done = _usage_check(str(FIXTURES), "--from", "claude-code", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["requests"] == 373
    assert [s["requests"] for s in out["sessions"]] == [139, 217, 1, 12, 4]
    assert out["left_out"] == ["pi-large-session.jsonl: a pi transcript"]
    assert set(out["tiers"]) == {"rough:bytes", "medium", "precise:cl100k_base", "model", "anchored"}
    for name in ("rough:bytes", "medium", "precise:cl100k_base"):
        tier = out["tiers"][name]
        assert 0 < tier["median_ratio"] < 1 and tier["mape"] > 50  # the system prompt and tools are not in a transcript
        assert tier["mape_overhead"] < 30
    anchored = out["tiers"]["anchored"]
    assert anchored["mape"] < 1 and anchored["p95_abs_error"] < 1500 and anchored["max_abs_error"] > 0
    assert out["estimators"]["anchored"] == "anchored(claude-code, tiktoken:cl100k_base)"
    for source in out["sessions"]:  # per-session figures of every tier
        assert set(source["tiers"]) == set(out["tiers"])
        assert source["tiers"]["anchored"]["mape"] <= 2 and source["tiers"]["anchored"]["p95_abs_error"] <= 2000
    assert out["calibration"]["medium"]["split"] == "leave one session out"


def test_command_line_usage_check_with_a_profile_file_and_a_bad_one(tmp_path: Path) -> None:
    from aptmem.tokens.profile import encode_profile, load_profile

    own = tmp_path / "mine.json"
    own.write_bytes(encode_profile(load_profile("pi")))
    done = _usage_check(str(FIXTURES / "pi-large-session.jsonl"), "--from", "pi", "--tiers", "anchored:medium,model",
                        "--profile", str(own), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["estimators"] == {"anchored:medium": "anchored(pi, medium)", "model": "model(pi, tiktoken:cl100k_base)"}
    assert out["tiers"]["anchored:medium"]["mape"] < 2
    own.write_text("{}")
    done = _usage_check(str(FIXTURES / "pi-large-session.jsonl"), "--from", "pi", "--tiers", "anchored", "--profile", str(own))
    assert done.returncode == 2 and "mine.json: not a provider profile" in done.stderr


def test_command_line_usage_check_pi_file_and_errors(tmp_path: Path) -> None:
    done = _usage_check(str(FIXTURES / "pi-large-session.jsonl"), "--from", "pi", "--json", "--tiers", "rough:chars,medium")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["requests"] == 439 and out["sessions"][0]["requests_without_usage"] == 14
    assert set(out["tiers"]) == {"rough:chars", "medium"}
    assert {"mape", "median_ratio"} <= set(out["tiers"]["medium"])
    assert out["calibration"]["medium"]["split"] == "chronological halves of one session"
    human = _usage_check(str(FIXTURES / "pi-large-session.jsonl"), "--from", "pi", "--tiers", "rough:bytes")
    assert human.returncode == 0 and "439 requests with usage" in human.stdout
    assert _usage_check(str(tmp_path), "--from", "pi").returncode == 2  # a folder with no transcript
    assert _usage_check(str(FIXTURES / "pi-large-session.jsonl"), "--from", "pi", "--tiers", "bogus").returncode == 2
    torn = tmp_path / "torn.jsonl"
    torn.write_bytes((FIXTURES / "claude-code-subagent.jsonl").read_bytes()[:-100])
    done = _usage_check(str(torn), "--from", "claude-code", "--json")
    assert done.returncode == 1 and json.loads(done.stdout.strip().splitlines()[-1])["requests"] == 12
