"""The calibration corpus's seeded generators: manifests of several ecosystems, numbers, URLs."""

from __future__ import annotations

import json
import random
import tomllib

from aptmem.tokens.calibration import generated

NAMES = generated.package_names(["ruff >= 0.16.0 ; extra == \"all\"", "msgspec>=0.18,<1", "hydra-core>=1.3.2"])


def test_package_names_are_the_pins_and_the_standard_librarys() -> None:
    assert {"ruff", "msgspec", "hydra-core", "json", "asyncio"} <= set(NAMES)
    assert not [n for n in NAMES if n.startswith("_") or not n]


def test_the_same_seed_makes_the_same_texts_and_another_seed_others() -> None:
    for make in (lambda r: generated.manifest(r, NAMES, 400), lambda r: generated.numbers(r, 400),
                 lambda r: generated.url(r, NAMES, ["src/a.py"])):
        assert make(random.Random("s:1")) == make(random.Random("s:1"))
        assert len({make(random.Random(f"s:{i}")) for i in range(20)}) > 15


def test_manifests_reach_their_size_in_every_format_and_parse_where_they_are_a_format() -> None:
    seen_heads = set()
    for i in range(200):
        rng = random.Random(f"m:{i}")
        text = generated.manifest(rng, NAMES, 300)
        assert len(text) >= 299 and text.strip()  # lines of at least 300 bytes with their newlines
        seen_heads.add(text.split("\n", 1)[0][:12])
        if text.startswith("[dependencies]"):  # Cargo.toml
            assert tomllib.loads(text)["dependencies"]
        if text.startswith("[[package]]"):  # a Python lock file
            assert tomllib.loads(text)["package"][0]["version"]
        if text.startswith('{\n  "dependencies": {'):  # package.json, closed
            assert json.loads(text.rstrip(",") + "}}")["dependencies"]
    assert len(seen_heads) >= 9  # every style came up


def test_versions_take_the_ecosystems_shapes() -> None:
    versions = {generated.version(random.Random(f"v:{i}")) for i in range(400)}
    assert any("rc" in v or "-beta" in v or "-alpha" in v for v in versions)
    assert any(".post" in v for v in versions) and any("+" in v for v in versions)
    assert all(v[0].isdigit() for v in versions)


def test_numbers_and_urls_hold_what_they_are_for() -> None:
    for i in range(50):
        text = generated.numbers(random.Random(f"n:{i}"), 200)
        assert sum(c.isdigit() for c in text) > len(text) / 4
        link = generated.url(random.Random(f"u:{i}"), NAMES, ["src/a.py"])
        assert "://" in link or link.startswith("git@")
