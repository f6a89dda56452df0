"""The positive control's numbers (docs/findings.md), read from one run of its overlay, never typed by hand.

The overlay ``configs/ablations/positive_control.yaml`` (docs/testbed.md) runs the premise probe on its policy
(``results/premises/<policy>_verdicts.csv``: G1-G3), premise G4 on its tau 1.0 cells
(``results/premises/rl_learns.csv``) and its paired claims P1-P5 (``results/claims.csv``). This renders each premise
part and each claim in points with its 95% CI, MDE and verdict, in one table. The report goes to ``--out`` and,
between the markers ``<!-- positive-control:begin -->`` / ``<!-- positive-control:end -->``, into ``--doc``
(tools/doc_blocks.py); ``tests/repository/test_docs.py`` checks that the block is the report. No other doc types these
numbers. With ``--spread`` (the overlay's claims compared across CPU levels, tools/machine_spread.py), a claim whose
verdict differs at another level is marked not robust in the block.

Run (after a run of the overlay, e.g. from a fresh clone):
    python tools/positive_control.py --results /tmp/fresh/runs/positive_control/results \
        --commit "$(git -C /tmp/fresh rev-parse --short HEAD)" --date 2026-11-27 \
        --spread benchmarks/results/positive_control_machine_spread.csv \
        --out benchmarks/results/positive_control.md --doc docs/findings.md --block positive-control
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from ead.claims.machine_spread import row_keys
from ead.tables import CLAIMS, MACHINE_SPREAD, PREMISE_VERDICTS, RL_LEARNS

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/ siblings, also when loaded by file path
from doc_blocks import publish  # noqa: E402
from result_rows import block_parser, claims_in_order, fingerprint_sentence, interval, run_origin, size  # noqa: E402

#: The overlay's claims (config `claims`), the primary first.
CLAIM_IDS = ("P1", "P2", "P3", "P4", "P5")
#: How closely a spread table's effects (written with 6 significant digits) match the claims table's.
SPREAD_EFFECT_TOLERANCE = 1e-6


def render(verdicts: pd.DataFrame, rl_learns: pd.DataFrame, claims: pd.DataFrame, *, commit: str, date: str,
           fingerprint: str, claims_commit: str | None = None, spread: pd.DataFrame | None = None) -> str:
    """The block: the probe's premise parts that have an effect (G1-G3), G4, then the claims in CLAIM_IDS' order,
    under the run's ``fingerprint`` sentence (result_rows.fingerprint_sentence). With ``spread`` (the overlay's
    ``ead.claims.machine_spread`` table, this run first), a claim whose verdict differs at another CPU level is marked
    not robust, naming the other runs' verdicts."""
    robustness = {} if spread is None else dict(zip(row_keys(spread), spread.itertuples()))
    policy = Path(verdicts["model"].iloc[0]).name
    lines = [f"Positive-control overlay from {run_origin(commit, date, claims_commit)}; from its "
             f"`results/premises/{policy}_verdicts.csv` (G1-G3, before RL), `results/premises/rl_learns.csv` (G4) and "
             "`results/claims.csv` (points: differences of rates, G2 a share of failures; 95% CIs: the probe's over "
             "problems, G4's and the claims' two-way bootstrap over seeds and problems; MDE at 80% power). "
             f"{fingerprint}",
             "",
             "| | what | effect, points [95% CI] | MDE | +/- | seeds x problems | verdict |",
             "|---|---|---|---:|---:|---|---|"]
    for row in verdicts[verdicts["effect"].notna()].itertuples():
        lines.append(f"| {row.premise} | {row.part} | {interval(row)} | {size(row.mde)} | | 1 x {row.num_problems} | "
                     f"**{row.verdict}** |")
    for row in rl_learns[rl_learns["policy"] == policy].itertuples():
        lines.append(f"| {row.premise} | {row.sampler}'s {row.metric}, step {row.step} - step 0 | {interval(row)} | "
                     f"{size(row.mde)} | | {row.num_seeds} x {row.num_problems} | **{row.verdict}** |")
    ordered = claims_in_order(claims, CLAIM_IDS, "the positive control's")
    for key, row in zip(row_keys(ordered), ordered.itertuples()):
        verdict = f"**{row.verdict}**"
        across = robustness.get(key)
        if across is not None:  # the spread's first run must be this one, or the marks would name the wrong runs
            first_effect, first_verdict = float(across.effects.split(",")[0]), across.verdicts.split(",")[0]
            if first_verdict != row.verdict or abs(first_effect - row.effect) > SPREAD_EFFECT_TOLERANCE:
                raise ValueError(f"the spread table's first run ({across.runs.split(',')[0]}) is not this run: claim "
                                 f"{row.claim} reads {first_effect:+.4f} {first_verdict} there, {row.effect:+.4f} "
                                 f"{row.verdict} here")
        if across is not None and across.robust == "no":
            # "cpu_level=...": a run's name is its CPU level here, and "default" alone would read as the profile
            others = [f"at cpu_level={name}: {other}" for name, other in zip(across.runs.split(",")[1:],
                                                                across.verdicts.split(",")[1:])]
            verdict += f", not robust ({', '.join(others)})"
        lines.append(f"| {row.claim} | {row.statement} | {interval(row)} | {size(row.mde)} | "
                     f"{size(row.smallest_effect)} | {row.num_seeds} x {row.num_units // row.num_seeds} | "
                     f"{verdict} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = block_parser(__doc__.splitlines()[0],
                          results="the overlay run's", report="positive_control.md", block="positive-control")
    parser.add_argument("--policy", default="tiny_strategy", help="the probed policy (premises.policies)")
    parser.add_argument("--spread", type=Path, help="the overlay's spread table across CPU levels, this run first "
                                                    "(ead.claims.machine_spread): flipped verdicts marked not robust")
    args = parser.parse_args(argv)
    premises = args.results / "premises"
    block = render(PREMISE_VERDICTS.read(premises / f"{args.policy}_verdicts.csv"),
                   RL_LEARNS.read(premises / "rl_learns.csv"), CLAIMS.read(args.results / "claims.csv"),
                   commit=args.commit, date=args.date, claims_commit=args.claims_commit,
                   fingerprint=fingerprint_sentence(args.results),
                   spread=MACHINE_SPREAD.read(args.spread) if args.spread else None)
    publish(block, args.out, args.doc, args.block)


if __name__ == "__main__":
    main()
