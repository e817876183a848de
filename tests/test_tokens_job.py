"""The token-estimate job: exact table schemas and row counts on tiny settings, the settings as a
Hydra schema, and the report section rebuilt from the stored tables alone. No timing assertions."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
import pytest
from omegaconf import OmegaConf

from aptmem.tokens.tiers import build_estimator
from experiments.measurements.tokens.job import TABLES, run_tokens
from experiments.measurements.tokens.settings import TokensSettings
from experiments.measurements.tokens.report import tokens_section

KINDS = ["english", "chinese", "json"]
SETTINGS = dict(per_kind=3, kinds=KINDS, repeats=2, growth_entries=20, seed=3,
                estimators=["rough:bytes", "rough:chars", "medium", "precise:cl100k_base", "precise:no_such_encoding"])

STAMP = {"seed": pl.Int64, "commit": pl.String, "machine": pl.String}
TOKENS_SCHEMA = {"kind": pl.String, "index": pl.Int64, "chars": pl.Int64, "bytes": pl.Int64, "estimator": pl.String,
                 "tier": pl.String, "tokenizer": pl.String, "estimate": pl.Int64, "exact": pl.Int64,
                 "signed_pct": pl.Float64, "abs_pct": pl.Float64, "reference": pl.String, **STAMP}
SPEED_SCHEMA = {"repeat": pl.Int64, "kind": pl.String, "estimator": pl.String, "tier": pl.String,
                "tokenizer": pl.String, "ns": pl.Int64, "chars": pl.Int64, "texts": pl.Int64, **STAMP}
GROWTH_SCHEMA = {"append": pl.Int64, "ns": pl.Int64, "bare_ns": pl.Int64, "chars": pl.Int64, "tokens": pl.Int64,
                 "total": pl.Int64, "estimator": pl.String, "tier": pl.String, **STAMP}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, pl.DataFrame]]:
    """One tiny run (3 kinds x 3 texts, 2 passes, a 20-entry growth check) in a module-wide folder."""
    out = tmp_path_factory.mktemp("tokens")
    return out, run_tokens(TokensSettings(**SETTINGS), out)


def test_tables_have_exact_schemas_and_row_counts(run) -> None:  # type: ignore[no-untyped-def]
    out, tables = run
    estimators = 4  # the unloadable tokenizer is left out, not fatal
    assert tables["tokens"].schema == pl.Schema(TOKENS_SCHEMA)
    assert tables["tokens"].height == 3 * len(KINDS) * estimators
    assert tables["token_speed"].schema == pl.Schema(SPEED_SCHEMA)
    assert tables["token_speed"].height == 2 * len(KINDS) * estimators
    assert tables["token_growth"].schema == pl.Schema(GROWTH_SCHEMA)
    assert tables["token_growth"].height == 20 * 2
    for name in TABLES:
        assert pl.read_parquet(out / f"{name}.parquet").equals(tables[name]), name
        assert pl.read_csv(out / f"{name}.csv").height == tables[name].height, name
    acc = tables["tokens"]
    assert sorted(acc["estimator"].unique()) == ["medium", "rough:bytes/4", "rough:chars/4", "tiktoken:cl100k_base"]
    assert (acc["seed"] == 3).all() and (acc["reference"] == "cl100k_base").all()
    # the reference scores itself exactly; every row's errors follow from its counts
    assert (acc.filter(pl.col("estimator") == "tiktoken:cl100k_base")["abs_pct"] == 0).all()
    check = acc.with_columns(((pl.col("estimate") - pl.col("exact")) / pl.col("exact") * 100).alias("want"))
    assert (check["signed_pct"] - check["want"]).abs().max() < 1e-9
    assert ((acc["signed_pct"].abs() - acc["abs_pct"]).abs() < 1e-12).all()
    per = tables["token_speed"].group_by("repeat", "kind").agg(pl.col("estimator").n_unique().alias("n"))
    assert (per["n"] == estimators).all() and per.height == 2 * len(KINDS)
    assert tables["token_growth"]["append"].to_list()[:20] == list(range(1, 21))


def test_derived_tables_and_goals(run) -> None:  # type: ignore[no-untyped-def]
    _, tables = run
    assert tables["tokens_summary"].height == len(KINDS) * 4
    goals = tables["token_goals"]
    assert goals.height == len(KINDS) + len(KINDS) + 1  # MAPE per kind; speed-up per kind and over all
    assert goals.columns == ["goal", "value", "target", "met"]
    assert sorted(tables["token_growth_summary"]["estimator"]) == ["medium", "rough:bytes/4"]


def test_notes_say_what_was_left_out(run) -> None:  # type: ignore[no-untyped-def]
    import msgspec

    out, _ = run
    notes = msgspec.json.decode((out / "tokens_notes.json").read_bytes())
    assert notes["baseline"] == "tiktoken:cl100k_base" and notes["kinds"] == KINDS
    assert len(notes["left_out"]) == 1 and "precise:no_such_encoding" in notes["left_out"][0]
    assert {"commit", "machine", "seconds"} <= set(notes)


def test_section_rebuilds_from_stored_tables_alone(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out, _ = run
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("tokens", "token_speed", "token_growth"):  # the raw tables and the notes, nothing else
        shutil.copy(out / f"{name}.parquet", bare)
    shutil.copy(out / "tokens_notes.json", bare)
    text = tokens_section(bare)
    assert text is not None and text.startswith("## Token estimates against cl100k_base")
    assert "| rough | rough:chars/4 |" in text and "### Goals" in text and "precise:no_such_encoding left out" in text
    for png in ("token_error.png", "token_speed.png"):
        assert (bare / "figures" / png).stat().st_size > 10_000
        assert f"(figures/{png})" in text
    shutil.rmtree(bare / "figures")
    assert tokens_section(bare) == text  # the same page, figures drawn again
    assert (bare / "figures" / "token_error.png").exists()
    assert tokens_section(tmp_path / "nothing-here") is None


def test_settings_are_a_hydra_schema() -> None:
    cfg = OmegaConf.structured(TokensSettings)
    cfg.per_kind = 5
    settings = OmegaConf.to_object(cfg)
    assert isinstance(settings, TokensSettings) and settings.per_kind == 5
    with pytest.raises(Exception):
        cfg.no_such_field = 1  # a typo fails when the config loads


@pytest.mark.parametrize("bad", [dict(kinds=["klingon"]), dict(per_kind=0), dict(estimators=["median"]),
                                 dict(estimators=["rough:words"]), dict(growth_estimators=["medium:x"]),
                                 dict(growth_entries=1)])
def test_bad_settings_fail_early(bad: dict) -> None:
    with pytest.raises(ValueError):
        TokensSettings(**bad)


def test_build_estimator_specs() -> None:
    assert build_estimator("rough:chars").name == "rough:chars/4"
    assert build_estimator("rough").name == "rough:bytes/4"
    assert build_estimator("medium").tier == "medium"
    assert build_estimator("precise:cl100k_base").name == "tiktoken:cl100k_base"
