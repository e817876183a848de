"""The ``aptmem`` command line: ``python -m aptmem <command> ...``.

Each command is a small module with ``register(subparsers)``; this module builds the parser,
dispatches, and is the one place where library errors become messages and exit codes:

* 0: success (for ``fsck``: the file is clean);
* 1: damage found (``fsck``), or a log the recovery mode refuses;
* 2: bad usage or input that is not a session (missing file, folder, symlink, bad id, an agent's
  transcript, a sidecar, pretty-printed JSON).

Every single-session command names its session the same way: a PATH, or ``--root DIR
SESSION_ID`` (:mod:`aptmem.cli.target`).

Errors are one line on stderr naming the file and the reason; no traceback for user errors.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from aptmem.errors import AptmemError, CorruptLogError

__all__ = ["main", "build_parser", "one_line", "as_flags", "EXIT_OK", "EXIT_DAMAGE", "EXIT_USAGE"]

EXIT_OK = 0
EXIT_DAMAGE = 1
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every command registered."""
    from aptmem.cli import append, compaction, context, fsck, imports, listing, recall, sessions, tokens, usage_check

    parser = argparse.ArgumentParser(prog="aptmem", description="Agent memory sessions: check, read, create, continue.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (append, fsck, sessions, listing, context, tokens, compaction, imports, usage_check, recall):
        module.register(commands)
    return parser


def as_flags(message: str, names: Sequence[str]) -> str:
    """A library message about parameters ``names`` (``keep_turns``) as one about flags (``--keep-turns``)."""
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    return pattern.sub(lambda m: "--" + m.group(1).replace("_", "-"), message)


def one_line(text: str) -> str:
    """``text`` with control characters escaped, so an error naming a hostile path stays one line."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except CorruptLogError as exc:
        print(f"aptmem: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_DAMAGE
    except AptmemError as exc:
        print(f"aptmem: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as exc:  # bad option values the library rejects (e.g. an unknown mode)
        print(f"aptmem: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away (``aptmem cat ... | head``): not an error. Point stdout at
        # /dev/null so the interpreter's final flush does not complain.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"aptmem: {one_line(f'{where}{exc.strerror or exc}')}", file=sys.stderr)
        return EXIT_USAGE
