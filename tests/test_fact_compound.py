"""The compound-token fallback: a value of no known shape is found by its build, on examples of its own (written
from certificate tools, standards documents and i18n files, not from any memory-quality workload)."""

from __future__ import annotations

import pytest

from aptmem.memory.compound import compounds
from aptmem.memory.facts import facts_of
from aptmem.memory.statements import statements
from aptmem.memory.values import values

# (case, text, the value that must be found whole)
_FOUND = [
    ("fingerprint", "keytool says the release key's fingerprint is 0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0",
     "0F:1E:2D:3C:4B:5A:69:78:87:96:A5:B4:C3:D2:E1:F0"),
    ("clause", "The auditor cited clause 7.2(b) of the contract for the storage service.", "7.2(b)"),
    ("locale", "The checkout page now ships a zh-TW translation for the storefront.", "zh-TW"),
    ("part-number", "The storage shelf takes drives of part 4TB-X9:rev2 only.", "4TB-X9:rev2"),
]


@pytest.mark.parametrize(("case", "text", "value"), _FOUND, ids=[c[0] for c in _FOUND])
def test_a_compound_token_is_one_value(case: str, text: str, value: str) -> None:
    found = [v for statement in statements(text) for f in facts_of(statement, by_user=True) for v in [f.value]]
    assert value in found, (case, found)
    # ... and none of its pieces is a value of its own
    assert not [v for v in found if v != value and v in value], found


@pytest.mark.parametrize("text", [
    "at io.example.Core.run(Core.kt:214)",  # a file's place: it moves with every edit
    "Crash-free sessions look fine today",  # capitalised prose words mix no case inside a part
    "the build on 12-02 09:14:33 was slow",  # digits and separators alone: a date and a clock, which have shapes
    "see src/app/main.py:12 for it",  # a path has a shape of its own
])
def test_what_is_no_compound(text: str) -> None:
    assert list(compounds(text)) == []


def test_a_shape_that_explains_the_whole_token_keeps_it() -> None:
    shapes = {value: shape for shape, value, _, _ in values("the image is ghcr.io/acme/api:2.4.1 and OPS-4821 tracks it")}
    assert shapes.get("OPS-4821") == "ticket"
    assert "compound" not in shapes.values()


def _facts(text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(f.value, f.subject) for st in statements(text) for f in facts_of(st, by_user=False)]


def test_a_setting_line_is_about_the_name_its_comment_gives() -> None:
    found = _facts("env:\n  BUCKET_NAME: media-eu-7   # Orchard uploads\n  BUCKET_NAME: media-us-2   # Quarry")
    assert ("media-eu-7", ("bucket_name", "orchard")) in found
    assert any(value == "media-us-2" and "quarry" in subject for value, subject in found)


def test_a_call_literal_built_like_a_key_is_a_value_of_the_code_line() -> None:
    assert any(v == "ff_dark_mode_v2" for v, _ in _facts('    if (toggles.on("ff_dark_mode_v2")) {  // settings screen'))
    assert not _facts('    print("done")  # finish')  # a word is no key


def test_korean_from_to_and_decision() -> None:
    changed = [f for st in statements("캐시 TTL 을 40s 에서 90s 로 늘렸습니다") for f in facts_of(st, by_user=True)]
    assert [(f.value, f.replaces) for f in changed] == [("90s", "40s")]
    decided = [f.shape for st in statements("로그 저장소는 Loki 로 정했어요. 이유: 이미 Grafana 를 씁니다.")
               for f in facts_of(st, by_user=True)]
    assert decided == ["decision"]
