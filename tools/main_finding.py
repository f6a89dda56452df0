"""The default profile's main-finding numbers (docs/findings.md), read from its tables, never typed by hand.

Premise G4 (``results/premises/rl_learns.csv``: does tau 1.0 learn on the claims' policy?) and the main comparison's
rows of ``results/claims.csv`` (EAD + TIS and EAD against the fixed temperatures, at the last step and over the
learning curve), rendered in points with their CIs, MDEs and verdicts. The report goes to ``--out`` and, between the
markers ``<!-- main-finding:begin -->`` / ``<!-- main-finding:end -->``, into ``--doc`` (tools/doc_blocks.py);
``tests/repository/test_docs.py`` checks that the block is the report. No other doc types these numbers.

Run (after a default run, e.g. the fresh clone timed by benchmarks/dag_runtime.py):
    python tools/main_finding.py --results /tmp/fresh/results \
        --commit "$(git -C /tmp/fresh rev-parse --short HEAD)" --date 2026-11-26 \
        --out benchmarks/results/main_finding.md --doc docs/findings.md --block main-finding
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from ead.tables import CLAIMS, RL_LEARNS

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/ siblings, also when loaded by file path
from doc_blocks import publish  # noqa: E402
from result_rows import block_parser, claims_in_order, fingerprint_sentence, interval, run_origin, size  # noqa: E402

# The main comparison (config `claims`; docs/rl-learns.md, "Curve-mean claims"), primary metric first.
MAIN_COMPARISON = ("C15-curve", "C15", "C2-curve", "C2", "C1-pass1-curve", "C1-curve", "C4-pass1-curve", "C4-curve",
                   "C5-pass1-curve", "C5-curve")


def render(rl_learns: pd.DataFrame, claims: pd.DataFrame, *, commit: str, date: str, fingerprint: str,
           claims_commit: str | None = None) -> str:
    """The block: the G4 rows (one per setting), then the main comparison's rows in MAIN_COMPARISON's order, under the
    run's ``fingerprint`` sentence (result_rows.fingerprint_sentence)."""
    lines = [f"Default profile from {run_origin(commit, date, claims_commit)}; from its "
             "`results/premises/rl_learns.csv` and `results/claims.csv` (points; 95% CIs from the two-way bootstrap "
             f"over seeds and problems; MDE at 80% power). {fingerprint}", ""]
    first = rl_learns.iloc[0]
    lines += [f"Premise G4, {first.sampler}'s {first.metric} at the last step minus step 0 (supported where the gain "
              f"is at least {100 * first.min_effect:g} points with its CI's lower end above "
              f"{100 * first.min_ci_low:g}; contradicted where the CI's upper end is below {100 * first.min_effect:g}, "
              "which rules out a gain of that size, not all movement; a single seed is inconclusive by rule):", "",
              "| setting | seeds x problems | gain [95% CI] | verdict |", "|---|---|---|---|"]
    for row in rl_learns.sort_values("num_seeds", ascending=False, kind="stable").itertuples():
        lines.append(f"| {row.policy} / {row.algorithm} / n {row.n}, step {row.step} | {row.num_seeds} x "
                     f"{row.num_problems} | {interval(row)} | **{row.verdict}** |")
    rows = claims_in_order(claims, MAIN_COMPARISON, "the main comparison's")
    lines += ["", "Each claim declared the smallest effect it cares about (+/- column, points): a CI inside +/- it "
              "reads **negligible**, an effect of a size that matters ruled out.", "",
              "| claim | comparison | metric | over | effect [95% CI] | MDE | +/- | seeds | verdict | "
              "G4 in its setting |", "|---|---|---|---|---|---|---|---:|---|---|"]
    for row in rows.itertuples():
        over = "curve mean" if row.over == "curve" else f"step {row.step}"
        lines.append(f"| {row.claim} | {row.sampler} - {row.baseline} ({row.policy}) | {row.metric} | {over} | "
                     f"{interval(row)} | {100 * row.mde:.1f} | {size(row.smallest_effect)} | "
                     f"{row.num_seeds} | **{row.verdict}** | {row.rl_learns} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = block_parser(__doc__.splitlines()[0],
                          results="a default run's", report="main_finding.md", block="main-finding")
    args = parser.parse_args(argv)
    block = render(RL_LEARNS.read(args.results / "premises" / "rl_learns.csv"),
                   CLAIMS.read(args.results / "claims.csv"), commit=args.commit, date=args.date,
                   claims_commit=args.claims_commit,
                   fingerprint=fingerprint_sentence(args.results))
    publish(block, args.out, args.doc, args.block)


if __name__ == "__main__":
    main()
