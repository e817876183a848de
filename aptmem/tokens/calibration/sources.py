"""Real text found offline, for the token corpus: the installed packages' own files and real transcripts.

Everything here is read from disk, never downloaded: documentation, source, licences and data
files shipped in ``site-packages`` (the project's own dependencies, so every install has them),
the packages' metadata (``METADATA`` with its version pins and URLs, ``RECORD`` with its file
hashes), the country, language and currency names ``pycountry`` ships translated into Chinese,
Japanese and Korean, and the tool output of real agent transcripts when a folder of them is given.
Each text keeps the name of the file it came from, so a check can hold out whole files.
Files are listed in sorted order: the same installation gives the same sources.
"""

from __future__ import annotations

import json
import struct
import sysconfig
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

__all__ = ["RealText", "Sources"]

#: Files larger than this are read only up to it (a corpus needs pieces, not whole files).
_MAX_READ = 256 * 1024


@dataclass(frozen=True)
class RealText:
    """A real text and the file it came from (relative to its root)."""

    source: str
    text: str


def _read_mo(data: bytes) -> list[tuple[str, str]]:
    """The (original, translated) strings of a GNU gettext ``.mo`` catalogue (plural forms left out)."""
    magic = struct.unpack_from("<I", data)[0]
    order = "<" if magic == 0x950412DE else ">" if magic == 0xDE120495 else None
    if order is None:
        raise ValueError("not a .mo file")
    _, count, originals, translations = struct.unpack_from(order + "4I", data, 4)
    out = []
    for i in range(count):
        length, offset = struct.unpack_from(order + "2I", data, originals + 8 * i)
        t_length, t_offset = struct.unpack_from(order + "2I", data, translations + 8 * i)
        original = data[offset : offset + length]
        if b"\x00" in original:  # a plural entry: singular and plural forms, left out
            continue
        out.append((original.decode("utf-8", "replace"), data[t_offset : t_offset + t_length].decode("utf-8", "replace")))
    return out


def _read(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            raw = fh.read(_MAX_READ)
    except OSError:
        return None
    text = raw.decode("utf-8", "ignore")
    return text if text.strip() and "\x00" not in text else None


@dataclass
class Sources:
    """The real texts of one installation (``site_packages``) and, if given, a folder of transcripts."""

    site_packages: Path = field(default_factory=lambda: Path(sysconfig.get_paths()["purelib"]))
    transcripts: Path | None = None

    def _files(self, *patterns: str, min_bytes: int = 400) -> list[Path]:
        found: set[Path] = set()
        for pattern in patterns:
            found.update(p for p in self.site_packages.rglob(pattern) if p.is_file() and "__pycache__" not in p.parts)
        return sorted(p for p in found if p.stat().st_size >= min_bytes)

    def _texts(self, *patterns: str) -> list[RealText]:
        out = []
        for path in self._files(*patterns):
            text = _read(path)
            if text is not None:
                out.append(RealText(str(path.relative_to(self.site_packages)), text))
        return out

    @cached_property
    def prose(self) -> list[RealText]:
        """Documentation and licences: markdown, reStructuredText, plain text."""
        return self._texts("*.md", "*.rst", "LICENSE*", "COPYING*", "*.txt")

    @cached_property
    def python(self) -> list[RealText]:
        """Python source files."""
        return self._texts("*.py")

    @cached_property
    def other_code(self) -> list[RealText]:
        """Source in other languages and config: JavaScript, C headers, CSS, HTML, stubs, YAML, TOML."""
        return self._texts("*.js", "*.h", "*.c", "*.css", "*.html", "*.pyi", "*.yaml", "*.yml", "*.toml", "*.cfg")

    @cached_property
    def json_values(self) -> list[tuple[str, object]]:
        """Parsed JSON data files (schemas, SBOMs, databases), by file."""
        out = []
        for path in self._files("*.json", min_bytes=200):
            if path.stat().st_size > 8 * 1024 * 1024:  # a tokenizer's vocabulary: not data a session shows
                continue
            try:
                out.append((str(path.relative_to(self.site_packages)), json.loads(path.read_text(encoding="utf-8"))))
            except (OSError, ValueError):
                continue
        return out

    @cached_property
    def metadata(self) -> list[tuple[str, dict[str, list[str]]]]:
        """Each installed distribution's ``METADATA`` headers (name -> values), by file."""
        out = []
        for path in sorted(self.site_packages.glob("*.dist-info/METADATA")):
            headers: dict[str, list[str]] = {}
            text = _read(path) or ""
            for line in text.split("\n\n", 1)[0].splitlines():
                key, sep, value = line.partition(": ")
                if sep and not line.startswith(" "):
                    headers.setdefault(key, []).append(value)
            out.append((str(path.relative_to(self.site_packages)), headers))
        return out

    @cached_property
    def records(self) -> list[RealText]:
        """``RECORD`` files: one installed file a line, with its sha256 (base64url) and size."""
        return self._texts("*.dist-info/RECORD")

    @cached_property
    def pem(self) -> list[RealText]:
        """PEM files (base64 certificates), e.g. certifi's bundle."""
        return self._texts("*.pem")

    @cached_property
    def cjk_names(self) -> dict[str, dict[str, list[tuple[str, str]]]]:
        """Per language (zh_CN, zh_TW, ja, ko) and catalogue file: (English, translated) names from pycountry."""
        out: dict[str, dict[str, list[tuple[str, str]]]] = {}
        root = self.site_packages / "pycountry" / "locales"
        for lang in ("zh_CN", "zh_TW", "ja", "ko"):
            for mo in sorted((root / lang / "LC_MESSAGES").glob("*.mo")):
                try:
                    catalog = _read_mo(mo.read_bytes())
                except (OSError, ValueError, struct.error):
                    continue
                pairs = sorted((k, v) for k, v in catalog if k and v != k)
                if pairs:
                    out.setdefault(lang, {})[str(mo.relative_to(self.site_packages))] = pairs
        return out

    @cached_property
    def tool_output(self) -> list[RealText]:
        """What real agents' tools returned (and the arguments they were called with), from the transcripts."""
        if self.transcripts is None or not self.transcripts.is_dir():
            return []
        import msgspec

        from aptmem.entries import ToolCall, ToolResult
        from aptmem.importers import detect_format, iter_entries

        out = []
        for path in sorted(self.transcripts.glob("*.jsonl")):
            fmt = detect_format(path)
            for entry in iter_entries(fmt, path):
                if isinstance(entry, ToolResult) and entry.content.strip():
                    out.append(RealText(path.name, entry.content))
                elif isinstance(entry, ToolCall):
                    out.append(RealText(path.name, msgspec.json.encode(entry.args).decode()))
        return out
