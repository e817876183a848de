"""A seeded corpus of texts per content kind, for calibrating and scoring token estimators.

The texts come from the workload's own generator (:class:`experiments.workloads.text.TextPools`),
so they look like what a session holds: English and Chinese prose, source code, JSON tool
output, command logs, and ``mixed`` texts that join several of those the way an assistant reply
does (prose, then a code block, a JSON snippet, a Chinese remark...).

Sizes are lognormal (most texts a few hundred bytes, some tens of KB), like session entries.
Two seeds give two disjoint draws: calibrate on one, score on the other. Both draws share the
generator's small vocabularies, so a held-out seed tests the fit, not robustness to unseen
words; :func:`real_samples` adds real text of the Python installation for that.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from pathlib import Path

import msgspec

from experiments.workloads.text import TextPools, clip_utf8

__all__ = ["TOKEN_KINDS", "Sample", "real_samples", "sample_text", "token_corpus"]

#: The content kinds of the corpus; the goals are checked on every one of them.
TOKEN_KINDS = ("english", "chinese", "code", "json", "logs", "mixed")


class Sample(msgspec.Struct, frozen=True):
    """One text of the corpus: its content kind, its index within the kind, the text."""

    kind: str
    index: int
    text: str


def _size(rng: random.Random, median: int, sigma: float, cap: int) -> int:
    return max(16, min(cap, int(rng.lognormvariate(math.log(median), sigma))))


def _code(pools: TextPools, rng: random.Random, target: int) -> str:
    if rng.random() < 0.3:
        # grep output: path:line:code, as a search tool returns it.
        lines = rng.choices(pools.code_lines, k=max(1, target // 50))
        return "\n".join(f"{pools.path()}:{rng.randrange(1, 900)}:{line}" for line in lines)
    return "\n".join(pools.fill("code", target))


def _json(pools: TextPools, rng: random.Random, target: int) -> str:
    if target < 200 and rng.random() < 0.5:
        # A tool call's arguments: small objects, as the model writes them.
        args = rng.choice(({"path": pools.path()}, {"pattern": pools.func(), "path": "src"},
                           {"command": rng.choice(("pytest -q", "git status", "make build"))},
                           {"url": f"https://api.example.internal/{pools.project()}/items?page={rng.randrange(1, 9)}"}))
        return msgspec.json.encode(args).decode()
    return pools.json_document(target, max(target * 2, 1024))


# Typography and symbols an assistant's markdown carries: dashes, curly quotes, arrows, check
# marks, emoji, accented names, units. They give the estimators' "other non-ASCII" class data.
_SYMBOL_LINES = (
    "✅ {n} passed — 0 failed → see {path}",
    "❌ {func} failed: “{noun}” is None … retrying",
    "⚠️ {n} µs per call (±{m}%), ×{m} slower than before",
    "🚀 deployed {project} v{m}.{n} — ready for review 👍",
    "Müller’s naïve café résumé fix: {func} → {path}",
    "• {noun}: {n} ms → {m} ms (−{m}%)",
    "Temperature 21 °C; latency ≤ {n} ms; size ≈ {m} KB",
    "Привет, {noun}! Ελληνικά: αβγ δέλτα — {path}",
)


def _symbol_line(pools: TextPools, rng: random.Random) -> str:
    return rng.choice(_SYMBOL_LINES).format(n=rng.randrange(1, 5000), m=rng.randrange(1, 99), path=pools.path(),
                                            func=pools.func(), noun=rng.choice(("cache", "parser", "session", "token")),
                                            project=pools.project())


def _mixed(pools: TextPools, rng: random.Random, target: int) -> str:
    """Prose in one or both languages with a code block, a JSON snippet or log lines inside."""
    lang = rng.choice(("english", "chinese"))
    parts: list[str] = []
    if rng.random() < 0.4:
        parts.append("\n".join(_symbol_line(pools, rng) for _ in range(rng.randrange(1, 4))))
    if lang == "chinese" and rng.random() < 0.5:
        parts.append(f"帮我看看 {pools.path()} 里的 {pools.func()} 为什么会出错")
    n = rng.randrange(2, 5)
    for i in range(n):
        share = max(40, target // n)
        kind = lang if i % 2 == 0 else rng.choice(("code", "json", "logs", "english", "chinese"))
        if kind in ("english", "chinese"):
            parts.append(pools.prose(kind, share))
        elif kind == "code":
            parts.append("```\n" + "\n".join(pools.fill("code", share)) + "\n```")
        elif kind == "json":
            parts.append("```json\n" + pools.json_document(share, share * 2 + 256) + "\n```")
        else:
            parts.append("```\n" + "\n".join(pools.fill("logs", share)) + "\n```")
    return "\n\n".join(parts)


def sample_text(kind: str, pools: TextPools, rng: random.Random, target: int) -> str:
    """One text of ``kind`` of about ``target`` UTF-8 bytes (never more than ``target``, at least one piece)."""
    if kind in ("english", "chinese"):
        text = pools.prose(kind, target)
    elif kind == "code":
        text = _code(pools, rng, target)
    elif kind == "json":
        return _json(pools, rng, target)  # JSON stays whole: a clipped document is not JSON
    elif kind == "logs":
        text = "\n".join(pools.fill("logs", target))
    elif kind == "mixed":
        text = _mixed(pools, rng, target)
    else:
        raise ValueError(f"unknown content kind {kind!r}; known: {', '.join(TOKEN_KINDS)}")
    return clip_utf8(text, max(target, 16))


def token_corpus(seed: int, per_kind: int = 200, *, kinds: Iterable[str] = TOKEN_KINDS,
                 median_bytes: int = 600, sigma: float = 1.2, max_bytes: int = 32 * 1024) -> list[Sample]:
    """``per_kind`` texts of every kind, sizes lognormal around ``median_bytes`` (16 .. ``max_bytes``).

    The same arguments give the same texts in any process (string-seeded ``random.Random``).
    """
    if per_kind < 1:
        raise ValueError("per_kind must be >= 1")
    out: list[Sample] = []
    for kind in kinds:
        rng = random.Random(f"aptmem-tokens:{seed}:{kind}")
        pools = TextPools(random.Random(f"aptmem-tokens:{seed}:{kind}:pools"))
        for index in range(per_kind):
            target = _size(rng, median_bytes, sigma, max_bytes)
            out.append(Sample(kind, index, sample_text(kind, pools, rng, target)))
    return out


def real_samples(per_kind: int = 120, max_bytes: int = 8 * 1024) -> list[Sample]:
    """Real text from this Python installation, for a check outside the generator's vocabulary.

    ``real_prose``: docstrings of standard-library modules, classes and functions (English);
    ``real_code``: standard-library source files; ``real_chinese``: the Chinese UTF-8 test texts
    CPython ships in ``test/cjkencodings`` (only a few short ones, and absent where the
    interpreter was installed without its tests). Not seeded; each text is cut to ``max_bytes``.
    """
    import ast
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py") if p.stat().st_size > 2000)
    step = max(1, len(files) // per_kind)
    code: list[str] = []
    prose: list[str] = []
    for path in files[::step][:per_kind]:
        source = path.read_text(encoding="utf-8", errors="replace")
        code.append(clip_utf8(source, max_bytes))
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        docs = [ast.get_docstring(node) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
        text = "\n\n".join(d for d in docs if d and len(d) > 80)
        if len(text) > 200:
            prose.append(clip_utf8(text, max_bytes))
    chinese = [p.read_text(encoding="utf-8") for p in sorted((stdlib / "test" / "cjkencodings").glob("gb*-utf8.txt"))]
    out: list[Sample] = []
    for kind, texts in (("real_prose", prose), ("real_code", code), ("real_chinese", chinese)):
        out.extend(Sample(kind, i, t) for i, t in enumerate(texts))
    return out
