"""The ``usage-check`` command: each tier's estimate of the context against the provider's usage.

    aptmem usage-check tests/fixtures/real --from auto [--json] [--tiers rough:bytes,medium,...]

SRC is a transcript or a folder of them (files of another format are left out, and listed);
``--from auto`` takes every transcript of a format it recognizes, each read as its own format.
For every reply whose usage reports input tokens, the context before it is estimated by each
tier and compared with the reported count (see :mod:`aptmem.importers.usage` for what is
compared and why the fixed part of a request is handled apart). With ``--json`` the last line
is one object: ``requests``, per tier ``mape`` and ``median_ratio`` (and the fixed-part and
calibrated figures), per source its counts. Exit codes: 0; 1 a source was damaged (its good
part was used); 2 bad usage or no transcript of that format in SRC.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``usage-check`` command."""
    from aptmem.importers.scan import FORMATS
    from aptmem.importers.usage import DEFAULT_TIERS

    p = commands.add_parser("usage-check", help="score token estimates against the usage the provider reported")
    p.add_argument("src", metavar="SRC", help="a transcript (.jsonl) or a folder of them")
    p.add_argument("--from", dest="fmt", choices=[*FORMATS, "auto"], required=True,
                   help="the transcripts' format (auto: each file's own, detected from its first line)")
    p.add_argument("--tiers", default=",".join(DEFAULT_TIERS),
                   help="comma-separated tiers: rough:bytes, rough:chars, medium, precise:<tokenizer> "
                        f"(e.g. precise:tekken); default {','.join(DEFAULT_TIERS)}")
    p.add_argument("--json", action="store_true", help="print one JSON object (the last line)")
    p.set_defaults(handler=run_usage_check)


def _sources(src: Path, fmt: str) -> tuple[list[tuple[Path, str]], list[str]]:
    """The transcripts of ``fmt`` (any format for ``auto``) in ``src`` (a file or a folder), each with
    its format, and the files left out with why."""
    from aptmem.errors import NotATranscriptError
    from aptmem.importers.scan import detect_format

    if not src.is_dir():
        return [(src, detect_format(src) if fmt == "auto" else fmt)], []
    found, left = [], []
    for path in sorted(src.glob("*.jsonl")):
        try:
            other = detect_format(path)
        except NotATranscriptError as exc:
            left.append(f"{path.name}: {exc.reason}")
            continue
        if fmt in ("auto", other):
            found.append((path, other))
        else:
            left.append(f"{path.name}: a {other} transcript")
    if not found:
        raise NotATranscriptError(str(src), fmt, "the folder holds no transcript of " +
                                  ("a format aptmem reads" if fmt == "auto" else "this format"))
    return found, left


def run_usage_check(args: argparse.Namespace) -> int:
    """Score every tier on every request with usage in SRC; print the figures."""
    from aptmem.importers.scan import iter_entries
    from aptmem.importers.usage import calibrate, estimator_for, session_requests, tier_stats

    tiers = [t.strip() for t in args.tiers.split(",") if t.strip()]
    estimators = {spec: estimator_for(spec) for spec in tiers}  # an unavailable tokenizer stops here
    paths, left_out = _sources(Path(args.src), args.fmt)
    requests, sessions, damaged = [], [], False
    for path, fmt in paths:
        scan = iter_entries(fmt, path)
        found, without = session_requests(scan, estimators, session=path.stem, fmt=fmt)
        report = scan.report
        damaged |= report.damaged
        requests += found
        sessions.append({"file": str(path), "session": path.stem, "format": fmt, "requests": len(found),
                         "requests_without_usage": without, "replies": report.replies, "damaged": report.damaged})
    stats = {t: msgspec.to_builtins(tier_stats(requests, t)) for t in tiers}
    calibration = {t: msgspec.to_builtins(calibrate(requests, t)) for t in tiers}
    out = {"format": args.fmt, "requests": len(requests), "sessions": sessions, "left_out": left_out,
           "tiers": stats, "calibration": calibration,
           "estimators": {t: e.name for t, e in estimators.items()},
           "caveat": "the precise tier counts with an open tokenizer, not the provider's; the reported count "
                     "includes the system prompt and tool definitions, which the transcript does not hold"}
    if args.json:
        print(msgspec.json.encode(out).decode())
    else:
        _print_human(out)
    return 1 if damaged else 0


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}%"


def _num(value: float | None, fmt: str = "{:.3f}") -> str:
    return "—" if value is None else fmt.format(value)


def _print_human(out: dict) -> None:
    """A table per tier: raw error, error with the fixed part, calibrated error out of sample."""
    names = ", ".join(f"{s['session']} ({s['requests']})" for s in out["sessions"])
    print(f"{out['format']}: {out['requests']} requests with usage in {len(out['sessions'])} sessions: {names}")
    print(f"{'tier':<22} {'MAPE':>7} {'ratio':>7} {'MAPE+fixed':>11} {'ratio+fixed':>12} {'fixed tok':>10} "
          f"{'slope':>7} {'intercept':>10} {'test MAPE':>10}")
    for tier, s in out["tiers"].items():
        c = out["calibration"][tier]
        print(f"{tier:<22} {_pct(s['mape']):>7} {_num(s['median_ratio']):>7} {_pct(s['mape_overhead']):>11} "
              f"{_num(s['median_ratio_overhead']):>12} {_num(s['median_overhead'], '{:,.0f}'):>10} "
              f"{_num(c['slope']):>7} {_num(c['intercept'], '{:,.0f}'):>10} {_pct(c['test_mape']):>10}")
    split = next(iter(out["calibration"].values()))["split"] if out["calibration"] else ""
    print(f"ratio = estimate / reported (median); +fixed: each session's first-request gap added; calibration: {split}")
    print(f"caveat: {out['caveat']}")
    for item in out["left_out"]:
        print(f"left out: {item}")
