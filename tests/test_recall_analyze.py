"""Index analysis: the ASCII shortcut gives exactly the tokens of the Unicode patterns."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.recall import analyze


def _unicode_index_tokens(text: str) -> str:
    """index_tokens as it reads with the Unicode patterns only (what it did before the ASCII shortcut)."""
    out = analyze._CJK_RUNS.sub(analyze._bigram_run, text) if analyze._CJK_RUNS.search(text) else text
    extras = [part for word in analyze._CAMEL_WORD.findall(text) for part in analyze._CAMEL.findall(word)] \
        if analyze._CAMEL_HINT.search(text) else []
    extras.extend(word.translate(analyze._SEPARATORS) for word in analyze._COMPOUND.findall(text))
    return f"{out}\n{' '.join(extras)}" if extras else out


_ASCII_BITS = st.sampled_from(["a", "Z", "retryBackoff", "HTTPServer", "x9", "9", "_", "__init__", ".", "/", ":", "@",
                               "-", "--", "v2.14.3", "PAY-1234", "feature/pay-1234", " ", "\n", '{"k":"v"}', "a_b.c",
                               "db7:5432", "~", "é", "数据库", "iris-worker的接口"])


@settings(max_examples=300, deadline=None)
@given(st.lists(_ASCII_BITS, max_size=30).map("".join))
def test_index_tokens_match_the_unicode_patterns(text: str) -> None:
    assert analyze.index_tokens(text) == _unicode_index_tokens(text)


def test_ascii_text_takes_the_shortcut_and_keeps_its_compounds() -> None:
    text = "deploy feature/pay-1234 at v2.14.3 via retryBackoff"
    assert text.isascii()
    assert analyze.index_tokens(text) == _unicode_index_tokens(text)
    assert analyze.index_tokens(text).splitlines()[1].split() == ["retry", "Backoff", "featurepay1234", "v2143"]
