"""Measuring provider profiles: the fit on known answers, and the shipped profiles remade by the command."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.tokens.calibration.errors import error_figures, nearest_rank
from aptmem.tokens.calibration.profile_fit import Observation, _lad, fit_profile
from aptmem.tokens.profile import load_profile

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_fit_recovers_ratio_and_framing_despite_outliers(seed: int) -> None:
    rng = random.Random(seed)
    rows = []
    for _ in range(300):
        tokens, messages = rng.randrange(10, 5000), rng.randrange(1, 6)
        step = 1.2 * tokens + 25 * messages + rng.gauss(0, 3)
        if rng.random() < 0.1:  # hidden thinking or an aborted reply: far off, one way
            step += rng.randrange(2000, 30000)
        rows.append((step, float(tokens), float(messages)))
    ratio, framing = _lad(rows)
    assert ratio == pytest.approx(1.2, abs=0.01), f"seed {seed}"
    assert framing == pytest.approx(25, abs=3), f"seed {seed}"


def test_fixed_part_and_reattached_are_medians_of_what_was_seen() -> None:
    def session(fixed: int, reattached: int | None) -> list[Observation]:
        obs, reported, live = [], fixed + 1.5 * 100 + 2 * 1, (100, 1)
        obs.append(Observation(reported=round(reported), since_tokens=0, since_messages=0, compacted=False,
                               live_tokens=live[0], live_messages=live[1]))
        for tokens, messages in ((200, 2), (40, 3), (1000, 1), (10, 4), (300, 2)):
            reported += 1.5 * tokens + 2 * messages
            live = (live[0] + tokens, live[1] + messages)
            obs.append(Observation(reported=round(reported), since_tokens=tokens, since_messages=messages,
                                   compacted=False, live_tokens=live[0], live_messages=live[1]))
        if reattached is not None:  # a compaction: the live context is a 50-token summary
            obs.append(Observation(reported=round(fixed + 1.5 * 50 + 2 + reattached), since_tokens=80, since_messages=2,
                                   compacted=True, live_tokens=50, live_messages=1))
        return obs

    profile = fit_profile("t", "cl100k_base", {"a": session(1000, 300), "b": session(1200, None), "c": session(900, 500)})
    assert (profile.ratio, profile.framing, profile.fixed, profile.reattached) == (1.5, 2.0, 1000, 400)
    assert profile.calibration["fixed_per_session"] == {"a": 1000, "b": 1200, "c": 900}
    with pytest.raises(ValueError, match="nothing to fit"):
        fit_profile("t", "cl100k_base", {"a": session(1000, None)[:1]})


def test_error_figures() -> None:
    figures = error_figures([(110, 100), (90, 100), (100, 100), (300, 200)])
    assert figures.mape == pytest.approx(70 / 4) and figures.max_abs_error == 100 and figures.p95_abs_error == 100
    assert figures.mean_signed_error == pytest.approx(25)
    assert nearest_rank(list(range(1, 101)), 0.95) == 95 and nearest_rank([7], 0.95) == 7
    assert error_figures([]).mape is None


def _usage_check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aptmem", "usage-check", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


@pytest.mark.parametrize("fmt", ["claude-code", "pi"])
def test_the_shipped_profiles_are_what_the_command_measures(fmt: str, tmp_path: Path) -> None:
    out = tmp_path / f"{fmt}.json"
    done = _usage_check(str(FIXTURES), "--from", fmt, "--tiers", "anchored", "--calibrate-profile", str(out), "--json")
    assert done.returncode == 0, done.stderr
    made, shipped = load_profile(out), load_profile(fmt)
    made.calibration.pop("command"), shipped.calibration.pop("command")  # they name their output file
    assert made == shipped  # data measured by the command, not typed in
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["profile_fit"]["file"] == str(out)
    assert {h["session"] for h in result["profile_fit"]["held_out"]} == set(shipped.calibration["held_out"])
