"""The claims of Figs. 1, 2 and 9 tested on the sampling analyses' samples: paired effects with CIs, power and verdicts.

Each claim (config ``analyses.claims``) is one row of the claims table (:data:`ead.tables.CLAIMS`), the same table
and the same decision rule (:func:`ead.verdicts.decide`, 95% CI vs 0) as the RL claims; rule ``claims`` appends these
rows to ``results/claims.csv``. A claim names one model of its analysis and is computed from that model's samples
table, never from a figure or a typed number:

* ``entropy_by_position`` (Fig. 1, "entropy is concentrated early"): per response, the mean entropy (tau = 1, nats) at
  positions [0, ``early``) minus the mean at positions [``late``, end of the response). Both parts come from the same
  response, so the difference is paired; a response of at most ``late`` tokens has no late part and is left out
  (counted in ``scope``). Per question the mean over its responses; the effect is the mean over questions, with a 95%
  bootstrap CI over questions.
* ``forking`` (Fig. 2, "later fork points lose Pass@k"): per forked reference, ``metric`` (pass@k, or maj@k where the
  task's answers are unique) of the continuations after the first fork point (p = 0: normal sampling) minus after
  the last one; both continue the same reference, so the difference is paired. The effect is the mean over
  references, with a 95% bootstrap CI over references (one reference per question under ``prefix_selection: random``).
* ``majority_scaling`` (Fig. 9, "EAD scales Maj@N better than fixed temperatures"): per question, exact Maj@N
  (``metric`` ``maj@N``) of the EAD sampler minus that of the best fixed temperature, the one with the highest mean
  Maj@N at this N on these questions. Both sample the same questions, so the difference is paired; the baseline is
  picked on the same data, which favours it (a conservative test of EAD). The effect is the mean over questions, with
  a 95% bootstrap CI over questions.

A claim is about one fixed model (no training), so its CI covers the questions (and responses), not training seeds:
``num_seeds`` is 1 (one sampling seed) and the verdict is the CI's. The minimum detectable effect is the premise
probe's (:func:`ead.metrics.minimum_detectable_effect`: 80% power, two-sided 5%).

Run:
    python -m ead.claims.analyses --claims '<analyses.claims JSON>' \
        --entropy-by-position-samples results/analyses/entropy_by_position/tiny1m_sharp_samples.parquet \
        --forking-samples results/analyses/forking/tiny1m_sharp_samples.parquet \
        --majority-scaling-samples results/analyses/majority_scaling/tiny_arith_samples.parquet --resamples 1000 \
        --seed 1234 --out results/analyses/claims.csv
"""

from __future__ import annotations

import argparse
import json
import math
import re

import numpy as np
import pandas as pd

from ead.analyses.common import maj_curves
from ead.analyses.forking import per_unit_metrics
from ead.claims import decide
from ead.io import setup_logging
from ead.metrics import bootstrap_means, minimum_detectable_effect
from ead.tables import CLAIMS, ENTROPY_SAMPLES, FORKING_SAMPLES, MAJORITY_SAMPLES

#: What the claims table's RL columns hold for a claim on a fixed model: it trains nothing (and has no RL evaluation).
NO_TRAINING = {"algorithm": "none (no RL)", "step": 0, "num_seeds": 1, "evaluated_with": None}


def early_minus_late(samples: pd.DataFrame, early: int, late: int) -> tuple[np.ndarray, int]:
    """Per question, the mean over its responses of (mean entropy at positions < ``early``) - (mean entropy at
    positions >= ``late``); and how many responses had no late part (at most ``late`` tokens) and were left out.

    ``samples`` has prompt_id and entropies (:data:`ead.tables.ENTROPY_SAMPLES`). Questions keep the table's order.
    """
    if not 0 < early <= late:
        raise ValueError(f"need 0 < early <= late, got early = {early}, late = {late}")
    rows, dropped = [], 0
    for prompt_id, entropies in zip(samples["prompt_id"], samples["entropies"]):
        entropies = np.asarray(entropies, dtype=np.float64)
        if entropies.size <= late:
            dropped += 1
            continue
        rows.append((prompt_id, entropies[:early].mean() - entropies[late:].mean()))
    if not rows:
        raise ValueError(f"no response is longer than late = {late} tokens: no late positions to compare")
    differences = pd.DataFrame(rows, columns=["prompt_id", "difference"])
    per_question = differences.groupby("prompt_id", sort=False)["difference"].mean()
    return per_question.to_numpy(), dropped


def first_minus_last_fork(samples: pd.DataFrame, metric: str) -> tuple[np.ndarray, int, int]:
    """Per reference, ``metric`` (``pass@k`` / ``maj@k``, :func:`ead.analyses.forking.per_unit_metrics`) after the
    first fork point minus after the last; and those two fork points. References keep their sorted order."""
    match = re.fullmatch(r"(pass|maj)@(\d+)", metric)
    if not match:
        raise ValueError(f"forking claims compare pass@k or maj@k, got {metric!r}")
    points = sorted(samples["fork_point"].unique())
    if len(points) < 2:
        raise ValueError(f"the samples have one fork point ({points}); the claim compares the first and the last")
    per_unit = per_unit_metrics(samples, [int(match[2])])
    per_unit = per_unit[per_unit["metric"] == f"{match[1]}@k"]
    if per_unit.empty:
        raise ValueError(f"{metric} is not measured on task {samples['task'].iloc[0]!r} (answers not unique)")
    values = per_unit.pivot(index="unit", columns="fork_point", values="value")
    return (values[points[0]] - values[points[-1]]).to_numpy(), int(points[0]), int(points[-1])


def ead_minus_best_fixed(samples: pd.DataFrame, metric: str) -> tuple[np.ndarray, str, str]:
    """Per question, exact Maj@N (``metric`` = ``maj@N``) of the EAD sampler minus that of the fixed temperature with
    the highest mean Maj@N at N; and those two samplers' labels. ``samples`` is a majority samples table
    (:data:`ead.tables.MAJORITY_SAMPLES`) with one EAD sampler and at least one fixed one."""
    match = re.fullmatch(r"maj@(\d+)", metric)
    if not match:
        raise ValueError(f"majority claims compare maj@N, got {metric!r}")
    n = int(match[1])
    kinds = {sampler: json.loads(params)["name"]
             for sampler, params in samples[["sampler", "schedule_params"]].drop_duplicates().itertuples(index=False)}
    ead = [sampler for sampler, kind in kinds.items() if kind == "ead"]
    fixed = [sampler for sampler, kind in kinds.items() if kind == "fixed"]
    if len(ead) != 1 or not fixed:
        raise ValueError(f"a majority claim needs one EAD sampler and a fixed one; the samples have {kinds}")
    per_question = samples.groupby(["sampler", "prompt_id"]).size()
    if n > per_question.min():
        raise ValueError(f"{metric}: N exceeds the samples per question and sampler ({per_question.min()})")
    curves = maj_curves(samples, ["sampler", "prompt_id"])
    at_n = curves[curves["n"] == n].pivot(index="prompt_id", columns="sampler", values="maj_at_n")
    best = max(fixed, key=lambda sampler: at_n[sampler].mean())
    return (at_n[ead[0]] - at_n[best]).to_numpy(), ead[0], best


def claim_row(claim: dict, samples: pd.DataFrame, *, resamples: int, seed: int) -> dict:
    """One claims-table row: the claim's paired effect, its CI, standard error, MDE, verdict and scope."""
    (model,) = samples["model_name"].unique()
    (task,) = samples["task"].unique()
    if claim["analysis"] == "entropy_by_position":
        differences, dropped = early_minus_late(samples, claim["early"], claim["late"])
        responses = int(samples["sample_id"].nunique())
        sides = {"sampler": f"positions [0, {claim['early']})", "baseline": f"positions >= {claim['late']}",
                 "metric": "mean entropy at tau = 1 (nats)", "n": responses}
        units = (f"{differences.size} {task} questions x {responses} responses ({dropped} responses of at most "
                 f"{claim['late']} tokens left out)")
    elif claim["analysis"] == "majority_scaling":
        differences, ead, best = ead_minus_best_fixed(samples, claim["metric"])
        sides = {"sampler": ead, "baseline": f"best fixed: {best}", "metric": claim["metric"],
                 "n": int(samples.groupby(["sampler", "prompt_id"]).size().min())}
        units = f"{differences.size} {task} questions x {sides['n']} samples per sampler"
    else:
        differences, first, last = first_minus_last_fork(samples, claim["metric"])
        sides = {"sampler": f"fork after p = {first}", "baseline": f"fork after p = {last}", "metric": claim["metric"],
                 "n": int(samples.groupby(["fork_point", "unit"]).size().min())}
        units = f"{differences.size} references ({task}) x {sides['n']} continuations per fork point"
    draws = bootstrap_means(differences, resamples=resamples, seed=seed)
    low, high = float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))
    mde = minimum_detectable_effect(differences) if differences.size >= 2 else float("nan")
    verdict = decide(low, high, smallest_effect=claim.get("smallest_effect"))
    if mde > 0:
        power = f"detects a paired difference of {mde:.3g} or more with 80% power"
    elif mde == 0:  # every paired difference equal (e.g. all zero at smoke size): no spread to size a power on
        power = "every paired difference is the same, so no power can be stated (too few questions or samples)"
    else:
        power = "one paired difference, so no power can be stated"
    scope = (f"one fixed model, {units}: {power}; the CI covers questions and samples, not training (the paper's "
             "claim is about a base model)")
    return {"claim": claim["id"], "figure": claim["figure"], "statement": claim["statement"], "policy": model,
            **NO_TRAINING, **sides, "effect": float(differences.mean()), "ci_low": low, "ci_high": high,
            "standard_error": float(np.std(draws, ddof=1)), "mde": mde, "num_units": int(differences.size),
            "smallest_effect": claim.get("smallest_effect", math.nan), "verdict": verdict.verdict,
            "rule": verdict.rule, "scope": scope}


#: analysis of a claim -> its samples table (passed by the option --<analysis>-samples)
SAMPLES = {"entropy_by_position": ENTROPY_SAMPLES, "forking": FORKING_SAMPLES, "majority_scaling": MAJORITY_SAMPLES}


def samples_option(analysis: str) -> str:
    """The command-line option that passes an analysis' samples tables (``--entropy-by-position-samples``)."""
    return f"--{analysis.replace('_', '-')}-samples"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", required=True, help="the config's analyses.claims list (JSON)")
    # both required, each with zero or more files: the workflow always states what it passes
    for analysis in SAMPLES:
        parser.add_argument(samples_option(analysis), nargs="*", required=True,
                            help=f"{analysis} samples of the claimed models")
    parser.add_argument("--resamples", type=int, required=True, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed")
    parser.add_argument("--out", required=True, help="the analyses' claims table (csv, the claims table's columns)")
    args = parser.parse_args(argv)
    log = setup_logging("claims.analyses")
    by_model = {}
    for analysis, table in SAMPLES.items():
        for path in getattr(args, f"{analysis}_samples"):
            samples = table.read(path)
            by_model[(analysis, samples["model_name"].iloc[0])] = samples
    rows = []
    for claim in json.loads(args.claims):
        key = (claim["analysis"], claim["model"])
        if key not in by_model:
            parser.error(f"claim {claim['id']}: no {claim['analysis']} samples of model {claim['model']!r} given "
                         f"({samples_option(claim['analysis'])})")
        rows.append(claim_row(claim, by_model[key], resamples=args.resamples, seed=args.seed))
    CLAIMS.write(pd.DataFrame(rows, columns=list(CLAIMS.columns)), args.out)
    for row in rows:
        log.info("%s %s on %s: %+.4f [%+.4f, %+.4f], MDE %.4f -> %s", row["claim"], row["statement"], row["policy"],
                 row["effect"], row["ci_low"], row["ci_high"], row["mde"], row["verdict"])


if __name__ == "__main__":
    main()
