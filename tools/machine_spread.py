"""The docs' machine-spread numbers, read from one spread table (``ead.claims.machine_spread``), never typed by hand.

Two runs of one overlay that differ only in ``numerics.cpu_level`` give the claims tables ``ead.claims.machine_spread``
compares; its table (``ead.tables.MACHINE_SPREAD``) is committed beside the runs' fingerprints. This renders, per claim
row, each run's effect in points, the spread, the first run's 95% CI half-width, the spread as a share of it, each
run's verdict and whether the verdict held in both, under a sentence naming the runs and their fingerprints. The
report goes to ``--out`` and, between the markers ``<!-- machine-spread:begin -->`` / ``<!-- machine-spread:end -->``,
into ``--doc`` (tools/doc_blocks.py); ``tests/repository/test_docs.py`` checks that the block is the report.

Run (after the two runs, e.g. the positive control from fresh clones at levels avx2 and default):
    python -m ead.claims.machine_spread --run avx2 /tmp/pc-avx2/runs/positive_control/results/claims.csv \
        --run default /tmp/pc-default/runs/positive_control/results/claims.csv \
        --out benchmarks/results/positive_control_machine_spread.csv
    python tools/machine_spread.py --spread benchmarks/results/positive_control_machine_spread.csv \
        --results /tmp/pc-avx2/runs/positive_control/results /tmp/pc-default/runs/positive_control/results \
        --commit "$(git -C /tmp/pc-avx2 rev-parse --short HEAD)" --date 2026-11-28 \
        --out benchmarks/results/machine_spread.md --doc docs/operations.md --block machine-spread
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from ead.fingerprint import run_digest
from ead.tables import FINGERPRINT, MACHINE_SPREAD

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/ siblings, also when loaded by file path
from doc_blocks import publish  # noqa: E402
from result_rows import points, size  # noqa: E402


def share(value: float) -> str:
    """A spread as a share of a CI half-width, two decimals; empty where the half-width is zero (no share)."""
    return "" if pd.isna(value) else f"{value:.2f}"


def render(spread: pd.DataFrame, *, digests: list[str], commit: str, date: str, what: str) -> str:
    """The block: a sentence naming the runs (``spread``'s ``runs``, each with its fingerprint digest in ``digests``,
    same order), the table of claim rows, and a closing sentence on the largest spread and the verdicts that flip."""
    if spread.empty:
        raise ValueError("the spread table has no claim rows: the runs shared no claim with an effect")
    names = spread["runs"].iloc[0].split(",")
    if len(digests) != len(names):
        raise ValueError(f"the spread table compares {len(names)} runs {names}, but {len(digests)} fingerprints "
                         "were given")
    runs = ", ".join(f"`{name}` (fingerprint `{digest}`)" for name, digest in zip(names, digests))
    lines = [f"{what} run from fresh clones at commit `{commit}` on one machine, {date}, at CPU levels {runs}, "
             "everything else equal; from `ead.claims.machine_spread` (points; the CI is the first run's 95% CI over "
             "seeds and problems, its half-width what the seeds leave uncertain).",
             "",
             "| claim | " + " | ".join(f"effect at {name}" for name in names)
             + " | spread | CI half-width | spread / half-width | verdicts | robust |",
             "|---|" + "---:|" * len(names) + "---:|---:|---:|---|---|"]
    for row in spread.itertuples():
        effects = " | ".join(points(float(effect)) for effect in row.effects.split(","))
        lines.append(f"| {row.claim} | {effects} | {size(row.effect_spread)} | {size(row.ci_half_width)} | "
                     f"{share(row.spread_share)} | "
                     f"{row.verdicts.replace(',', ' / ')} | {row.robust} |")
    largest = spread.loc[spread["effect_spread"].idxmax()]
    flipped = spread.loc[spread["robust"] == "no", "claim"].tolist()
    against = (f"{share(largest.spread_share)} of its CI half-width" if share(largest.spread_share)
               else "its CI has zero width")
    lines += ["", f"Largest spread: {size(largest.effect_spread)} points ({largest.claim}), {against}; verdicts that "
              f"differ between the levels: {', '.join(flipped) if flipped else 'none'} (of {len(spread)})."]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spread", type=Path, required=True, help="the spread table (ead.claims.machine_spread)")
    parser.add_argument("--results", type=Path, nargs="+", required=True,
                        help="each run's results/ directory, in the spread table's order (their fingerprint.csv)")
    parser.add_argument("--commit", required=True, help="the commit both runs were made at")
    parser.add_argument("--date", required=True, help="the runs' date (YYYY-MM-DD)")
    parser.add_argument("--what", default="The positive-control overlay", help="what was run, as the block names it")
    parser.add_argument("--out", type=Path, required=True, help="the report (benchmarks/results/machine_spread.md)")
    parser.add_argument("--doc", type=Path, help="Markdown file holding the block")
    parser.add_argument("--block", default="machine-spread", help="the block's name in --doc")
    args = parser.parse_args(argv)
    digests = [run_digest(FINGERPRINT.read(results / "fingerprint.csv")) for results in args.results]
    spread = MACHINE_SPREAD.read(args.spread)  # a damaged table is refused naming its file
    try:
        block = render(spread, digests=digests, commit=args.commit, date=args.date, what=args.what)
    except ValueError as error:
        raise SystemExit(f"{args.spread}: {error}") from error
    publish(block, args.out, args.doc, args.block)


if __name__ == "__main__":
    main()
