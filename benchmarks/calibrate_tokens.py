"""Calibrate the ``medium`` token estimator against a real tokenizer and write its constants.

    python benchmarks/calibrate_tokens.py                 # fit on seed 0, check on seed 1, write the package file
    python benchmarks/calibrate_tokens.py --dry-run       # print the fit, write nothing
    python benchmarks/calibrate_tokens.py --reference tekken --out /tmp/tekken_medium.json

The corpus is generated (experiments/measurements/tokens/corpus.py: English and Chinese prose, code, JSON,
logs, mixed), ``--per-kind`` texts of each kind from ``--seed``; the fit is scored on the same
number of texts from ``--check-seed``, which it never saw. The output is deterministic (no
timestamps, weights rounded), so rerunning it on the same code gives the same file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

# Run as a script from a clone: make the repo's packages importable without installing them.
_ROOT = Path(__file__).resolve().parent.parent
if str(_ROOT) not in sys.path:
    sys.path.insert(0, str(_ROOT))

PACKAGE_FILE = _ROOT / "aptmem" / "tokens" / "medium_constants.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=0, help="corpus seed to fit on (default 0)")
    p.add_argument("--check-seed", type=int, default=1, help="corpus seed to score the fit on (default 1)")
    p.add_argument("--per-kind", type=int, default=300, help="texts per content kind (default 300)")
    p.add_argument("--reference", default="cl100k_base", help="precise tokenizer to fit to (default cl100k_base)")
    p.add_argument("--out", type=Path, default=None,
                   help="where to write the constants (default: the package file, for cl100k_base only)")
    p.add_argument("--dry-run", action="store_true", help="print the fit, write nothing")
    args = p.parse_args(argv)
    if args.seed == args.check_seed:
        p.error("--check-seed must differ from --seed: the check is on texts the fit never saw")
    if args.per_kind < 10:
        p.error("--per-kind must be at least 10")
    return args


def main(argv: list[str] | None = None) -> int:
    """Fit, print the per-kind error on both seeds, write the constants; return the exit code."""
    args = parse_args(argv)

    import numpy as np
    import polars as pl

    from aptmem.errors import TokenizerUnavailable
    from aptmem.tokens import MediumEstimator, canonical_tokenizer, get_estimator
    from aptmem.tokens.medium_constants import FEATURES, encode_constants
    from experiments.core.markdown import markdown_table
    from experiments.measurements.tokens.calibration import constants_from_fit, feature_matrix, fit_weights, per_kind_error
    from experiments.measurements.tokens.corpus import TOKEN_KINDS, token_corpus

    reference = canonical_tokenizer(args.reference)
    out = args.out or (PACKAGE_FILE if reference == "cl100k_base" else None)
    if out is None and not args.dry_run:
        print("--out is required for a reference other than cl100k_base (the package file is for cl100k_base)",
              file=sys.stderr)
        return 2
    try:
        precise = get_estimator("precise", reference)
    except TokenizerUnavailable as exc:
        print(f"calibrate_tokens: {exc}", file=sys.stderr)
        return 2

    train = token_corpus(args.seed, args.per_kind)
    check = token_corpus(args.check_seed, args.per_kind)
    y_train = np.array([precise.count(s.text) for s in train], dtype=np.float64)
    weights = fit_weights(feature_matrix(train), y_train)

    tables = {}
    draft = constants_from_fit(weights, reference, {})
    medium = MediumEstimator(draft)
    for label, samples, exact in (("fit", train, y_train.astype(int).tolist()),
                                  ("check", check, [precise.count(s.text) for s in check])):
        tables[label] = per_kind_error(samples, [medium.count(s.text) for s in samples], exact)

    def errors(df: pl.DataFrame) -> dict[str, dict[str, float]]:
        return {r["kind"]: {"mape_pct": round(r["mape_pct"], 2), "mean_signed_pct": round(r["mean_signed_pct"], 2)}
                for r in df.iter_rows(named=True)}

    calibration = {
        "script": "benchmarks/calibrate_tokens.py",
        "corpus": "experiments/measurements/tokens/corpus.py token_corpus(seed, per_kind)",
        "seed": args.seed, "check_seed": args.check_seed, "per_kind": args.per_kind, "kinds": list(TOKEN_KINDS),
        "fit": "least squares on relative error, weights >= 0",
        "error_on_fit_seed": errors(tables["fit"]), "error_on_check_seed": errors(tables["check"]),
    }
    constants = constants_from_fit(weights, reference, calibration)

    print(f"# medium tier calibrated against {reference}\n")
    print(markdown_table(pl.DataFrame({"feature": list(FEATURES), "tokens per unit": [constants.weights[f] for f in FEATURES]}),
                         formats={"tokens per unit": lambda v: f"{v:.4f}"}))
    for label, seed in (("fit", args.seed), ("check", args.check_seed)):
        print(f"\n## error on the {label} corpus (seed {seed}, {args.per_kind} texts per kind)\n")
        print(markdown_table(tables[label], formats={"mape_pct": lambda v: f"{v:.2f}", "mean_signed_pct": lambda v: f"{v:+.2f}"},
                             headers={"mape_pct": "MAPE %", "mean_signed_pct": "mean signed %"}))
    if args.dry_run:
        return 0
    assert out is not None
    out.write_bytes(encode_constants(constants))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
