"""The ``usage-check`` command: each tier's estimate of the context against the provider's usage.

    aptmem usage-check tests/fixtures/real --from auto [--json] [--tiers anchored,model,medium,...]
    aptmem usage-check tests/fixtures/real --from pi --calibrate-profile aptmem/tokens/profiles/pi.json

SRC is a transcript or a folder of them (files of another format are left out, and listed);
``--from auto`` takes every transcript of a format it recognizes, each read as its own format
(and scored with its own format's provider profile).
For every reply whose usage reports input tokens, the context before it is estimated by each
tier and compared with the reported count (see :mod:`aptmem.importers.usage` for what is
compared and why the fixed part of a request is handled apart). ``model`` and ``anchored``
count what the provider counts, with the format's shipped provider profile or ``--profile``.
With ``--json`` the last line is one object: ``requests``, per tier ``mape``, ``p95_abs_error``,
``median_ratio`` (and the fixed-part and calibrated figures), per source its counts and its
per-tier figures. ``--calibrate-profile OUT`` measures a provider profile from SRC, scores it on
sessions it was not fitted on (printed, and kept in the file) and writes it to OUT. Exit codes:
0; 1 a source was damaged (its good part was used); 2 bad usage or no transcript of that format.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    from aptmem.tokens.profile import ProviderProfile

__all__ = ["register"]


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``usage-check`` command."""
    from aptmem.importers.converter import FORMATS
    from aptmem.importers.usage import DEFAULT_TIERS

    p = commands.add_parser("usage-check", help="score token estimates against the usage the provider reported")
    p.add_argument("src", metavar="SRC", help="a transcript (.jsonl) or a folder of them")
    p.add_argument("--from", dest="fmt", choices=[*FORMATS, "auto"], required=True,
                   help="the transcripts' format (auto: each file's own, detected from its first line)")
    p.add_argument("--tiers", default=",".join(DEFAULT_TIERS),
                   help="comma-separated tiers: rough:bytes, rough:chars, medium, precise:<tokenizer> "
                        "(e.g. precise:tekken), model[:<tier>], anchored[:<tier>]; "
                        f"default {','.join(DEFAULT_TIERS)}")
    p.add_argument("--profile", default=None, metavar="NAME|FILE",
                   help="provider profile for model and anchored (default: the one shipped for --from)")
    p.add_argument("--calibrate-profile", default=None, metavar="OUT",
                   help="measure a provider profile from SRC (held-out figures printed) and write it to OUT")
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
    """Score every tier on every request with usage in SRC; print the figures (and calibrate if asked)."""
    from aptmem.importers.scan import iter_entries
    from aptmem.importers.usage import calibrate, counted_requests, counter_spec, session_stats, tier_stats

    from aptmem.tokens.tiers import parse_tier_spec

    tiers = [t.strip() for t in args.tiers.split(",") if t.strip()]
    for spec in tiers:  # a bad spec stops here, before any source is read
        parse_tier_spec(spec, counters=True)
    paths, left_out = _sources(Path(args.src), args.fmt)
    if args.calibrate_profile and args.fmt == "auto":
        raise ValueError("--calibrate-profile fits one provider: give --from claude-code or --from pi, not --from auto")
    formats = dict(paths)  # path -> its format
    fit, fitted = None, None
    scans = {path: iter_entries(fmt, path) for path, fmt in paths}
    sources = dict.fromkeys(formats)  # path -> its entries (streamed, unless a calibration keeps them)
    if args.calibrate_profile:
        sources = {path: list(scan) for path, scan in scans.items()}
        fit, fitted = _calibrate(args, {path.stem: entries for path, entries in sources.items()})
    # The tiers that need a profile use --profile, else the one just measured, else each format's shipped one;
    # an unavailable tokenizer stops here, before anything is read.
    specs = {fmt: {spec: counter_spec(spec, args.profile or fitted or fmt) for spec in tiers}
             for fmt in sorted(set(formats.values()))}
    requests, sessions, damaged = [], [], False
    for path, kept in sources.items():
        scan, fmt = scans[path], formats[path]
        found, without = counted_requests(scan if kept is None else kept, {t: s.make() for t, s in specs[fmt].items()},
                                          session=path.stem, fmt=fmt)
        report = scan.report
        damaged |= report.damaged
        requests += found
        sessions.append({"file": str(path), "session": path.stem, "format": fmt, "requests": len(found),
                         "requests_without_usage": without, "replies": report.replies, "damaged": report.damaged})
    per_session = session_stats(requests, tiers)
    for source in sessions:
        source["tiers"] = msgspec.to_builtins(per_session.get(source["session"], {}))
    stats = {t: msgspec.to_builtins(tier_stats(requests, t)) for t in tiers}
    calibration = {t: msgspec.to_builtins(calibrate(requests, t)) for t in tiers}
    out = {"format": args.fmt, "requests": len(requests), "sessions": sessions, "left_out": left_out,
           "tiers": stats, "calibration": calibration,
           "profile": args.profile or (fit["file"] if fit else args.fmt),
           "estimators": {t: s.name for t, s in next(iter(specs.values())).items()},
           "caveat": "the precise tier counts with an open tokenizer, not the provider's; the reported count "
                     "includes the system prompt and tool definitions, which the transcript does not hold"}
    if fit is not None:
        out["profile_fit"] = fit
    if args.json:
        print(msgspec.json.encode(out).decode())
    else:
        _print_human(out)
    return 1 if damaged else 0


def _calibrate(args: argparse.Namespace, sessions: dict) -> tuple[dict, ProviderProfile]:
    """Fit a profile on ``sessions``, score it held out, write it to ``--calibrate-profile``; return what was done."""
    import shlex
    import sys

    from aptmem.tokens import get_estimator
    from aptmem.tokens.calibration.profile_fit import calibrate_profile
    from aptmem.tokens.profile import encode_profile

    command = "aptmem " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:2] == ["usage-check"] else None
    profile, held = calibrate_profile(args.fmt, sessions, get_estimator("precise"), command=command)
    out = Path(args.calibrate_profile)
    out.write_bytes(encode_profile(profile))
    return {"file": str(out), "ratio": profile.ratio, "framing": profile.framing, "fixed": profile.fixed,
            "reattached": profile.reattached, "held_out": msgspec.to_builtins(held)}, profile


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
    print(f"\nper session: MAPE / p95 |error| in tokens ({', '.join(out['tiers'])})")
    for source in out["sessions"]:
        cells = [f"{_pct(f['mape'])} / {_num(f['p95_abs_error'], '{:,.0f}')}" for f in source["tiers"].values()]
        print(f"  {source['session']:<36} {source['requests']:>5}  " + "   ".join(cells))
    print(f"caveat: {out['caveat']}")
    for item in out["left_out"]:
        print(f"left out: {item}")
    if "profile_fit" in out:
        fit = out["profile_fit"]
        print(f"\nprofile written to {fit['file']}: ratio {fit['ratio']}, framing {fit['framing']} per message, "
              f"fixed {fit['fixed']:,}, reattached {fit['reattached']:,}")
        for h in fit["held_out"]:
            a, m = h["anchored"], h["model"]
            print(f"  held out ({h['split']}) {h['session']:<36} anchored {_pct(a['mape'])} / p95 "
                  f"{_num(a['p95_abs_error'], '{:,.0f}')}; model alone {_pct(m['mape'])}")
