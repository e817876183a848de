"""The fuzzer's inputs: seed files and the mutations that break them, all drawn from one seeded RNG.

Three kinds of input:

* ``random_bytes``: bytes with no structure at all (half of them biased towards JSON's
  punctuation and line ends, so they get past the first byte of the parser now and then);
* ``real_transcript``: a window of whole lines of a real agent transcript (Claude Code, pi),
  read from the configured corpus folders, then mutated;
* ``aptmem_session``: a window of an aptmem session (the synthetic workload, with appended and
  legacy compactions and lines of unknown types), then mutated.

A mutation is applied to a copy of the seed's bytes; the originals are only ever read. Each
input records the mutations it went through, so a finding names how it was made as well as
the bytes themselves.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

__all__ = ["INPUT_KINDS", "MUTATIONS", "FuzzInput", "Seed", "builtin_sessions", "builtin_transcripts",
           "load_corpus", "make_input", "mutate"]

#: What an input is made from.
INPUT_KINDS = ("random_bytes", "real_transcript", "aptmem_session")

#: Every mutation kind, in the order the settings list them.
MUTATIONS = ("bit_flip", "byte_insert", "byte_delete", "truncate", "splice_lines", "nul_bytes",
             "huge_number", "deep_nesting", "invalid_utf8", "crlf_bom", "duplicate_lines", "long_line",
             "retype_value")

# Bytes that matter to a JSON-lines parser: biased random inputs draw from these half the time.
_JSONISH = b'{}[]",:\\\n\r\t 0123456789.-+eEtrufalsn\x00\xef\xbb\xbf'
_TYPES = (b"user", b"assistant", b"tool_call", b"tool_result", b"compaction", b"compaction_marker", b"metadata")


@dataclass(frozen=True)
class Seed:
    """One seed file: where it came from, its kind, its bytes (never written back)."""

    kind: str
    name: str
    data: bytes


@dataclass
class FuzzInput:
    """One input handed to the targets: its bytes, its kind, the seed and mutations that made it."""

    kind: str
    data: bytes
    seed_name: str = ""
    mutations: list[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        """A short name for the input's bytes (file names of saved reproducers)."""
        return hashlib.blake2b(self.data, digest_size=8).hexdigest()


def load_corpus(paths: list[str]) -> tuple[list[Seed], list[str]]:
    """Read every ``*.jsonl`` file under the given files or folders; return seeds and the paths missing.

    A missing path is not an error (a fresh clone may not have the shared fixtures): it is
    returned so the run's notes can say what was fuzzed and what was not.
    """
    seeds: list[Seed] = []
    missing: list[str] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files = sorted(path.glob("*.jsonl"))
        elif path.is_file():
            files = [path]
        else:
            missing.append(name)
            continue
        seeds += [Seed("real_transcript", f.name, f.read_bytes()) for f in files]
    return seeds, missing


def builtin_transcripts() -> list[Seed]:
    """Small transcripts in the shapes of Claude Code and pi logs, written for the fuzzer.

    They stand in for the real corpus when it is absent, so a fresh clone still fuzzes the
    foreign line shapes (nested ``message`` objects, ``uuid`` chains, string timestamps).
    """
    claude = (
        b'{"type":"file-history-snapshot","messageId":"m1","snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false}\n'
        b'{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"fix the parser"},'
        b'"uuid":"u1","timestamp":"2026-02-10T21:11:56.906Z"}\n'
        b'{"parentUuid":"u1","type":"assistant","message":{"id":"msg_1","role":"assistant","content":[{"type":"text",'
        b'"text":"Looking."},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/src/a.py"}}],'
        b'"usage":{"input_tokens":12,"cache_read_input_tokens":4000,"output_tokens":30}},"uuid":"u2"}\n'
        b'{"parentUuid":"u2","type":"user","message":{"role":"user","content":[{"type":"tool_result",'
        b'"tool_use_id":"toolu_1","content":"def a():\\n    return 1\\n"}]},"uuid":"u3"}\n'
        b'{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":167000},"uuid":"u4"}\n'
        b'{"type":"user","isCompactSummary":true,"message":{"role":"user","content":"Summary: \xe5\xb8\xae\xe6\x88\x91"},"uuid":"u5"}\n'
    )
    pi = (
        b'{"type":"session","id":"d703a1a9-1b7b-4fb1-b512-c9738b1fe617","timestamp":"2025-11-20T23:33:50.805Z",'
        b'"provider":"anthropic","modelId":"claude-sonnet-4-5"}\n'
        b'{"type":"message","timestamp":"2025-11-20T23:33:01.550Z","message":{"role":"user","content":'
        b'[{"type":"text","text":"/mode"}],"timestamp":1763681581544}}\n'
        b'{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":0,"output":0,"cacheRead":0}}}\n'
        b'{"type":"model_change","provider":"openai","modelId":"gpt-5.1-codex"}\n'
        b'{"type":"compaction","summary":"earlier work","firstKeptEntryId":"e9","tokensBefore":120000}\n'
    )
    return [Seed("real_transcript", "builtin-claude-code.jsonl", claude), Seed("real_transcript", "builtin-pi.jsonl", pi)]


def builtin_sessions(seed: int, count: int = 3, entries: int = 60) -> list[Seed]:
    """aptmem sessions from the synthetic workload, with compactions and unknown lines mixed in."""
    from aptmem.entries import Compaction, CompactionMarker, encode_line
    from experiments.workloads.synthetic import WorkloadConfig, generate

    seeds = []
    for n in range(count):
        rng = random.Random(f"fuzz-session-{seed}-{n}")
        config = WorkloadConfig(max_entries=entries, seed=seed * 1000 + n, facts=2, tool_result_median_bytes=300,
                                max_tool_result_bytes=4096, assistant_max_bytes=2048)
        history = list(generate(config).entries)
        lines = [encode_line(entry) for entry in history]
        ids = [entry.id for entry in history if entry.id]
        for _ in range(3):  # appended compactions naming an earlier entry (or nothing)
            at = rng.randrange(1, len(lines))
            kind = CompactionMarker if rng.random() < 0.3 else Compaction
            named = rng.choice([*ids[:at], None]) if ids else None
            lines.insert(at, encode_line(kind(ts=1_717_000_000_000 + at, id=f"c{at}", summary="so far", first_kept=named)))
        for _ in range(2):  # lines of a type this version does not know: kept byte for byte
            lines.insert(rng.randrange(len(lines) + 1), b'{"type":"branch","id":"b1","ts":7,"big":123456789012345678901234567890}\n')
        seeds.append(Seed("aptmem_session", f"session-{n}.jsonl", b"".join(lines)))
    return seeds


def _window(rng: random.Random, data: bytes, limit: int) -> bytes:
    """A random run of whole lines of ``data``, at most ``limit`` bytes (a large seed is sampled, not read whole)."""
    if len(data) <= limit:
        return data
    begin = _line_start(rng, data)
    end = begin + rng.randrange(1, limit + 1)
    cut = data.rfind(b"\n", begin, end)
    return data[begin : cut + 1 if cut > begin else end]


def _line_start(rng: random.Random, data: bytes | bytearray) -> int:
    """The start of the line holding a random byte of ``data`` (long lines are likelier: fine for fuzzing)."""
    if not data:
        return 0
    return data.rfind(b"\n", 0, rng.randrange(len(data))) + 1


#: Line lengths where readers change behaviour: around the fuzz run's small line cap (4096 by
#: default) and around the backwards reader's 64 KiB block.
_EDGES = (4095, 4096, 4097, 65535, 65536, 65537)


def _sized_line(rng: random.Random, size: int) -> bytes:
    """A good entry whose line (without its line end) is exactly ``size`` bytes, maybe CRLF-ended."""
    head = b'{"type":"user","ts":1,"content":"'
    return head + b"x" * max(0, size - len(head) - 2) + b'"}' + rng.choice([b"\n", b"\r\n", b""])


#: What a field's value is replaced with by ``retype_value``: every JSON type, and edge values of each.
_VALUES = (None, True, 0, -1, 2**63, 1.5, "", "帮我 🙂", [], [None], {}, {"type": 7}, {"text": None})


def _retype_value(rng: random.Random, buf: bytearray) -> bytearray:
    """Change one value (or drop one key) deep inside one JSON line, keeping the line valid JSON.

    Byte-level mutations rarely get past the parser; this one hands the importers and the entry
    decoder well-formed lines whose fields have the wrong type or are missing.
    """
    begin = _line_start(rng, buf)
    end = buf.find(b"\n", begin)
    end = len(buf) if end < 0 else end
    try:
        obj = msgspec.json.decode(bytes(buf[begin:end]))
    except (msgspec.DecodeError, RecursionError):
        return buf
    node, parent, key = obj, None, None
    for _ in range(rng.randint(1, 6)):  # walk down a random path
        children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) if isinstance(node, list) else []
        if not children:
            break
        parent, (key, node) = node, rng.choice(children)
    if parent is None:
        return buf
    if isinstance(parent, dict) and rng.random() < 0.25:
        del parent[key]
    else:
        parent[key] = rng.choice(_VALUES)
    buf[begin:end] = msgspec.json.encode(obj)
    return buf


def mutate(rng: random.Random, data: bytes, kind: str, small_cap: int = 4096) -> bytes:
    """Return ``data`` changed by one mutation of ``kind`` (see :data:`MUTATIONS`)."""
    buf = bytearray(data)
    size = len(buf)
    at = rng.randrange(size + 1)
    if kind == "bit_flip":
        for _ in range(rng.randint(1, 8)):
            if buf:
                buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    elif kind == "byte_insert":
        buf[at:at] = bytes(rng.choice(_JSONISH) if rng.random() < 0.7 else rng.randrange(256) for _ in range(rng.randint(1, 16)))
    elif kind == "byte_delete":
        del buf[at : at + rng.randint(1, 64)]
    elif kind == "truncate":
        del buf[at:]
    elif kind == "splice_lines":
        # Part of one line glued into another line at a random byte: two writers interleaving.
        other = bytes(buf[rng.randrange(size + 1) :][: rng.randint(1, 200)]) if size else b"{"
        buf[at:at] = other
    elif kind == "nul_bytes":
        run = rng.randint(1, 4096)
        choice = rng.randrange(3)
        if choice == 0:
            buf[at : at + run] = b"\x00" * run  # a zero-filled block over the bytes (ext4 after a crash)
        elif choice == 1:
            buf[at:at] = b"\x00" * run
        else:  # a lost write's zeros, no line end, then the next append's intact line
            start = _line_start(rng, buf)
            buf[start:start] = b"\x00" * run
    elif kind == "huge_number":
        digits = rng.choice([20, 40, 400, 4301, 10_000])
        number = (b"-" if rng.random() < 0.3 else b"") + b"9" * digits + (b".5e99999" if rng.random() < 0.3 else b"")
        buf[at:at] = rng.choice([number, b'{"type":"user","content":"n","ts":' + number + b"}\n",
                                 b'{"type":"tool_call","name":"n","args":{"x":' + number + b'},"ts":1}\n'])
    elif kind == "deep_nesting":
        depth = rng.choice([64, 1000, 20_000, 100_000])
        opener, closer = (b"[", b"]") if rng.random() < 0.5 else (b'{"a":', b"}")
        body = opener * depth + b"1" + closer * (depth if rng.random() < 0.8 else rng.randrange(depth))
        buf[at:at] = rng.choice([body, b'{"type":"tool_call","name":"d","args":{"x":' + body + b'},"ts":1}\n',
                                 b'{"type":"future","x":' + body + b"}\n"])
    elif kind == "invalid_utf8":
        bad = rng.choice([b"\xff", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b'\\ud800', b"\x80\x80"])
        buf[at:at] = bad
    elif kind == "crlf_bom":
        choice = rng.randrange(4)
        if choice == 0:
            buf = bytearray(bytes(buf).replace(b"\n", b"\r\n"))
        elif choice == 1:
            buf[0:0] = b"\xef\xbb\xbf"
        elif choice == 2:
            buf[at:at] = rng.choice([b"\r", b"\r\r\n", b"\xef\xbb\xbf", b"\n\r"])
        else:
            buf = bytearray(bytes(buf).replace(b"\n", b"\r"))  # old Mac line ends: one long line
    elif kind == "duplicate_lines":
        begin = _line_start(rng, buf)
        end = buf.find(b"\n", begin)
        line = bytes(buf[begin : end + 1 if end >= 0 else len(buf)])
        target = _line_start(rng, buf)
        buf[target:target] = line * rng.randint(1, 3)
    elif kind == "long_line":
        # A whole line exactly at, just under or just over the cap or a block boundary.
        size = rng.choice(_EDGES) + (small_cap - 4096 if rng.random() < 0.5 else 0)
        target = _line_start(rng, buf)
        buf[target:target] = _sized_line(rng, size)
    elif kind == "retype_value":
        buf = _retype_value(rng, buf)
    else:
        raise ValueError(f"unknown mutation {kind!r}; choose from {', '.join(MUTATIONS)}")
    return bytes(buf)


def _random_bytes(rng: random.Random, limit: int) -> bytes:
    size = rng.randrange(min(limit, 4096) + 1)
    if rng.random() < 0.5:
        return rng.randbytes(size)
    # JSON-flavoured noise, sometimes with a real entry type in it.
    out = bytearray(rng.choices(_JSONISH, k=size))
    if rng.random() < 0.5:
        at = rng.randrange(len(out) + 1)
        out[at:at] = b'{"type":"' + rng.choice(_TYPES) + b'","ts":1,"content":"'
    return bytes(out)


def make_input(rng: random.Random, kind: str, seeds: dict[str, list[Seed]], mutations: list[str], max_bytes: int,
               small_cap: int = 4096) -> FuzzInput:
    """Draw one input of ``kind``: random bytes, or a seed window with one to three mutations."""
    if kind == "random_bytes" or not seeds.get(kind):
        return FuzzInput("random_bytes", _random_bytes(rng, max_bytes))
    seed = rng.choice(seeds[kind])
    data = _window(rng, seed.data, max_bytes)
    applied = [rng.choice(mutations) for _ in range(rng.randint(1, 3))] if mutations else []
    for name in applied:
        data = mutate(rng, data, name, small_cap)
    # Mutations that add (deep nesting, huge numbers) may pass the limit: cut back, keeping the line shape.
    if len(data) > max_bytes + 300_000:
        data = data[: max_bytes + 300_000]
    return FuzzInput(kind, data, seed.name, applied)
