"""The mechanism map's numbers, read from one run of its overlay, never typed by hand.

The overlay ``configs/ablations/mechanism_map.yaml`` (docs/testbed.md) crosses fork rarity with execution fragility in
six policies and compares, per policy, EAD with tau 1.0 (claims ``M-<policy>-a``), EAD with tau 1.2 (``-b``) and the
hotter EAD with EAD (``-c``), each with a pre-registered prediction (TESTBED.md, "the mechanism map
(pre-registration)"). This renders, per policy, premise G4 on its tau 1.0 cells (``results/premises/rl_learns.csv``)
and each comparison's effect in points with its 95% CI, verdict and prediction (``results/claims.csv``), then how many
verdicts met their prediction. The report goes to ``--out`` and, between the markers ``<!-- mechanism-map:begin -->``
/ ``<!-- mechanism-map:end -->``, into ``--doc`` (tools/doc_blocks.py); ``tests/repository/test_docs.py`` checks that
the block is the report.

With ``--exploratory`` it renders instead the exploratory claims added after the map's pre-registration
(``configs/ablations/mechanism_map_tis.yaml``: ``X-<policy>-tis``, the hotter fork with TIS against it without), each
beside the prediction written before its cells ran, and per policy the share of informative rollout groups by quarter
of training under both samplers (``results/rl/signal_by_phase.csv``): TIS reweights the update, so where it helps the
two samplers' groups may still look alike.

With ``--trl`` it renders the pre-registered rerun of the primary through TRL's GRPO code
(``configs/ablations/mechanism_map_trl.yaml``; TESTBED.md, "the map's primary through TRL's GRPO code
(pre-registration)"): its claim (``T-*``) beside its prediction, its seeds and its MDE.

With ``--chain`` it renders the chain behind each cell instead (``results/rl/eval_by_group.csv``, built from the cells'
``eval_failures.csv``): per policy and sampler, the share of the evaluation's samples whose strategy was wrong at the
fork, by key, and whose execution of the key's strategy was wrong, at every evaluated step, beside the informative
rollout groups by quarter of training.

With ``--replication`` it renders the pre-registered replication of the map's primary
(``configs/ablations/mechanism_map_replication.yaml``; TESTBED.md, "the mechanism map: its primary on fresh seeds
(pre-registration)"): each of its claims (``R-*``) beside its prediction, its seeds and its MDE, and whether its cells
of the map's seeds reproduce the map's committed fingerprint (``--map-fingerprint``) file for file.

Run (after a run of the overlay):
    python tools/mechanism_map.py --results runs/mechanism_map/results --commit "$(git rev-parse --short HEAD)" \
        --date 2026-11-28 --out benchmarks/results/mechanism_map.md --doc README.md --block mechanism-map
    python tools/mechanism_map.py --exploratory --results runs/mechanism_map_tis/results --commit <its commit> \
        --date 2026-11-29 --out benchmarks/results/mechanism_map_tis.md --doc docs/rl-learns.md \
        --block mechanism-map-tis
    python tools/mechanism_map.py --replication --results runs/mechanism_map/results --commit <its commit> \
        --date 2026-11-29 --out benchmarks/results/mechanism_map_replication.md --doc docs/rl-learns.md \
        --block mechanism-map-replication
    python tools/mechanism_map.py --trl --results runs/mechanism_map_trl/results --commit <its commit> \
        --date 2026-12-07 --out benchmarks/results/mechanism_map_trl.md --doc docs/rl-learns.md \
        --block mechanism-map-trl
    python tools/mechanism_map.py --chain --results runs/mechanism_map/results --commit <its commit> \
        --date 2026-11-29 --out benchmarks/results/mechanism_map_chain.md --doc docs/rl-learns.md \
        --block mechanism-map-chain
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from ead.rl.breakdown import ALL_GROUPS
from ead.tables import CLAIMS, EVAL_BY_GROUP, FINGERPRINT, RL_LEARNS, SIGNAL_BY_PHASE

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tools/ siblings, also when loaded by file path
from doc_blocks import publish  # noqa: E402
from result_rows import block_parser, fingerprint_sentence, interval, points, run_origin  # noqa: E402

#: The committed fingerprint of the map's run (benchmarks/results), whose cells the replication's seeds 0-7 rerun.
MAP_FINGERPRINT = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "mechanism_map_fingerprint.csv"

#: The map's claims: ``figure`` in the claims table, and the comparison each id suffix names.
FIGURE = "mechanism_map"
COMPARISONS = {"a": "EAD - tau 1.0", "b": "EAD - tau 1.2", "c": "hot EAD - EAD"}
#: The exploratory claims' id suffix (added after the pre-registration, each statement saying so) and what it compares.
EXPLORATORY = {"tis": "hot EAD + TIS - hot EAD"}


def cell(row) -> str:
    """One comparison: effect [CI] in points, the verdict, and the prediction when it differs from the verdict."""
    met = row.verdict == row.predicted_verdict
    prediction = "as predicted" if met else f"predicted {row.predicted_verdict} {points(row.predicted_effect)}"
    return f"{interval(row)} **{row.verdict}** ({prediction})"


def claim_rows(claims: pd.DataFrame, *, exploratory: bool, comparisons: dict[str, str]) -> pd.DataFrame:
    """The map's claim rows of one kind (``exploratory``: ids ``X-*``; else the pre-registered ones), each with its
    ``comparison`` (the id's last part, one of ``comparisons``) and its prediction; a kind without rows, an unknown
    comparison or a missing prediction is an error naming the claims."""
    rows = claims[(claims["figure"] == FIGURE) & (claims["claim"].str.startswith("X-") == exploratory)].copy()
    kind = "exploratory claim (id X-*)" if exploratory else "claim"
    if rows.empty:
        raise ValueError(f"the claims table has no {kind} with figure = {FIGURE!r}")
    rows["comparison"] = rows["claim"].str.rsplit("-", n=1).str[-1]
    unknown = sorted(set(rows["comparison"]) - set(comparisons))
    what = "exploratory mechanism-map" if exploratory else "mechanism-map"
    if unknown:
        raise ValueError(f"{what} claim ids end in one of {sorted(comparisons)}, got {unknown}")
    prediction = ("exploratory claim carries the prediction written before its cells ran" if exploratory
                  else "mechanism-map claim carries its prediction")
    if rows["predicted_verdict"].isna().any():
        raise ValueError(f"every {prediction}; {sorted(rows.loc[rows['predicted_verdict'].isna(), 'claim'])} do not")
    return rows


def predictions_met(rows: pd.DataFrame) -> tuple[int, str]:
    """How many of ``rows``' verdicts equal their prediction, and the verdicts counted (``2 supported, 1 negligible``)
    in the decision rule's order."""
    met = int((rows["verdict"] == rows["predicted_verdict"]).sum())
    verdicts = rows["verdict"].value_counts()
    counts = ", ".join(f"{verdicts[v]} {v}" for v in ("supported", "negligible", "inconclusive", "contradicted")
                       if v in verdicts)
    return met, counts


def render(claims: pd.DataFrame, rl_learns: pd.DataFrame, *, commit: str, date: str, fingerprint: str,
           claims_commit: str | None = None) -> str:
    """The block: per policy (in the claims' order) G4 and the three comparisons, then the count of predictions met
    and the primary claim's row."""
    rows = claim_rows(claims, exploratory=False, comparisons=COMPARISONS)
    learns = {row.policy: row for row in rl_learns.itertuples()}
    lines = [f"Mechanism-map overlay from {run_origin(commit, date, claims_commit)}; from its "
             "`results/premises/rl_learns.csv` (G4: tau 1.0's Pass@1 at the last step minus step 0) and "
             "`results/claims.csv` (curve-mean Pass@1 differences in points, 95% CIs from the two-way bootstrap over "
             "seeds and problems, negligible inside +-2). Policies: `map_p<share>_<execution>`, the teacher's share "
             f"of the key's strategy (%) and an exact or fragile execution. {fingerprint}", "",
             "| policy | G4 [95% CI] | " + " | ".join(COMPARISONS.values()) + " |", "|---|---|---|---|---|"]
    for policy, group in rows.groupby("policy", sort=False):
        by = {row.comparison: row for row in group.itertuples()}
        g4 = learns.get(policy)
        g4_text = "untested" if g4 is None else f"{interval(g4)} **{g4.verdict}**"
        lines.append(f"| {policy} | {g4_text} | "
                     + " | ".join(cell(by[key]) if key in by else "" for key in COMPARISONS) + " |")
    met, counts = predictions_met(rows)
    primary = rows[rows["statement"].str.contains("primary", case=False)]
    lines += ["", f"{met} of {len(rows)} verdicts as pre-registered ({counts})."]
    for row in primary.itertuples():
        lines.append(f"Primary, {row.claim} ({COMPARISONS[row.comparison]} on {row.policy}): {interval(row)}, "
                     f"MDE {100 * row.mde:.1f} points, {row.num_seeds} seeds: **{row.verdict}** (predicted "
                     f"{row.predicted_verdict} {points(row.predicted_effect)}).")
    return "\n".join(lines) + "\n"


def informative_by_phase(signal: pd.DataFrame, policy: str, sampler: str) -> str:
    """The share of informative rollout groups (%) per phase of training, ``a / b / c / d``, of one policy's cells
    under one sampler (mean of the seeds); empty where the breakdown has no such rows."""
    rows = signal[(signal["policy"] == policy) & (signal["sampler"] == sampler)
                  & (signal["metric"] == "informative_group_fraction")].sort_values("phase")
    return " / ".join(f"{100 * value:.0f}" for value in rows["value"])


def render_exploratory(claims: pd.DataFrame, signal: pd.DataFrame, *, commit: str, date: str,
                       fingerprint: str) -> str:
    """The exploratory block: per policy the exploratory comparison beside its prediction and the informative groups
    by phase under its sampler and its baseline, then how many verdicts met their predictions."""
    rows = claim_rows(claims, exploratory=True, comparisons=EXPLORATORY)
    unlabelled = sorted(rows.loc[~rows["statement"].str.startswith("Exploratory"), "claim"])
    if unlabelled:
        raise ValueError(f"every exploratory claim's statement begins 'Exploratory'; {unlabelled} do not")
    lines = [f"Exploratory cells, added after the map's pre-registration, from {run_origin(commit, date)}; from its "
             "`results/claims.csv` (curve-mean Pass@1 differences in points, 95% CIs from the two-way bootstrap over "
             "seeds and problems, negligible inside +-2; each prediction written before the cells ran) and "
             "`results/rl/signal_by_phase.csv` (informative rollout groups, %, by quarter of training, mean of the "
             f"seeds). {fingerprint}", "",
             "| policy | comparison | effect, verdict (prediction) | MDE | informative groups: sampler | "
             "informative groups: baseline |", "|---|---|---|---:|---|---|"]
    for row in rows.itertuples():
        lines.append(f"| {row.policy} | {EXPLORATORY[row.comparison]} | {cell(row)} | {100 * row.mde:.1f} | "
                     f"{informative_by_phase(signal, row.policy, row.sampler)} | "
                     f"{informative_by_phase(signal, row.policy, row.baseline)} |")
    met, counts = predictions_met(rows)
    fewest, most = rows["num_seeds"].min(), rows["num_seeds"].max()
    seeds = f"{fewest}" if fewest == most else f"{fewest}-{most}"
    lines += ["", f"{met} of {len(rows)} exploratory verdicts as predicted ({counts}); {seeds} seeds per claim."]
    return "\n".join(lines) + "\n"


#: The replication's claims: ``figure`` in the claims table (mechanism_map_replication.yaml).
REPLICATION_FIGURE = "mechanism_map_replication"


def render_replication(claims: pd.DataFrame, *, commit: str, date: str, fingerprint: str, shared: str) -> str:
    """The replication block: each ``R-*`` claim's seeds, effect [CI], verdict beside its prediction, and MDE, then
    how many verdicts met their predictions; a claim without its prediction is an error naming it. ``shared`` is
    :func:`shared_files_sentence`: whether the run's cells of the map's seeds are the map's own."""
    intro = (f"The mechanism map's primary on fresh seeds, from a run of its overlay in {run_origin(commit, date)}; "
             "from its `results/claims.csv` (EAD - tau 1.2 on map_p05_fragile, curve-mean Pass@1 differences in "
             "points, 95% CIs from the two-way bootstrap over seeds and problems, negligible inside +-2; each "
             f"prediction written before the new cells ran). {fingerprint} {shared}")
    return render_preregistered(claims, REPLICATION_FIGURE, "R-", intro)


#: The rerun of the primary through TRL's GRPO code (mechanism_map_trl.yaml): ``figure`` in the claims table.
TRL_FIGURE = "mechanism_map_trl"


def render_trl(claims: pd.DataFrame, *, commit: str, date: str, fingerprint: str) -> str:
    """The TRL rerun's block: each ``T-*`` claim beside its prediction, as :func:`render_replication`."""
    intro = (f"The mechanism map's primary through TRL's GRPO code (`rl.trainer: trl`), from a run of its overlay in "
             f"{run_origin(commit, date)}; from its `results/claims.csv` (EAD - tau 1.2 on map_p05_fragile, every "
             "cell trained with TRL 1.16.0's advantages and loss, 192 evaluation problems, curve-mean Pass@1 "
             "differences in points, 95% CIs from the two-way bootstrap over seeds and problems, negligible inside "
             f"+-2; the prediction written before any of its cells ran). {fingerprint}")
    return render_preregistered(claims, TRL_FIGURE, "T-", intro)


def render_preregistered(claims: pd.DataFrame, figure: str, prefix: str, intro: str) -> str:
    """``intro``, then each claim of ``figure`` whose id starts with ``prefix``: its seeds, effect [CI], verdict beside
    its prediction, and MDE; then how many verdicts met their predictions. No such claim, or one without its
    prediction, is an error naming it."""
    rows = claims[(claims["figure"] == figure) & claims["claim"].str.startswith(prefix)]
    if rows.empty:
        raise ValueError(f"the claims table has no claim {prefix}* with figure = {figure!r}")
    if rows["predicted_verdict"].isna().any():
        raise ValueError("every pre-registered claim carries the prediction written before its cells ran; "
                         f"{sorted(rows.loc[rows['predicted_verdict'].isna(), 'claim'])} do not")
    lines = [intro, "", "| claim | seeds | effect, verdict (prediction) | MDE |", "|---|---:|---|---:|"]
    for row in rows.itertuples():
        lines.append(f"| {row.claim} | {row.num_seeds} | {cell(row)} | {100 * row.mde:.1f} |")
    met, counts = predictions_met(rows)
    lines += ["", f"{met} of {len(rows)} verdicts as pre-registered ({counts})."]
    return "\n".join(lines) + "\n"


def shared_files_sentence(run: pd.DataFrame, reference: pd.DataFrame, reference_name: str) -> str:
    """Whether the files two fingerprints (``ead.tables.FINGERPRINT``) both cover have the same digests: a run that
    contains another run's cells (the replication's seeds 0-7 are the map's) says whether it reproduced them bit for
    bit, and names the first file that differs. The claims table is left out: each overlay declares its own claims.
    No shared file is an error (the wrong reference)."""
    merged = run[run["stage"] != "claims"].merge(reference, on="path", suffixes=("", "_reference"))
    if merged.empty:
        raise ValueError(f"the run's fingerprint shares no file with {reference_name}: not a run of its cells")
    cells = merged["stage"].eq("rl_cells").sum()
    differ = merged[merged["digest"] != merged["digest_reference"]].sort_values("path")
    if differ.empty:
        return (f"The {len(merged)} files it shares with {reference_name} ({cells} of them the map's cells' tables) "
                "have the map's digests: its cells of the map's seeds are the map's, bit for bit.")
    return (f"{len(differ)} of the {len(merged)} files it shares with {reference_name} differ from the map's "
            f"(first `{differ['path'].iloc[0]}`): its cells of the map's seeds are not the map's.")


#: The evaluation-by-group metrics of the chain (ead.rl.breakdown): a wrong strategy at the fork, a wrong execution,
#: no strategy named at all (a response that lost the format).
WRONG_STRATEGY, WRONG_EXECUTION, NO_STRATEGY = "failure:strategy", "failure:execution", "failure:format"


def over_steps(values: pd.Series) -> str:
    """Percentages at the evaluated steps, in step order: ``95 / 80 / 61``."""
    return " / ".join(f"{100 * value:.0f}" for value in values.sort_index())


def render_chain(groups: pd.DataFrame, signal: pd.DataFrame, *, commit: str, date: str, fingerprint: str) -> str:
    """The chain block: per policy and sampler the wrong-strategy share by key, and the wrong-execution and
    no-strategy shares over all keys (the breakdown's group ``(all)``), at every evaluated step, and the informative
    groups by phase. A breakdown without failure shares (cells run before eval_failures.csv existed, or the verl
    backend) is an error."""
    groups = groups[groups["group_by"] == "key"]
    if not {WRONG_STRATEGY, WRONG_EXECUTION} <= set(groups["metric"]):
        raise ValueError(f"the evaluation-by-group table has no {WRONG_STRATEGY} / {WRONG_EXECUTION} rows by key: "
                         "rerun the overlay's cells (their eval_failures.csv) and its breakdown")
    keys = sorted(set(groups["group"]) - {ALL_GROUPS})
    steps = sorted(groups["step"].unique())
    lines = [f"The chain behind each cell of the mechanism map, from {run_origin(commit, date)}; from its "
             "`results/rl/eval_by_group.csv` (the evaluation's samples at the declared temperature by first mistake, "
             "% of samples, mean of seeds and problems: a wrong strategy at the fork, by the prompt's key; the "
             "key's strategy carried out wrong, and no strategy named (the format lost), all keys; at steps "
             f"{' / '.join(map(str, steps))}) and "
             "`results/rl/signal_by_phase.csv` (informative rollout groups, %, by quarter of training, mean of the "
             f"seeds). {fingerprint}", "",
             "| policy | sampler | seeds | " + " | ".join(f"wrong strategy, key `{key}`" for key in keys)
             + " | wrong execution | no strategy | informative groups |", "|---|---|---:|" + "---|" * (len(keys) + 3)]
    for (policy, sampler), rows in groups.groupby(["policy", "sampler"], sort=True):
        strategy = rows[rows["metric"] == WRONG_STRATEGY]
        by_key = [over_steps(strategy[strategy["group"] == key].set_index("step")["value"]) for key in keys]
        everything = rows[rows["group"] == ALL_GROUPS]
        pooled = [over_steps(everything[everything["metric"] == metric].set_index("step")["value"])
                  for metric in (WRONG_EXECUTION, NO_STRATEGY)]
        lines.append(f"| {policy} | {sampler} | {int(rows['num_seeds'].max())} | " + " | ".join(by_key + pooled)
                     + f" | {informative_by_phase(signal, policy, sampler)} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = block_parser(__doc__.splitlines()[0],
                          results="the overlay run's", report="mechanism_map.md", block="mechanism-map")
    parser.add_argument("--exploratory", action="store_true",
                        help="render the exploratory claims (X-*, mechanism_map_tis.yaml) instead of the map's")
    parser.add_argument("--chain", action="store_true",
                        help="render the chain behind each cell (eval_by_group.csv's failure shares) instead")
    parser.add_argument("--replication", action="store_true",
                        help="render the replication of the primary (R-*, mechanism_map_replication.yaml) instead")
    parser.add_argument("--trl", action="store_true",
                        help="render the primary through TRL's GRPO code (T-*, mechanism_map_trl.yaml) instead")
    parser.add_argument("--map-fingerprint", type=Path, default=MAP_FINGERPRINT,
                        help="with --replication: the map run's fingerprint, whose cells the replication's seeds 0-7 "
                             "must reproduce")
    args = parser.parse_args(argv)
    if args.replication:
        shared = shared_files_sentence(FINGERPRINT.read(args.results / "fingerprint.csv"),
                                       FINGERPRINT.read(args.map_fingerprint), f"`{args.map_fingerprint.name}`")
        block = render_replication(CLAIMS.read(args.results / "claims.csv"), commit=args.commit, date=args.date,
                                   fingerprint=fingerprint_sentence(args.results), shared=shared)
        publish(block, args.out, args.doc, args.block)
        return
    if args.trl:
        block = render_trl(CLAIMS.read(args.results / "claims.csv"), commit=args.commit, date=args.date,
                           fingerprint=fingerprint_sentence(args.results))
        publish(block, args.out, args.doc, args.block)
        return
    if args.chain:
        block = render_chain(EVAL_BY_GROUP.read(args.results / "rl" / "eval_by_group.csv"),
                             SIGNAL_BY_PHASE.read(args.results / "rl" / "signal_by_phase.csv"),
                             commit=args.commit, date=args.date, fingerprint=fingerprint_sentence(args.results))
        publish(block, args.out, args.doc, args.block)
        return
    if args.exploratory:
        block = render_exploratory(CLAIMS.read(args.results / "claims.csv"),
                                   SIGNAL_BY_PHASE.read(args.results / "rl" / "signal_by_phase.csv"),
                                   commit=args.commit, date=args.date, fingerprint=fingerprint_sentence(args.results))
        publish(block, args.out, args.doc, args.block)
        return
    block = render(CLAIMS.read(args.results / "claims.csv"), RL_LEARNS.read(args.results / "premises" /
                                                                            "rl_learns.csv"),
                   commit=args.commit, date=args.date, claims_commit=args.claims_commit,
                   fingerprint=fingerprint_sentence(args.results))
    publish(block, args.out, args.doc, args.block)


if __name__ == "__main__":
    main()
