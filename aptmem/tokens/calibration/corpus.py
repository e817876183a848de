"""A broad, seeded, offline corpus of the kinds of text a session holds, for fitting and checking token estimates.

Each kind is built from real text that ships with the repository or with Python
(:class:`~aptmem.tokens.calibration.sources.Sources`: never the installed packages, which differ
between machines) and generated with a seeded ``random.Random`` where it must be (numbers, hashes,
logs, PEM blocks): nothing is downloaded. The same seed on the same commit and Python gives the
same texts (:func:`corpus_digest`). Every text keeps the
file it came from, so a check can hold out whole files (:func:`held_out_file`), and its kind, so
a check can hold out whole kinds (leave one kind out).

Kinds (:data:`KINDS`): English documentation; Python source; other source and config; compact
and pretty JSON data with short strings; version pins; digit runs; URLs; hashes; base64;
logs; unified diffs; Chinese, Japanese and Korean prose; data with CJK strings; real agent
tool output (with ``transcripts``); and mixed markdown replies that join several of these.
Sizes are lognormal (median ``median_bytes``), as session entries are.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import json
import math
import random
import re
import zlib
from collections.abc import Callable, Iterable
from functools import cached_property

import msgspec

from aptmem.tokens.calibration.sources import RealText, Sources

__all__ = ["KINDS", "Sample", "broad_corpus", "corpus_digest", "held_out_file"]

KINDS = ("english", "code", "code_other", "json_compact", "json_pretty", "version_pins", "digits", "urls", "hashes",
         "base64", "logs", "diffs", "cjk_prose", "cjk_data", "agent_output", "mixed")


class Sample(msgspec.Struct, frozen=True):
    """One text of the corpus: its kind, index within the kind, the file (or generator) it came from, the text."""

    kind: str
    index: int
    source: str
    text: str


def corpus_digest(samples: Iterable[Sample]) -> str:
    """The sha256 of a corpus's kinds and texts, in order: equal digests, equal corpora."""
    joined = "\x00".join(f"{s.kind}\x01{s.text}" for s in samples)
    return hashlib.sha256(joined.encode("utf-8", "surrogatepass")).hexdigest()


def held_out_file(source: str, seed: int, share: int = 5) -> bool:
    """Whether texts from ``source`` belong to the check set (one file in ``share``, chosen by seed)."""
    return zlib.crc32(f"{seed}|{source}".encode()) % share == 0


def _clip(text: str, target: int) -> str:
    """``text`` cut to at most ``target`` UTF-8 bytes, at a character boundary."""
    raw = text.encode("utf-8")
    return text if len(raw) <= target else raw[:target].decode("utf-8", "ignore")


def _slice(rng: random.Random, text: str, target: int) -> str:
    """About ``target`` bytes of ``text`` starting at a line start."""
    if len(text.encode("utf-8")) <= target:
        return text
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    start = rng.choice(starts[: max(1, len(starts) - 2)])
    return _clip(text[start:], target)


class _Builder:
    """The generators of every kind over the sources (repository, standard library, transcripts)."""

    def __init__(self, sources: Sources) -> None:
        self.s = sources

    # -- real text, sliced -----------------------------------------------------------------------

    def _from(self, rng: random.Random, texts: list[RealText], target: int) -> tuple[str, str]:
        item = rng.choice(texts)
        return _slice(rng, item.text, target), item.source

    def english(self, rng: random.Random, target: int) -> tuple[str, str]:
        return self._from(rng, self.s.prose, target)

    def code(self, rng: random.Random, target: int) -> tuple[str, str]:
        return self._from(rng, self.s.python, target)

    def code_other(self, rng: random.Random, target: int) -> tuple[str, str]:
        return self._from(rng, self.s.other_code, target)

    def agent_output(self, rng: random.Random, target: int) -> tuple[str, str]:
        return self._from(rng, self.s.tool_output, target)

    # -- JSON ------------------------------------------------------------------------------------

    def _json_value(self, rng: random.Random, target: int) -> tuple[object, str]:
        """A piece of real JSON data (or a package's metadata as JSON) of about ``target`` bytes."""
        if rng.random() < 0.3:
            source, headers = rng.choice(self.s.metadata)
            value: object = {"name": headers.get("Name", [""])[0], "version": headers.get("Version", [""])[0],
                             "summary": headers.get("Summary", [""])[0],
                             "requires_dist": headers.get("Requires-Dist", [])[: rng.randrange(1, 12)],
                             "urls": headers.get("Project-URL", [])[:4]}
            return value, source
        source, value = rng.choice(self.s.json_values)
        for _ in range(12):  # walk down until the piece is about the size wanted
            if len(json.dumps(value, ensure_ascii=False)) <= target * 1.5:
                break
            if isinstance(value, list) and value:
                n = max(1, min(len(value), int(len(value) * target / max(1, len(json.dumps(value))))))
                start = rng.randrange(0, len(value) - n + 1)
                value = value[start : start + n]
                if n == 1 and len(json.dumps(value, ensure_ascii=False)) > target * 1.5:
                    value = value[0]
            elif isinstance(value, dict) and value:
                keys = sorted(value)
                if rng.random() < 0.5:
                    value = value[rng.choice(keys)]
                else:
                    value = {k: value[k] for k in rng.sample(keys, max(1, len(keys) // 2))}
            else:
                break
        return value, source

    def json_compact(self, rng: random.Random, target: int) -> tuple[str, str]:
        value, source = self._json_value(rng, target)
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")), source

    def json_pretty(self, rng: random.Random, target: int) -> tuple[str, str]:
        value, source = self._json_value(rng, target)
        return json.dumps(value, ensure_ascii=False, indent=rng.choice((2, 2, 4))), source

    # -- version pins ----------------------------------------------------------------------------

    def version_pins(self, rng: random.Random, target: int) -> tuple[str, str]:
        source, headers = rng.choice([m for m in self.s.metadata if m[1].get("Requires-Dist")] or self.s.metadata)
        pins = headers.get("Requires-Dist", []) or [f"{headers.get('Name', ['x'])[0]}=={headers.get('Version', ['0'])[0]}"]
        style = rng.randrange(4)
        if style == 0:  # requirements.txt
            text = "\n".join(pins)
        elif style == 1:  # pyproject.toml
            text = "dependencies = [\n" + "".join(f'    "{p}",\n' for p in (q.replace('"', "'") for q in pins)) + "]"
        elif style == 2:  # pip freeze: the pinned names, at seeded versions
            names = sorted({re.split(r"[ <>=!~;\[]", p, maxsplit=1)[0] for _, h in self.s.metadata
                            for p in h.get("Requires-Dist", [])} - {""}) or ["aptmem"]
            text = "\n".join(f"{n}=={rng.randrange(0, 30)}.{rng.randrange(0, 40)}.{rng.randrange(0, 20)}"
                             for n in rng.sample(names, min(len(names), rng.randrange(5, 40))))
            source = "generated:pip-freeze"
        else:  # a lock or manifest in JSON
            text = json.dumps({"name": headers.get("Name", [""])[0], "dependencies": pins}, indent=rng.choice((None, 2)))
        return _clip(text, max(target, 64)), source

    # -- numbers, URLs, hashes, base64 ---------------------------------------------------------------

    def digits(self, rng: random.Random, target: int) -> tuple[str, str]:
        lines: list[str] = []
        style = rng.randrange(5)
        while sum(len(x) + 1 for x in lines) < target:
            if style == 0:  # a CSV table
                lines.append(",".join(str(rng.randrange(10 ** rng.randrange(1, 8))) if rng.random() < 0.7 else
                                      f"{rng.uniform(-1000, 1000):.{rng.randrange(1, 6)}f}" for _ in range(rng.randrange(3, 9))))
            elif style == 1:  # long integers: ids, counters, big numbers
                lines.append(" ".join(str(rng.randrange(10 ** (d - 1), 10 ** d)) for d in
                                      (rng.randrange(8, 31) for _ in range(rng.randrange(1, 6)))))
            elif style == 2:  # timestamps and durations
                ms = rng.randrange(1_600_000_000_000, 1_800_000_000_000)
                lines.append(f"{ms} {ms // 1000} {rng.randrange(0, 99999)}ms {rng.uniform(0, 100):.3f}s "
                             f"{rng.randrange(0, 10**9):,} bytes")
            elif style == 3:  # a JSON array of numbers
                lines.append(json.dumps([rng.randrange(-10**6, 10**6) if rng.random() < 0.6 else round(rng.random() * 100, 4)
                                         for _ in range(rng.randrange(4, 16))]))
            else:  # numbers in prose
                lines.append(f"Processed {rng.randrange(1, 10**7)} of {rng.randrange(10**7, 10**9)} rows in "
                             f"{rng.randrange(1, 3600)} s ({rng.uniform(0, 100):.2f}%), call +1 {rng.randrange(200, 999)} "
                             f"{rng.randrange(100, 999)} {rng.randrange(1000, 9999)}")
        return _clip("\n".join(lines), max(target, 32)), "generated:digits"

    def urls(self, rng: random.Random, target: int) -> tuple[str, str]:
        real = self.s.urls
        files = [r.source for r in self.s.python]
        lines: list[str] = []
        source = "generated:urls"
        while sum(len(x) + 1 for x in lines) < target:
            if real and rng.random() < 0.5:
                source, url = rng.choice(real)
            else:
                path = rng.choice(files) if files else "src/main.py"
                host = rng.choice(("github.com/org/repo/blob/main", "gitlab.com/group/project/-/tree/v2",
                                   "docs.example.org/en/latest", "api.example.com/v1/items"))
                url = f"https://{host}/{path}"
                if rng.random() < 0.5:
                    url += f"?page={rng.randrange(1, 50)}&per_page={rng.choice((20, 50, 100))}&sort={rng.choice(('asc', 'desc'))}"
                if rng.random() < 0.3:
                    url += f"#L{rng.randrange(1, 900)}-L{rng.randrange(900, 2000)}"
            lines.append(url if rng.random() < 0.6 else f"- [{url.rsplit('/', 1)[-1] or 'link'}]({url})")
        return _clip("\n".join(lines), max(target, 48)), source

    def hashes(self, rng: random.Random, target: int) -> tuple[str, str]:
        if self.s.records and rng.random() < 0.4:
            return self._from(rng, self.s.records, target)
        lines: list[str] = []
        while sum(len(x) + 1 for x in lines) < target:
            data = rng.randbytes(32)
            style = rng.randrange(7)
            if style == 0:
                lines.append(f"commit {hashlib.sha1(data).hexdigest()}\nAuthor: dev <dev@example.org>")
            elif style == 1:
                lines.append(f"{hashlib.sha256(data).hexdigest()}  dist/pkg-{rng.randrange(9)}.{rng.randrange(20)}.tar.gz")
            elif style == 2:
                u = bytearray(rng.randbytes(16))
                u[6], u[8] = (u[6] & 0x0F) | 0x40, (u[8] & 0x3F) | 0x80
                h = u.hex()
                lines.append(f'"id": "{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"')
            elif style == 3:
                lines.append(f'"integrity": "sha512-{base64.b64encode(hashlib.sha512(data).digest()).decode()}"')
            elif style == 4:
                lines.append(f"{hashlib.md5(data).hexdigest()[:rng.choice((7, 8, 12))]} {rng.choice(('fix', 'add', 'bump'))}")
            elif style == 5:  # a JSON web token: three base64url parts
                parts = [base64.urlsafe_b64encode(rng.randbytes(n)).decode().rstrip("=") for n in (27, rng.randrange(60, 200), 32)]
                lines.append(f"Authorization: Bearer {'.'.join(parts)}")
            else:  # keys and secrets as configuration shows them
                key = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(rng.choice((32, 40, 64))))
                lines.append(rng.choice((f"API_KEY={key}", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA{key} dev@host", f'"secret": "{key}"')))
        return _clip("\n".join(lines), max(target, 40)), "generated:hashes"

    def base64(self, rng: random.Random, target: int) -> tuple[str, str]:
        style = rng.randrange(4)
        if style == 0:  # a PEM block: base64 in lines of 64 between its armour
            label = rng.choice(("CERTIFICATE", "PUBLIC KEY", "PRIVATE KEY", "CERTIFICATE REQUEST"))
            body = base64.b64encode(rng.randbytes(max(16, target * 3 // 4 - 40))).decode()
            lines = "\n".join(body[i : i + 64] for i in range(0, len(body), 64))
            return _clip(f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n", max(target, 24)), "generated:pem"
        if style == 1 and self.s.python:
            item = rng.choice(self.s.python)
            data = item.text.encode()[: target * 3 // 4]
            source = item.source
        else:
            data, source = rng.randbytes(max(8, target * 3 // 4)), "generated:base64"
        text = (base64.urlsafe_b64encode(data) if rng.random() < 0.3 else base64.b64encode(data)).decode()
        if rng.random() < 0.3:
            text = "\n".join(text[i : i + 76] for i in range(0, len(text), 76))
        elif rng.random() < 0.3:
            text = f'{{"type": "image", "data": "data:image/png;base64,{text}"}}'
        return _clip(text, max(target, 24)), source

    # -- logs and diffs --------------------------------------------------------------------------

    @cached_property
    def _sentences(self) -> list[str]:
        """Sentences of the real documentation, for log messages."""
        pool = []
        for item in self.s.prose[:400]:
            pool += [s.strip() for s in re.split(r"(?<=[.!?])\s+", item.text) if 20 < len(s.strip()) < 160 and "\n" not in s.strip()]
        return pool or ["nothing to report"]

    def logs(self, rng: random.Random, target: int) -> tuple[str, str]:
        sentences = self._sentences
        modules = [r.source.removesuffix(".py").replace("/", ".") for r in self.s.python[:: max(1, len(self.s.python) // 300)]]
        lines: list[str] = []
        style = rng.randrange(4)
        t = rng.randrange(1_700_000_000, 1_760_000_000)
        while sum(len(x) + 1 for x in lines) < target:
            t += rng.randrange(0, 5)
            level = rng.choice(("INFO", "INFO", "DEBUG", "WARNING", "ERROR"))
            module = rng.choice(modules) if modules else "app"
            msg = rng.choice(sentences)
            if style == 0:
                lines.append(f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T{t % 86400 // 3600:02d}:"
                             f"{t % 3600 // 60:02d}:{t % 60:02d}.{rng.randrange(1000):03d}Z {level:<7} [{module}] {msg}")
            elif style == 1:
                lines.append(f"[{level.lower()}] {module}: {msg} (took {rng.randrange(1, 5000)} ms, "
                             f"request_id={rng.randbytes(6).hex()})")
            elif style == 2:
                test = rng.choice(modules) if modules else "tests.test_x"
                lines.append(f"tests/{test.replace('.', '/')}.py::test_{rng.choice(('it_works', 'round_trip', 'empty'))} "
                             f"{rng.choice(('PASSED', 'PASSED', 'FAILED', 'SKIPPED'))} [{rng.randrange(0, 101):3d}%]")
            else:
                lines.append(f"{module}:{rng.randrange(1, 2000)}: {level}: {msg}")
        return _clip("\n".join(lines), max(target, 48)), "generated:logs"

    def diffs(self, rng: random.Random, target: int) -> tuple[str, str]:
        item = rng.choice(self.s.python)
        before = _slice(rng, item.text, max(200, target // 2)).splitlines(keepends=True)
        after = list(before)
        for _ in range(rng.randrange(1, 5)):
            if not after:
                break
            i = rng.randrange(len(after))
            change = rng.randrange(3)
            if change == 0:
                del after[i]
            elif change == 1:
                after.insert(i, after[i].replace("return", "yield").replace("self", "this").rstrip("\n") + "  # changed\n")
            else:
                after[i] = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), after[i]).replace("_", "__", 1)
        diff = "".join(difflib.unified_diff(before, after, f"a/{item.source}", f"b/{item.source}", n=rng.choice((1, 3))))
        if not diff:  # the changes changed nothing: one more line, always a change
            diff = "".join(difflib.unified_diff(before, [*after, "# end\n"], f"a/{item.source}", f"b/{item.source}"))
        head = f"diff --git a/{item.source} b/{item.source}\nindex {rng.randbytes(4).hex()[:7]}..{rng.randbytes(4).hex()[:7]} 100644\n"
        return _clip(head + diff, max(target, 64)), item.source

    # -- CJK -------------------------------------------------------------------------------------

    def _names(self, rng: random.Random, langs: tuple[str, ...]) -> tuple[str, str, list[tuple[str, str]]]:
        """A language, one of its catalogues (the source) and that catalogue's (English, translated) names."""
        lang = rng.choice([lang for lang in langs if lang in self.s.cjk_names])
        catalogue = rng.choice(sorted(self.s.cjk_names[lang]))
        return lang, catalogue, self.s.cjk_names[lang][catalogue]

    #: sentence templates per language (written for this corpus; the names in them are real); most
    #: carry one name at most, so common words make up most of the text, as in real prose
    _TEMPLATES = {
        "zh": ("{a}和{b}都在使用这个接口，但是结果不一样。", "根据记录，{a}的代码是{code}，请不要修改。",
               "我们需要先检查配置文件，然后重新运行所有的测试。", "这个问题出现在{a}，原因是配置文件里写错了一个参数。",
               "请检查这两个版本之间的区别，并说明为什么会出错。", "{a}（{en}）已经更新；下一步处理剩下的数据。",
               "错误：找不到{a}。你是不是想用{b}？", "总共有{n}条数据，其中{m}条已经完成，其他的还在处理中。",
               "帮我看看这个函数为什么会返回空值，我已经试过重新启动服务了。", "这次修改只影响日志的格式，不会改变任何接口。",
               "如果缓存里没有这个文件，程序就会从磁盘上重新读取。", "我觉得这个方法太慢了，能不能换一种更简单的写法？",
               "测试通过了，但是在生产环境里还是有同样的问题。", "先把旧的会话保存下来，再开始新的会话。",
               "这个命令会删除临时目录里的所有文件，请小心使用。", "用户说页面打开以后一直在加载，我们需要找出原因。"),
        "ja": ("{a}と{b}を比較してください。", "{a}は{b}の近くにあります。", "エラー：{a}が見つかりません。",
               "次に{a}（{en}）のデータを確認します。", "{n}件のうち{m}件が完了しました。",
               "設定ファイルを確認してから、もう一度テストを実行してください。", "この関数はなぜ空の値を返すのでしょうか。",
               "ログの形式だけを変更したので、インターフェースには影響しません。"),
        "ko": ("{a}와 {b}를 비교해 주세요.", "{a}는 {b} 근처에 있습니다.", "오류: {a}을(를) 찾을 수 없습니다.",
               "다음으로 {a}({en}) 데이터를 확인합니다.", "{n}개 중 {m}개가 완료되었습니다.",
               "설정 파일을 확인한 다음 테스트를 다시 실행해 주세요.", "이 함수가 왜 빈 값을 반환하는지 알려 주세요.",
               "로그 형식만 바꿨기 때문에 인터페이스에는 영향이 없습니다."),
    }

    def cjk_prose(self, rng: random.Random, target: int) -> tuple[str, str]:
        """Sentences in Chinese, Japanese or Korean around real place, language and currency names."""
        lang, source, names = self._names(rng, ("zh_CN", "zh_CN", "zh_TW", "ja", "ko"))
        templates = self._TEMPLATES[lang[:2]]
        parts: list[str] = []
        while sum(len(p.encode()) for p in parts) < target:
            (en, a), (_, b), (_, c) = rng.choice(names), rng.choice(names), rng.choice(names)
            parts.append(rng.choice(templates).format(a=a, b=b, c=c, en=en, code=en[:3].upper(), n=rng.randrange(2, 999),
                                                      m=rng.randrange(1, 99)))
        return _clip((" " if lang == "ko" else "").join(parts), max(target, 24)), source

    def cjk_data(self, rng: random.Random, target: int) -> tuple[str, str]:
        """Real names in Chinese, Japanese or Korean as data: JSON, CSV, a list, a table."""
        lang, source, names = self._names(rng, ("zh_CN", "zh_TW", "ja", "ko"))
        rows: list[tuple[str, str]] = []
        while sum(len(local.encode()) + 8 for _, local in rows) < target:
            rows.append(rng.choice(names))
        style = rng.randrange(4)
        if style == 0:
            text = json.dumps({en[:3].upper() + str(i): local for i, (en, local) in enumerate(rows)}, ensure_ascii=False,
                              indent=rng.choice((None, 2)))
        elif style == 1:
            text = "\n".join(f"{i},{local}" for i, (_, local) in enumerate(rows, start=1))
        elif style == 2:
            text = "\n".join(f"- {local}" for _, local in rows)
        else:
            text = "\n".join(f"| {i} | {local} | {en} |" for i, (en, local) in enumerate(rows, start=1))
        return _clip(text, max(target, 32)), source

    # -- mixed -----------------------------------------------------------------------------------

    def mixed(self, rng: random.Random, target: int) -> tuple[str, str]:
        """A markdown reply: prose, then a code block, a JSON snippet, a list, a CJK remark, in some order."""
        parts = [self.english(rng, max(80, target // 3))[0]]
        share = max(80, target // 3)
        for _ in range(rng.randrange(1, 4)):
            pick = rng.randrange(6)
            if pick == 0:
                parts.append("```python\n" + self.code(rng, share)[0] + "\n```")
            elif pick == 1:
                parts.append("```json\n" + self.json_pretty(rng, share)[0] + "\n```")
            elif pick == 2:
                parts.append("\n".join(f"- {line}" for line in self.urls(rng, share)[0].splitlines()))
            elif pick >= 3 and self.s.cjk_names:
                parts.append(self.cjk_prose(rng, share // 2)[0])
            else:
                parts.append("```\n" + self.logs(rng, share)[0] + "\n```")
        return _clip("\n\n".join(parts), max(target, 64)), "generated:mixed"


def _size(rng: random.Random, median: int, sigma: float, cap: int) -> int:
    return max(16, min(cap, int(rng.lognormvariate(math.log(median), sigma))))


def broad_corpus(seed: int, per_kind: int, *, sources: Sources | None = None, kinds: Iterable[str] = KINDS,
                 median_bytes: int = 600, sigma: float = 1.0, max_bytes: int = 16 * 1024) -> list[Sample]:
    """``per_kind`` texts of every kind that the sources can make (a kind with no source is left out)."""
    src = sources or Sources()
    builder = _Builder(src)
    available = {"english": src.prose, "code": src.python, "code_other": src.other_code, "agent_output": src.tool_output,
                 "json_compact": src.json_values, "json_pretty": src.json_values, "version_pins": src.metadata,
                 "diffs": src.python, "cjk_prose": src.cjk_names, "cjk_data": src.cjk_names,
                 "logs": src.python, "mixed": src.prose}
    out: list[Sample] = []
    for kind in kinds:
        if kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; known: {', '.join(KINDS)}")
        if kind in available and not available[kind]:
            continue
        make: Callable[[random.Random, int], tuple[str, str]] = getattr(builder, kind)
        rng = random.Random(f"aptmem-broad:{seed}:{kind}")
        index = 0
        while index < per_kind:
            text, source = make(rng, _size(rng, median_bytes, sigma, max_bytes))
            if not text.strip():
                continue
            if source.startswith("generated:"):
                source = f"{source}:{seed}:{index}"
            out.append(Sample(kind, index, source, text))
            index += 1
    return out
