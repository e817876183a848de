"""Seeded generators of the calibration corpus's data kinds beyond one repository: version pins as
several ecosystems' manifests and lock files write them, numbers in the shapes tools print, URLs.

The repository has one ``pyproject.toml``, so its real pins alone made one style of one file; an
agent reads ``package.json``, ``Cargo.toml``, ``go.mod``, lock files and ``pip freeze`` output too.
Package names are real ones (the repository's pins and the standard library's module names, as
they are and joined the way distributions name themselves: ``typing-extensions``,
``email_utils``), versions and constraints are drawn in the shapes those ecosystems use. Every
text is a function of the ``random.Random`` it is given: the same seed, the same corpus.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Sequence

__all__ = ["manifest", "numbers", "package_names", "url", "version"]


def package_names(pins: Sequence[str]) -> list[str]:
    """Real package names: those the pins name, and the standard library's public module names."""
    named = {re.split(r"[ <>=!~;\[(]", p.strip(), maxsplit=1)[0] for p in pins}
    return sorted((named | {m for m in sys.stdlib_module_names if not m.startswith("_")}) - {""})


def _name(rng: random.Random, names: Sequence[str]) -> str:
    name = rng.choice(names)
    if rng.random() < 0.35:  # distributions join words: typing-extensions, zope.interface, email_utils
        name += rng.choice(("-", "-", "_", ".")) + rng.choice(names)
    return name.lower() if rng.random() < 0.8 else name


def version(rng: random.Random) -> str:
    """A release number as the ecosystems write them: semver, calendar, pre- and post-releases."""
    major = rng.choice((0, 0, 1, 1, 2, 3, 4, 5, 6, 10, 24, 2024, 2025))
    parts = [major, rng.randrange(0, 40)] + ([rng.randrange(0, 30)] if rng.random() < 0.8 else [])
    text = ".".join(map(str, parts))
    roll = rng.random()
    if roll < 0.1:
        text += rng.choice(("rc", "a", "b", ".dev")) + str(rng.randrange(0, 5))
    elif roll < 0.18:
        text += f"-{rng.choice(('beta', 'alpha', 'rc', 'next'))}.{rng.randrange(0, 9)}"
    elif roll < 0.22:
        text += f".post{rng.randrange(1, 4)}"
    elif roll < 0.25:
        text += f"+{rng.choice(('cpu', 'cu121', 'local'))}"
    return text


def _python_pin(rng: random.Random, names: Sequence[str]) -> str:
    pin = _name(rng, names)
    if rng.random() < 0.15:
        pin += "[" + ",".join(rng.sample(("all", "test", "dev", "cli", "crypto", "speedups"), rng.randrange(1, 3))) + "]"
    op = rng.choice(("==", ">=", ">=", "~=", "<", "!=", ">"))
    pin += f"{rng.choice(('', ' '))}{op}{rng.choice(('', ' '))}{version(rng)}"
    if rng.random() < 0.3:
        pin += f",<{rng.randrange(1, 20)}"
    if rng.random() < 0.2:
        pin += rng.choice((f' ; python_version < "3.{rng.randrange(8, 14)}"', ' ; sys_platform == "win32"',
                           f' ; extra == "{rng.choice(("all", "test", "docs"))}"', " ; platform_machine != 'arm64'"))
    return pin


def manifest(rng: random.Random, names: Sequence[str], target: int) -> str:
    """Dependencies of about ``target`` bytes in one of nine manifest or lock formats."""
    style = rng.randrange(9)
    lines: list[str] = []
    used: set[str] = set()
    while sum(len(x) + 1 for x in lines) < target:
        name, ver = _name(rng, names), version(rng)
        if style == 2:  # a crate's name has no dot (in Cargo.toml a dotted key would be a table)
            name = name.replace(".", "-")
        if name in used and len(used) < len(names):  # a manifest names a package once
            continue
        used.add(name)
        if style == 0:  # requirements.txt, some lines with hashes
            line = _python_pin(rng, names)
            if rng.random() < 0.2:
                line += f" \\\n    --hash=sha256:{rng.getrandbits(256):064x}"
        elif style == 1:  # package.json
            line = f'    "{name}": "{rng.choice(("^", "~", "", ">=", ""))}{ver}",'
        elif style == 2:  # Cargo.toml
            line = (f'{name} = "{ver}"' if rng.random() < 0.6 else
                    f'{name} = {{ version = "{ver}", features = [{", ".join(repr(f) for f in rng.sample(names, 2))}] }}')
        elif style == 3:  # go.mod
            line = f"\t{rng.choice(('github.com', 'golang.org/x', 'go.uber.org', 'gopkg.in'))}/{name}/{_name(rng, names)} v{ver}"
        elif style == 4:  # Gemfile.lock
            line = f"    {name} ({ver})" + (f"\n      {_name(rng, names)} (>= {version(rng)})" if rng.random() < 0.4 else "")
        elif style == 5:  # pip freeze / pip list
            line = f"{name}=={ver}" if rng.random() < 0.7 else f"{name:<32}{ver}"
        elif style == 6:  # a Python lock file
            line = f'[[package]]\nname = "{name}"\nversion = "{ver}"\nsource = {{ registry = "https://pypi.org/simple" }}\n'
        elif style == 7:  # conda environment.yml
            line = f"  - {name}={ver}" + (f"=py{rng.randrange(38, 314)}h{rng.getrandbits(28):07x}_0" if rng.random() < 0.4 else "")
        else:  # yarn / npm lock entries
            line = f'"{name}@^{ver}":\n  version "{ver}"\n  resolved "https://registry.yarnpkg.com/{name}/-/{name}-{ver}.tgz"'
        lines.append(line)
    head = {1: '{\n  "dependencies": {', 2: "[dependencies]", 3: "module example.com/app\n\ngo 1.22\n\nrequire (",
            4: "GEM\n  remote: https://rubygems.org/\n  specs:", 7: "name: env\ndependencies:"}.get(style)
    return "\n".join(([head] if head else []) + lines)


def numbers(rng: random.Random, target: int) -> str:
    """Numbers as tools print them: timestamps, addresses, sizes, versions, scientific floats, aligned tables."""
    style = rng.randrange(6)
    lines: list[str] = []
    while sum(len(x) + 1 for x in lines) < target:
        if style == 0:  # ISO timestamps and durations
            lines.append(f"2{rng.randrange(0, 30):03d}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T"
                         f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(10**6):06d}Z "
                         f"took {rng.randrange(1, 10**5)}.{rng.randrange(1000):03d}ms")
        elif style == 1:  # addresses and ports
            lines.append(f"{'.'.join(str(rng.randrange(256)) for _ in range(4))}:{rng.randrange(1, 65536)} -> "
                         f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}/{rng.choice((8, 16, 24, 32))}")
        elif style == 2:  # sizes, rates and percentages
            lines.append(f"{rng.uniform(0, 10**4):.1f} {rng.choice(('KiB', 'MB', 'GiB', 'ms', 'req/s'))} "
                         f"{rng.uniform(0, 100):.2f}% {rng.randrange(10**9):,}")
        elif style == 3:  # scientific floats, as numpy and loggers print them
            lines.append(" ".join(f"{rng.uniform(-1, 1) * 10 ** rng.randrange(-12, 12):.{rng.randrange(2, 9)}e}"
                                  for _ in range(rng.randrange(2, 8))))
        elif style == 4:  # an aligned table of counts
            lines.append("".join(f"{rng.randrange(10 ** rng.randrange(1, 9)):>{rng.randrange(6, 14)}}"
                                 for _ in range(rng.randrange(3, 8))))
        else:  # dotted versions and build numbers
            lines.append(f"v{version(rng)} build {rng.randrange(1, 99999)} ({rng.randrange(10**11, 10**12)})")
    return "\n".join(lines)


def url(rng: random.Random, names: Sequence[str], paths: Sequence[str]) -> str:
    """One URL in a shape agents meet: registries, repositories at a commit, object stores, APIs, local servers."""
    name, path = _name(rng, names), rng.choice(paths) if paths else "src/main.py"
    shapes = (
        f"https://pypi.org/project/{name}/{version(rng)}/",
        f"https://www.npmjs.com/package/@{_name(rng, names)}/{name}",
        f"https://github.com/{_name(rng, names)}/{name}/commit/{rng.getrandbits(160):040x}",
        f"https://github.com/{_name(rng, names)}/{name}/blob/{rng.getrandbits(160):040x}/{path}#L{rng.randrange(1, 900)}",
        f"git@github.com:{_name(rng, names)}/{name}.git",
        f"s3://{name}-{rng.choice(('prod', 'staging', 'logs'))}/{rng.randrange(2019, 2027)}/{rng.randrange(1, 13):02d}/{path}",
        f"http://localhost:{rng.randrange(1024, 65536)}/api/v{rng.randrange(1, 4)}/{name}?id={rng.randrange(10**6)}",
        f"https://{name}.example.com/search?q={name}%20{_name(rng, names)}&lang=en&utm_source=agent&n={rng.randrange(100)}",
        f"file:///home/user/{name}/{path}",
        f"https://{'.'.join(str(rng.randrange(256)) for _ in range(4))}:{rng.randrange(1024, 65536)}/{name}/{rng.getrandbits(64):016x}",
    )
    return rng.choice(shapes)
