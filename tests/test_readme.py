"""The README's promises: two set-up commands first, and its library example runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_starts_with_the_two_set_up_commands() -> None:
    first_block = re.match(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert first_block is not None, "the README must open with the set-up commands"
    assert first_block.group(1).strip().splitlines() == [
        'python -m pip install -e . && python -m experiments run',
        'python -m pip install -e ".[test]" && python -m pytest',
    ]


def test_the_library_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = re.search(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert code is not None
    monkeypatch.chdir(tmp_path)
    scope: dict[str, object] = {}
    exec(compile(code.group(1), str(README), "exec"), scope)  # noqa: S102 - our own README
    assert scope["context"].tokens > 0 and scope["new_sid"] != scope["sid"]  # type: ignore[attr-defined]
