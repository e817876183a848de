"""``python -m aptmem``: the command line."""

from aptmem.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
