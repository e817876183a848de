"""Headings of lines (aptmem/recall/headings.py): what a line of a diff, a config file or a table belongs to."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from aptmem.recall.headings import MAX_CHARS, headings


def _pairs(text: str) -> dict[str, str]:
    lines = text.split("\n")
    return dict(zip(lines, headings(lines), strict=True))


def test_yaml_lines_name_the_keys_of_their_blocks() -> None:
    got = _pairs("services:\n  orchid:\n    image_tag: 1.2\n  basalt:\n    image_tag: 3.4\nother: 1")
    assert got["    image_tag: 1.2"] == "services: › orchid:" and got["    image_tag: 3.4"] == "services: › basalt:"
    assert got["other: 1"] == "" and got["services:"] == ""


def test_a_diff_line_names_its_file_and_block_and_the_diff_ends_at_other_text() -> None:
    text = ("diff --git a/deploy/x.yaml b/deploy/x.yaml\n--- a/deploy/x.yaml\n+++ b/deploy/x.yaml\n@@ -1,2 +1,2 @@\n"
            " server:\n-  port: 80\n+  port: 8080\nThat should do it.")
    got = _pairs(text)
    assert got["+  port: 8080"] == got["-  port: 80"] == "deploy/x.yaml › server:"
    assert got["That should do it."] == ""


def test_toml_sections_tables_and_markdown_headings() -> None:
    got = _pairs("[service.orchid]\nregion = \"eu-1\"\n  rollout: true\n| service | owner |\n|---|---|\n| kiwi | Mei |\n\n"
                 "## Notes\nplain line")
    assert got['region = "eu-1"'] == "[service.orchid]" and got["  rollout: true"] == "", "a non-setting line ends it"
    assert got["| kiwi | Mei |"] == "| service | owner |" and got["| service | owner |"] == ""
    assert got["plain line"] == "## Notes"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=" :|-+#[]=abc\n", max_size=40), max_size=30))
def test_every_line_gets_one_heading_of_bounded_length(lines: list[str]) -> None:
    out = headings(lines)
    assert len(out) == len(lines) and all(len(h) <= MAX_CHARS for h in out)
    assert all(not h for h, line in zip(out, lines, strict=True) if not line.strip())
