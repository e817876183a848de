"""The statement forms and value shapes added for text written in formats a coding agent reads (unified diffs,
nested YAML, CODEOWNERS-like lines, decision logs, migration names), each on examples of its own, and the
readings that are measurements, not settings. Written from the formats, not from any memory-quality workload."""

from __future__ import annotations

import pytest

from aptmem.entries import ToolResult
from aptmem.memory.diffs import file_about, split_diffs
from aptmem.memory.facts import Fact, facts_of, facts_of_entry
from aptmem.memory.kv_dict import merge_facts
from aptmem.memory.statements import statements

_DIFF = """diff --git a/deploy/api/Dockerfile b/deploy/api/Dockerfile
index 1111111..2222222 100644
--- a/deploy/api/Dockerfile
+++ b/deploy/api/Dockerfile
@@ -1,4 +1,4 @@
-FROM node:20-alpine@sha256:0123456789abcdef01234567
+FROM node:20-alpine@sha256:89abcdef0123456701234567
 WORKDIR /srv/app
-    if not batch:
+    if batch is None:
-  timeout: 30s
+  timeout: 45s
"""


def _facts(text: str) -> list[Fact]:
    return [f for s in statements(text) for f in facts_of(s, by_user=False)]


def test_a_diff_states_each_changed_setting_as_old_to_new_about_the_file() -> None:
    facts = _facts(_DIFF)
    image = next(f for f in facts if f.value.startswith("node:20-alpine@sha256:89ab"))
    assert image.replaces == "node:20-alpine@sha256:0123456789abcdef01234567"
    assert "api" in image.subject
    timeout = next(f for f in facts if f.value == "45s")
    assert timeout.replaces == "30s"
    assert not any(f.value.startswith("node:20-alpine@sha256:0123") for f in facts)  # the removed value is not current


def test_a_line_of_code_in_a_diff_is_no_setting_change() -> None:
    changed = [s for s in split_diffs(_DIFF.splitlines()) if not isinstance(s, list)]
    assert [key for key, _, _ in changed[0].changes] == ["FROM", "timeout"]


def test_a_removed_line_no_added_line_replaces_states_nothing() -> None:
    text = "--- a/conf/app.ini\n+++ b/conf/app.ini\n@@ -1,2 +1,1 @@\n-legacy_host = old-db-4.internal\n keep = 1\n"
    assert not any("old-db-4" in f.value for f in _facts(text))


@pytest.mark.parametrize(("path", "about"), [
    ("services/billing/Dockerfile", "billing"), ("src/orders/models.py", "orders"), (".github/CODEOWNERS", "CODEOWNERS"),
    ("Makefile", "Makefile"),
])
def test_a_file_is_about_its_folder_unless_that_folder_lays_the_repo_out(path: str, about: str) -> None:
    assert file_about(path) == about


def test_a_diff_moves_a_kept_value_to_the_new_one() -> None:
    first = list(facts_of_entry(ToolResult(ts=1, id="a", call_id="c", content="FROM node:20-alpine@sha256:0123456789abcdef01234567")))
    records = merge_facts([], first, 100)
    records = merge_facts(records, list(facts_of_entry(ToolResult(ts=2, id="b", call_id="d", content=_DIFF))), 100)
    pinned = next(r for r in records if r.value.startswith("node:20-alpine@sha256:"))
    assert pinned.value.endswith("89abcdef0123456701234567")
    assert [b.value for b in pinned.before] == ["node:20-alpine@sha256:0123456789abcdef01234567"]


def test_a_nested_yaml_setting_is_about_the_innermost_key_that_names_a_thing() -> None:
    text = "billing:\n  resources:\n    limits:\n      memory: 900Mi\n    requests:\n      memory: 256Mi\n"
    facts = {f.value: f for f in _facts(text)}
    assert "billing" in facts["900Mi"].subject
    assert facts["900Mi"].attribute != facts["256Mi"].attribute  # a limit is no update of a request


def test_a_yaml_list_item_is_a_value_of_its_key() -> None:
    facts = _facts('services:\n  web:\n    ports:\n      - "18080:80"\n')
    port = next(f for f in facts if f.value == "18080")
    assert "web" in port.subject


def test_a_line_of_values_alone_is_about_its_first() -> None:
    facts = _facts("/apps/web/  @maria-k")
    assert [(f.value, f.subject) for f in facts] == [("@maria-k", ("/apps/web/",))]


def test_a_decision_log_row_keeps_its_choice_and_reason_together() -> None:
    text = "| area | choice | why |\n| --- | --- | --- |\n| the queue | Redis streams | we already run Redis |\n"
    facts = _facts(text)
    assert len(facts) == 1 and facts[0].shape == "decision"
    assert "Redis streams" in facts[0].text and "we already run Redis" in facts[0].text


@pytest.mark.parametrize(("text", "value"), [
    ("Flyway applied V42__add_user_index to the orders schema.", "V42__add_user_index"),
    ("FROM node:20-alpine@sha256:0123456789abcdef01234567", "node:20-alpine@sha256:0123456789abcdef01234567"),
    ("tests/unit/test_api.py::test_login_ok XFAIL (quarantined for the migration)", "tests/unit/test_api.py::test_login_ok"),
    ("Give the api a 512Mi memory limit.", "512Mi"),
    ("Bump the worker to a 90s timeout.", "90s"),
    ("When it comes to tabs, I'd rather we use spaces.", "When it comes to tabs, I'd rather we use spaces."),
])
def test_shapes_and_bindings_of_their_own(text: str, value: str) -> None:
    assert value in {f.value for f in _facts(text)}


@pytest.mark.parametrize(("text", "value"), [
    ("Coverage for billing dropped to 61.5% after the rename.", "61.5%"),
    ("The api image is 257 MB compressed.", "257 MB"),
    ("The node has 12GB free.", "12GB"),
])
def test_a_reading_is_no_setting(text: str, value: str) -> None:
    assert value not in {f.value for f in _facts(text)}


def test_picked_up_is_no_decision() -> None:
    facts = _facts("Tagged api as v1.2.3-rc.1 and pushed the tag; the release workflow picked it up.")
    assert [(f.value, f.shape) for f in facts] == [("v1.2.3-rc.1", "version")]


@pytest.mark.parametrize(("text", "new", "old"), [
    ("The orders migrations go past V41__add_index: V42__add_user_index is the newest one now.", "V42__add_user_index",
     "V41__add_index"),
    ("api 的镜像 digest：sha256:0123456789abcdef01234567 不要了，现在是 sha256:89abcdef0123456701234567",
     "sha256:89abcdef0123456701234567", "sha256:0123456789abcdef01234567"),
])
def test_words_around_a_value_mark_it_old(text: str, new: str, old: str) -> None:
    assert [(f.value, f.replaces) for f in _facts(text)] == [(new, old)]


def test_a_digest_updates_the_image_it_pinned() -> None:
    first = list(facts_of_entry(ToolResult(ts=1, id="a", call_id="c", content="FROM node:20-alpine@sha256:0123456789abcdef01234567")))
    later = "api 的镜像 digest：sha256:0123456789abcdef01234567 不要了，现在是 sha256:89abcdef0123456701234567"
    records = merge_facts(merge_facts([], first, 100), list(facts_of_entry(ToolResult(ts=2, id="b", call_id="d", content=later))), 100)
    assert [r.value for r in records] == ["sha256:89abcdef0123456701234567"]
    assert records[0].before[0].value == "node:20-alpine@sha256:0123456789abcdef01234567"


def test_a_headerless_row_of_words_binds_its_cells_to_its_first() -> None:
    facts = _facts("| orchid | Priya Raman | on call |")
    assert "Priya Raman" in {f.value for f in facts}
