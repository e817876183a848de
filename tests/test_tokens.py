"""Token estimation: the three tiers, entry rendering and overhead, the running tally, offline loading."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import msgspec
import pytest

from aptmem.entries import (Assistant, Compaction, CompactionMarker, Metadata, ToolCall, ToolResult, UnknownEntry, User,
                            decode_line)
from aptmem.errors import TokenizerUnavailable
from aptmem.tokens import (MESSAGE_OVERHEAD, ContextTally, Estimator, MediumEstimator, RoughEstimator, count_entries,
                           count_entry, get_estimator, message_count, render_entry, role_of)
from aptmem.tokens.medium import FEATURES, CharCosts, features
from aptmem.tokens.piece_vocab import MAX_PIECE_BYTES, MIN_PIECE_BYTES, PieceVocab
from aptmem.tokens.medium_constants import decode_constants, load_constants
from aptmem.tokens.precise_tiktoken import TiktokenEstimator, _get_encoding_offline
from experiments.measurements.tokens.corpus import TOKEN_KINDS, token_corpus
from experiments.workloads.synthetic import generate

SEED = 2  # neither the calibration seed (0) nor the benchmark's (1)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every network call fail loudly, and record that it was tried."""
    tried: list[str] = []

    def refuse(*args: object, **kwargs: object) -> None:
        tried.append(repr(args[:2]))
        raise OSError("network access in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    return tried


@pytest.fixture(scope="module")
def cl100k() -> Estimator:
    return get_estimator("precise", "cl100k_base")


# -- rough --------------------------------------------------------------------------------------


def test_rough_is_exact_arithmetic() -> None:
    bytes4 = RoughEstimator()
    assert [bytes4.count(t) for t in ("", "a", "abcd", "abcde", "abcdefgh")] == [0, 1, 1, 2, 2]
    assert bytes4.count("帮我看看") == 3  # 12 UTF-8 bytes / 4
    chars4 = RoughEstimator(unit="chars")
    assert chars4.count("帮我看看") == 1 and chars4.count("abcde") == 2
    assert RoughEstimator(per_token=2.5).count("abcdef") == 3  # ceil(6 / 2.5)
    assert get_estimator("rough").name == "rough:bytes/4"
    with pytest.raises(ValueError):
        RoughEstimator(unit="words")
    with pytest.raises(ValueError):
        RoughEstimator(per_token=0)


# -- precise ------------------------------------------------------------------------------------


def test_cl100k_exact_counts(cl100k: Estimator) -> None:
    assert (cl100k.name, cl100k.tier, cl100k.tokenizer) == ("tiktoken:cl100k_base", "precise", "cl100k_base")
    assert cl100k.count("hello world") == 2
    assert cl100k.count("hello world\n") == 3
    assert cl100k.count("帮我看看这个 bug") == 8
    assert cl100k.count("") == 0
    assert cl100k.count("<|endoftext|>") > 1  # special-token text is ordinary text
    assert get_estimator("precise") is cl100k  # cached: loaded once
    assert isinstance(cl100k, Estimator)


def test_uncached_tiktoken_encoding_is_refused_with_how_to(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                           no_network: list[str]) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    with pytest.raises(TokenizerUnavailable) as caught:
        TiktokenEstimator("o200k_base")
    assert caught.value.name == "o200k_base"
    assert "TIKTOKEN_CACHE_DIR" in caught.value.how and str(tmp_path) in caught.value.how
    assert no_network == []
    with pytest.raises(TokenizerUnavailable, match="known:"):
        get_estimator("precise", "no_such_encoding")


def test_cached_tiktoken_file_is_used_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                              no_network: list[str]) -> None:
    """An encoding whose file sits in tiktoken's cache loads without network (here: cl100k's own file)."""
    import hashlib

    import tiktoken_ext

    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    shipped = Path(next(iter(tiktoken_ext.__path__))) / "data" / "cl100k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(shipped.read_bytes())
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    encoding = _get_encoding_offline("cl100k_base", "cl100k_base")
    assert len(encoding.encode_ordinary("hello world")) == 2
    assert no_network == []


def test_tekken_through_transformers(no_network: list[str]) -> None:
    pytest.importorskip("transformers", reason="transformers is a dependency of aptmem; install it to run this")
    pytest.importorskip("mistral_common", reason="mistral-common is a dependency of aptmem; install it to run this")
    tekken = get_estimator("precise", "tekken")
    assert (tekken.name, tekken.tier) == ("mistral:tekken_240911", "precise")
    assert tekken.count("hello world") == 2
    assert tekken.count("帮我看看这个 bug") == 5
    assert tekken.count("") == 0
    assert get_estimator("precise", "mistral:tekken_240911") is tekken
    assert no_network == []
    with pytest.raises(TokenizerUnavailable, match="tekken_240911"):
        get_estimator("precise", "mistral:tekken_000000")


def test_local_tokenizer_folder_through_autotokenizer(tmp_path: Path, no_network: list[str]) -> None:
    transformers = pytest.importorskip("transformers", reason="transformers is a dependency of aptmem")
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, "hello": 1, "world": 2}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(tmp_path)
    est = get_estimator("precise", f"hf:{tmp_path}")
    assert est.count("hello world") == 2 and est.count("hello hello other world") == 4
    assert no_network == []


def test_uncached_hub_name_is_refused_without_network(no_network: list[str], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("transformers", reason="transformers is a dependency of aptmem")
    monkeypatch.setenv("HF_HOME", str(tmp_path))  # read at call time by our message; the hub's cache is elsewhere
    with pytest.raises(TokenizerUnavailable) as caught:
        get_estimator("precise", "hf:some-org/not-a-cached-model")
    assert "hf download" in caught.value.how
    with pytest.raises(TokenizerUnavailable, match="no folder"):
        get_estimator("precise", "hf:./no/such/folder")
    assert no_network == []


# -- medium -------------------------------------------------------------------------------------

#: no letter piece is one token: the medium tier's features as they were before the vocabulary
_NO_VOCAB = PieceVocab(())


def test_medium_features_of_a_known_string() -> None:
    named = dict(zip(FEATURES, features("Hi 12!\n帮，é")))
    # An upper-case letter counts twice among the letters; 帮 is two cl100k tokens alone, ， and é one;
    # the newline right after "!" is folded into its piece.
    # "Hi" is shorter than MIN_PIECE_BYTES: never looked up in the vocabulary.
    assert named == {"letters": 3, "digits_past_three": 0, "han": 1, "kana_wide": 1, "hangul": 0,
                     "other_extra_bytes": 1, "two_token_chars": 1, "three_token_chars": 0, "letter_runs": 1,
                     "case_changes": 0, "digit_runs": 1, "newline_runs": 0, "punct_runs": 1, "space_runs": 1,
                     "vocab_pieces": 0}
    # (the run features without the vocabulary: " worldFoo" is no token, but keep the test about runs alone)
    runs = dict(zip(FEATURES, features("aGVsbG8 worldFoo  12345\n\nカナ 한국", vocab=_NO_VOCAB)))
    assert (runs["letter_runs"], runs["case_changes"], runs["digit_runs"], runs["newline_runs"], runs["space_runs"]) \
        == (2, 3, 2, 1, 2)  # the space before "world" folds into its piece
    assert (runs["kana_wide"], runs["hangul"], runs["two_token_chars"]) == (2, 2, 1)  # 국 is two tokens alone
    assert features("😀")[FEATURES.index("other_extra_bytes")] == 3
    assert features("") == (0,) * len(FEATURES)


@pytest.mark.parametrize(("text", "feature", "value"), [
    ("a b", "space_runs", 0), ("a  b", "space_runs", 1), ("x = 1", "space_runs", 1),  # " =" folds, " 1" not
    ("{\n", "newline_runs", 0), ("a\n\nb", "newline_runs", 1),
    # a single punctuation character folded into the word after it is no run of its own; it counts with the letter runs
    ("snake_case_name", "punct_runs", 0), ("snake_case_name", "letter_runs", 5), ("a _b", "punct_runs", 1),
    ("a _b", "letter_runs", 2), ("a__b", "punct_runs", 1), ("a__b", "letter_runs", 2), ("a.b", "punct_runs", 0),
    ("a.b", "letter_runs", 3), ("src/x.py", "letter_runs", 5), ("(self", "letter_runs", 2), ("f(self", "letter_runs", 3),
    ("f((self", "punct_runs", 1), ("f((self", "letter_runs", 2), ("1.5", "punct_runs", 1), ("a.", "punct_runs", 1),
    ("\n.x", "letter_runs", 2), ("a.é", "punct_runs", 1),
    # digit runs are cut in pieces of up to three digits, one token each: the digits past the third count
    ("123", "digits_past_three", 0), ("12345", "digits_past_three", 2), ("1234 5678 9", "digits_past_three", 2),
    ("2024-06-03T08:14:55Z", "digits_past_three", 1), ("x1234567890", "digits_past_three", 7),
])
def test_medium_folds_what_the_pretokenizer_folds(text: str, feature: str, value: int) -> None:
    # cl100k's pieces take a single space before a word or punctuation, one punctuation character between a
    # non-space and a word (``[^\r\n\p{L}\p{N}]?\p{L}+``), and newlines after punctuation: those are no
    # pieces of their own. The rules are checked with no vocabulary (a vocabulary piece takes its letters and
    # runs out of these features: test_medium_prices_a_vocabulary_piece_as_one_token); the count in the hot
    # path is the formula over features() with the shipped vocabulary.
    assert dict(zip(FEATURES, features(text, vocab=_NO_VOCAB)))[feature] == value
    w = MediumEstimator().constants.vector()
    assert MediumEstimator().count(text) == max(1, int(sum(a * b for a, b in zip(w, features(text))) + 0.5))


@pytest.mark.parametrize("piece", [" return", "_name", "snake", " qzxwv", "Hello", " the", ".py", " internationalization"])
def test_medium_prices_a_vocabulary_piece_as_one_token(piece: str, cl100k: Estimator) -> None:
    # The vocabulary is read off the tokenizer: a letter piece as cl100k cuts it (its leading space or folded
    # punctuation included) of MIN_PIECE_BYTES to MAX_PIECE_BYTES is in it exactly when it is one token alone.
    vocab = MediumEstimator().vocab
    one_token = MIN_PIECE_BYTES <= len(piece) <= MAX_PIECE_BYTES and cl100k.count(piece) == 1
    assert (piece in vocab.pieces) == one_token, piece
    # In a text, such a piece is one vocabulary piece, and its letters and its run(s) leave the letter features.
    text = "1" + piece  # after a digit: the piece as written is the piece as cut
    named, bare = dict(zip(FEATURES, features(text))), dict(zip(FEATURES, features(text, vocab=_NO_VOCAB)))
    if one_token:
        assert named["vocab_pieces"] == 1 and named["letters"] == 0 and named["letter_runs"] == 0
        assert bare["vocab_pieces"] == 0 and bare["letters"] > 0
    else:
        assert named == bare


def test_char_costs_are_the_reference_tokenizers_and_survive_the_constants_file(cl100k: Estimator) -> None:
    shipped = MediumEstimator().costs
    # Measured from the tokenizer, not fitted: the shipped table says what cl100k spends on each character alone.
    for char in "的蠡龘帮，éカ국한":
        assert shipped.table[ord(char)] == min(3, cl100k.count(char)), char
    assert shipped.counts("的蠡龘帮 abc") == (2, 1)  # 龘 and 帮 two tokens, 蠡 three
    assert CharCosts.decode(shipped.encode()).table == shipped.table
    with pytest.raises(ValueError, match="damaged"):
        CharCosts.decode("bm90IHpsaWI=")
    with pytest.raises(ValueError, match="65536 entries"):
        CharCosts(b"\x01" * 10)


def test_medium_loads_constants_lazily_and_counts_small_texts() -> None:
    est = MediumEstimator()
    assert est._constants is None  # nothing read at construction
    assert est.count("") == 0 and est.count("a") == 1 and est.count("hello world " * 10) >= 15
    assert est._constants is not None and est.tokenizer == "cl100k_base"


def test_medium_count_matches_its_formula_on_every_text() -> None:
    from aptmem.tokens.calibration.corpus import broad_corpus

    est = MediumEstimator()
    w = est.constants.vector()
    long_ascii = "def f(x):\n    return x + 1  # camelCase aGVsbG8\n" * 3000  # over one 64k block: the general path
    texts = [s.text for s in token_corpus(SEED, 20)] + [s.text for s in broad_corpus(SEED, 5)] + [long_ascii]
    for index, text in enumerate(texts):
        expected = int(sum(a * b for a, b in zip(w, features(text), strict=True)) + 0.5)
        assert est.count(text) == max(expected, 1), (index, SEED)
    # Counting in 64k blocks loses at most one run per block edge (without the vocabulary: seven letter runs a
    # line, and the "(" of "f(x" folded into x's piece counts with them).
    assert features(long_ascii, vocab=_NO_VOCAB)[FEATURES.index("letter_runs")] - 3000 * 8 in range(0, 3)


@pytest.mark.parametrize("kind", TOKEN_KINDS)
def test_medium_within_tolerance_per_kind(kind: str, cl100k: Estimator) -> None:
    est = get_estimator("medium")
    errors = [abs(est.count(s.text) - cl100k.count(s.text)) / cl100k.count(s.text)
              for s in token_corpus(SEED, 40, kinds=[kind])]
    mape = 100 * sum(errors) / len(errors)
    assert mape <= 10.0, f"medium MAPE {mape:.1f}% on {kind} (corpus seed {SEED})"


def test_damaged_constants_are_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TokenizerUnavailable, match="damaged"):
        decode_constants(b"{not json")
    with pytest.raises(TokenizerUnavailable, match="needs"):
        decode_constants(b'{"reference":"cl100k_base","weights":{"letters":1.0}}')
    with pytest.raises(TokenizerUnavailable, match="no character cost table"):
        shipped = load_constants()
        decode_constants(msgspec.json.encode(msgspec.structs.replace(shipped, char_costs="")))
    with pytest.raises(TokenizerUnavailable, match="cannot read"):
        load_constants(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="approximates cl100k_base"):
        get_estimator("medium", "tekken")


# -- entries ------------------------------------------------------------------------------------


def test_render_entry_for_every_kind() -> None:
    # render_entry is the plain-text line (for summarizers and searching); message_count what an entry
    # alone becomes: a call is its message and its answer (inline, or the placeholder of an unanswered
    # call); a result alone answers no call and is sent as a user message saying whose result it is.
    cases = [
        (User(ts=1, content="hello world"), "user\nhello world", 1),
        (Assistant(ts=1, content="hi", model="m", usage={"input": 5}), "assistant\nhi", 1),
        (ToolCall(ts=1, name="read", args={"path": "a.py"}), 'assistant tool_call read\n{"path":"a.py"}', 2),
        (ToolCall(ts=1, name="read", args={"path": "a.py"}, result="x=1"),
         'assistant tool_call read\n{"path":"a.py"}\ntool read\nx=1', 2),
        (ToolResult(ts=1, call_id="c1", content="ok", name="read"), "tool read\nok", 1),
        (ToolResult(ts=1, call_id="c1", content="boom", is_error=True), "tool error\nboom", 1),
        (Compaction(ts=1, summary="did things", first_kept="u9", tokens_before=9, notes=["cut"]), "summary\ndid things", 1),
        (CompactionMarker(ts=1, summary="old style"), "summary\nold style", 1),
        (Metadata(ts=1, kind="model_change", data={"model": "x"}), "", 0),
    ]
    roles = ["user", "assistant", "assistant", "assistant", "tool", "tool", "system", "system", ""]
    for (entry, text, messages), role in zip(cases, roles, strict=True):
        assert render_entry(entry) == text, entry
        assert message_count(entry) == messages, entry
        assert role_of(entry) == role, entry
    unknown = decode_line(b'{"type":"future_thing","ts":1,"x":"y"}')
    assert isinstance(unknown, UnknownEntry)
    assert render_entry(unknown) == '{"type":"future_thing","ts":1,"x":"y"}'
    assert role_of(unknown) == "" and message_count(unknown) == 0  # not conversation: not sent
    with pytest.raises(TypeError):
        render_entry("not an entry")  # type: ignore[arg-type]


def test_counts_are_of_the_rendered_messages(cl100k: Estimator) -> None:
    assert MESSAGE_OVERHEAD == 4
    # ChatML: <|im_start|> user \n hello world <|im_end|> \n = 7 tokens: framing 4, role 1, text 2
    assert count_entry(cl100k, User(ts=1, content="hello world")) == 7
    call = ToolCall(ts=1, name="read", args={"path": "a.py"}, result="x=1", id="c1")
    n = cl100k.count
    # the assistant message with the tool use (id, name, JSON arguments), then the tool message answering it
    assert count_entry(cl100k, call) == (4 + n("assistant") + n("c1") + n("read") + n('{"path":"a.py"}')
                                         + 4 + n("tool") + n("c1") + n("x=1"))
    assert count_entry(cl100k, Metadata(ts=1, kind="k")) == 0
    # A result takes over its call's answer: the pair costs the call plus the result, once.
    bare = ToolCall(ts=1, name="read", args={"path": "a.py"}, id="c1")
    result = ToolResult(ts=2, call_id="c1", content="x=1")
    assert count_entries(cl100k, [bare, result]) == count_entry(cl100k, bare) + count_entry(cl100k, result) == count_entry(cl100k, call)


# -- the running tally ---------------------------------------------------------------------------


class CountingEstimator:
    """The medium estimator, counting how often it is asked (to see what the tally recounts)."""

    name, tier, tokenizer = "counting", "medium", "cl100k_base"

    def __init__(self) -> None:
        self.inner = MediumEstimator()
        self.calls: dict[str, int] = defaultdict(int)

    def count(self, text: str) -> int:
        self.calls[text] += 1
        return self.inner.count(text)


def test_tally_running_total_equals_a_recount() -> None:
    entries = generate(max_entries=600, seed=SEED).entries
    est = CountingEstimator()
    tally = ContextTally(est, base=100)
    running = 100
    for entry in entries:
        running += tally.add(entry)
        assert tally.total == running
    assert tally.total == tally.recount() == 100 + count_entries(est, entries)
    assert len(tally) == len(entries) and sum(tally.counts) == tally.total - 100

    removed = tally.remove_prefix(250)
    assert removed + tally.total == running
    assert tally.total == 100 + count_entries(est, entries[250:])
    with pytest.raises(ValueError):
        tally.remove_prefix(len(tally) + 1)


def test_tally_reset_reuses_counts_of_kept_entries() -> None:
    entries = generate(max_entries=300, seed=SEED).entries
    est = CountingEstimator()
    tally = ContextTally(est, entries)
    assert set(est.calls.values()) == {1}, "each distinct text is counted once"
    before = dict(est.calls)
    summary = Compaction(ts=2, summary="the user asked for X; we fixed Y in src/a.py")
    kept = entries[200:]
    total = tally.reset([summary, *kept])
    # Only the texts the new context has and the old one had not: the summary and the system role.
    new = {text for text, n in est.calls.items() if n != before.get(text, 0)}
    assert new == {"Summary of the conversation so far:\nthe user asked for X; we fixed Y in src/a.py", "system"}
    assert total == tally.recount() == count_entries(est, [summary, *kept])
    calls_before = sum(est.calls.values())
    tally.reset(kept, reuse=False)
    assert sum(est.calls.values()) > calls_before + len(kept)  # every text counted afresh
    assert tally.total == count_entries(est, kept)


# -- import hygiene -----------------------------------------------------------------------------


def test_importing_aptmem_loads_no_tokenizer_library() -> None:
    code = ("import sys, aptmem, aptmem.tokens, aptmem.cli, aptmem.cli.tokens\n"
            "from aptmem.tokens import get_estimator\n"
            "get_estimator('medium').count('hello'); get_estimator('rough').count('hello')\n"
            "print(sorted(m for m in ('tiktoken', 'transformers', 'mistral_common', 'numpy', 'numba') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


# -- speed (slow: a shared machine is noisy) --------------------------------------------------


@pytest.mark.slow
def test_medium_is_ten_times_faster_than_tiktoken() -> None:
    from experiments.measurements.tokens.accuracy import speed_table, summarize_speed

    corpus = token_corpus(SEED, 100)
    # its kernel loaded from the start: what a process that counts for longer than the load gets
    speed = speed_table([get_estimator("medium", kernel="compiled"), get_estimator("precise")], corpus, repeats=5)
    summary = summarize_speed(speed, "tiktoken:cl100k_base")
    overall = summary.filter((summary["estimator"] == "medium") & (summary["kind"] == "all"))["speedup_vs_baseline"][0]
    assert overall >= 10, summary
