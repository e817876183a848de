"""The README's promises: two set-up commands first, its library example and command list do what they say."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
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


def _block_after(heading: str, fence: str) -> str:
    text = README.read_text(encoding="utf-8")
    part = text[text.index(heading):]
    block = re.search(rf"```{fence}\n(.*?)```", part, re.S)
    assert block is not None, f"no ```{fence} block after {heading!r}"
    return block.group(1)


def test_the_library_example_prints_what_its_comments_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = _block_after("## The library", "python")
    expected = [line.split("#", 1)[1].strip() for line in code.splitlines() if line.startswith("print(")]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {})  # noqa: S102 - our own README
    assert capsys.readouterr().out.splitlines() == expected


def test_the_provider_example_prints_what_its_comments_say(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code = _block_after("**What the provider counts**", "python")
    assert "provider=model" in code and "keep_recent_tokens" in code
    expected = [line.split("#", 1)[1].split(":")[0].strip() for line in code.splitlines() if line.startswith("print(")]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {})  # noqa: S102 - our own README
    assert capsys.readouterr().out.splitlines() == expected


def test_the_command_list_matches_the_commands() -> None:
    from aptmem.cli import build_parser

    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices  # noqa: SLF001
    listed = {}
    for line in _block_after("## The command line", "").splitlines():
        if line.startswith("python -m aptmem "):
            name = line.split()[3]
            listed[name] = line.split("#")[0]
    assert set(listed) == set(commands), "every command is listed once, and only commands that exist"
    for name, line in listed.items():
        options = {o for action in commands[name]._actions for o in action.option_strings}  # noqa: SLF001
        shown = set(re.findall(r"(--[a-z][a-z0-9-]*)", line))
        assert shown <= options, f"{name}: the README shows {sorted(shown - options)}, which it does not take"
        if "PATH|--root DIR SESSION_ID" in line:
            assert "--root" in options


def test_the_command_walkthrough_runs_as_shown(tmp_path: Path) -> None:
    script = _block_after("A session, start to end", "bash")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("APTMEM_ROOT", None)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", f"set -x\n{script}"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    (sid,) = [p.name[: -len(".jsonl")] for p in (tmp_path / "sessions").glob("*.jsonl")]
    assert f"sessions/{sid}.jsonl: clean, 3 entries" in out
    assert f"sessions/{sid}.jsonl  (entries: 3 entries as sent)" in out
    context = json.loads(next(line for line in out.splitlines() if line.startswith('{"messages"')))
    assert [m["role"] for m in context["messages"]] == ["user", "assistant", "tool"]
    assert context["messages"][2]["tool_call_id"] == context["messages"][1]["tool_calls"][0]["id"]
    listing = next(line for line in out.splitlines() if line.startswith(sid))
    assert "bug hunt" in listing and listing.split()[3] == "3"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def _readme_imports() -> list[tuple[str, list[str]]]:
    """Every ``from aptmem... import X, Y`` and ``import aptmem...`` line the README shows, in any block or prose."""
    found = []
    for line in README.read_text(encoding="utf-8").splitlines():
        line = line.strip().strip("`")
        if m := re.match(r"from (aptmem(?:\.\w+)*) import ([\w, ]+?)\s*(?:#.*)?$", line):
            found.append((m.group(1), [n.strip() for n in m.group(2).split(",")]))
        elif m := re.match(r"import (aptmem(?:\.\w+)*)\s*(?:#.*)?$", line):
            found.append((m.group(1), []))
    return found


def test_every_import_the_readme_shows_works_and_the_package_re_exports_its_names() -> None:
    import importlib
    import importlib.util

    import aptmem

    imports = _readme_imports()
    assert len(imports) >= 8, imports  # the library example's imports at least
    for module_name, names in imports:
        module = importlib.import_module(module_name)
        for name in names:
            value = getattr(module, name)
            if importlib.util.find_spec(f"aptmem.{name}") is not None:
                # a name that is also a package (``recall``) cannot be re-exported without hiding the package
                assert name not in aptmem.__all__, name
                continue
            assert name in aptmem.__all__, f"the README imports {name} from {module_name}; aptmem does not re-export it"
            assert getattr(aptmem, name) is value, name
    missing = [name for name in aptmem.__all__ if not hasattr(aptmem, name)]
    assert not missing
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        aptmem.nothing_here  # noqa: B018


def test_import_aptmem_loads_nothing_else() -> None:
    code = ("import sys, aptmem; print(sorted(m for m in sys.modules if m.startswith('aptmem')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "['aptmem']"


def test_the_readme_python_snippets_run_one_after_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    blocks = _python_blocks()
    assert len(blocks) >= 2  # the library example, then recall over the sessions it left
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        scope: dict[str, object] = {}
        exec(compile(block, str(README), "exec"), scope)  # noqa: S102 - our own README
    result = scope["result"]
    assert isinstance(result.text, str) and isinstance(result.hits, list)  # type: ignore[attr-defined]
    assert (tmp_path / "sessions" / "recall-index.sqlite").is_file()
