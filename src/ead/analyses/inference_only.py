"""Inference-only sampler comparison (no RL; the authors' revised "does EAD transfer" table): fixed temperatures and
EAD at several d0, per model, with the best configuration of each family chosen on one split and reported on another.

Input: the per-problem evaluation tables of every (model, split, sampler) (``ead.evaluation``; every sampler of a
model is evaluated on the same problems with the same seed, so the draws share their random numbers). Output:

* the sampler table (:data:`ead.tables.INFERENCE_ONLY`): per (model, split, sampler, metric) the mean over problems
  with its 95% bootstrap CI, and the paired difference to the baseline sampler (per problem, same problems) with its
  CI and minimum detectable effect (80% power);
* the headline (:data:`ead.tables.INFERENCE_ONLY_HEADLINE`): per (model, metric), the EAD configuration and the fixed
  temperature that score best on ``select_metric`` on the *selection* split, compared paired on the *report* split
  (EAD-best minus fixed-best) with CI, MDE and verdict (``ead.verdicts.decide``). Choosing on one split and reporting
  on the other keeps the headline from favouring the family with more configurations (a best-of-m on the problems it
  is reported on is biased upward, more so for larger m), the trap of the authors' "EAD-best vs fixed-best".

Run:
    python -m ead.analyses.inference_only --problems results/inference_only/*/*/*_problems.csv \
        --families '{"tau1.0": "fixed", "ead_d25": "ead", ...}' --k 1 16 --baseline tau1.0 \
        --select-split val --report-split test --select-metric pass@16 --resamples 1000 --seed 0 \
        --table results/inference_only/samplers.csv --headline results/inference_only/headline.csv
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ead.io import setup_logging
from ead.metrics import POWER_Z, bootstrap_means, per_problem_metric
from ead.tables import BASE_PROBLEMS, INFERENCE_ONLY, INFERENCE_ONLY_HEADLINE
from ead.verdicts import decide

__all__ = ["headline", "per_problem_path", "sampler_table"]

#: Where the workflow writes one evaluation: results/inference_only/{model}/{split}/{sampler}_problems.csv.
PATH = re.compile(r"(?:.*/)?inference_only/(?P<model>[^/]+)/(?P<split>[^/]+)/(?P<sampler>[^/]+)_problems\.csv$")


def per_problem_path(model: str, split: str, sampler: str) -> str:
    return f"results/inference_only/{model}/{split}/{sampler}_problems.csv"


def load(paths: list[str]) -> pd.DataFrame:
    """Every evaluation's per-problem counts, with model, split and sampler from its path."""
    frames = []
    for path in paths:
        match = PATH.match(str(Path(path).as_posix()))
        if not match:
            raise SystemExit(f"{path}: not an inference-only evaluation ({PATH.pattern})")
        frames.append(BASE_PROBLEMS.read(path).assign(**match.groupdict()))
    return pd.concat(frames, ignore_index=True)


def _ci(draws: np.ndarray) -> tuple[float, float]:
    return float(np.quantile(draws, 0.025)), float(np.quantile(draws, 0.975))


def _per_problem(problems: pd.DataFrame, model: str, split: str, sampler: str, metric: str) -> tuple[list, np.ndarray]:
    rows = problems[(problems["model"] == model) & (problems["split"] == split) & (problems["sampler"] == sampler)]
    if rows.empty:
        raise SystemExit(f"no evaluation of sampler {sampler!r} for model {model!r} on split {split!r}")
    rows = rows.sort_values("problem_id")
    return list(rows["problem_id"]), per_problem_metric(rows, metric)


def paired_difference(problems, model, split, sampler, baseline, metric, *, resamples, seed) -> dict:
    """sampler - baseline per problem (the same problems, or an error), its mean, 95% CI, SE and MDE."""
    ids_a, a = _per_problem(problems, model, split, sampler, metric)
    ids_b, b = _per_problem(problems, model, split, baseline, metric)
    if ids_a != ids_b:
        raise SystemExit(f"{model}, {split}: {sampler} and {baseline} were not evaluated on the same problems; the "
                         f"comparison must be paired")
    difference = a - b
    draws = bootstrap_means(difference, resamples=resamples, seed=seed)
    low, high = _ci(draws)
    standard_error = float(np.std(draws, ddof=1))
    return {"diff": float(difference.mean()), "diff_ci_low": low, "diff_ci_high": high,
            "standard_error": standard_error, "mde": POWER_Z * standard_error, "num_problems": difference.size}


def metrics_of(ks: list[int]) -> list[str]:
    return [f"{kind}@{k}" for k in ks for kind in ("pass", "worst") if not (kind == "worst" and k == 1)]


def sampler_table(problems: pd.DataFrame, families: dict[str, str], ks: list[int], baseline: str, *, resamples: int,
                  seed: int) -> pd.DataFrame:
    rows = []
    for (model, split), group in problems.groupby(["model", "split"], sort=True):
        for sampler in sorted(group["sampler"].unique()):
            for metric in metrics_of(ks):
                _, values = _per_problem(problems, model, split, sampler, metric)
                low, high = _ci(bootstrap_means(values, resamples=resamples, seed=seed))
                pair = paired_difference(problems, model, split, sampler, baseline, metric, resamples=resamples,
                                         seed=seed)
                rows.append({"model": model, "split": split, "sampler": sampler, "family": families[sampler],
                             "metric": metric, "value": float(values.mean()), "ci_low": low, "ci_high": high,
                             "baseline": baseline, **pair})
    return pd.DataFrame(rows)


def headline(problems: pd.DataFrame, table: pd.DataFrame, families: dict[str, str], ks: list[int], *,
             select_split: str, report_split: str, select_metric: str, resamples: int, seed: int) -> pd.DataFrame:
    """Per model and metric: best EAD minus best fixed temperature on ``report_split``, each family's best chosen by
    ``select_metric`` on ``select_split`` (ties: the first sampler by name)."""
    rows = []
    for model in sorted(table["model"].unique()):
        chosen = {}
        for family in ("ead", "fixed"):
            candidates = table[(table["model"] == model) & (table["split"] == select_split)
                               & (table["family"] == family) & (table["metric"] == select_metric)]
            if candidates.empty:
                raise SystemExit(f"model {model}: no {family} sampler evaluated on {select_split!r}")
            chosen[family] = candidates.sort_values(["value", "sampler"], ascending=[False, True]).iloc[0]["sampler"]
        for metric in metrics_of(ks):
            pair = paired_difference(problems, model, report_split, chosen["ead"], chosen["fixed"], metric,
                                     resamples=resamples, seed=seed)
            verdict = decide(pair["diff_ci_low"], pair["diff_ci_high"])
            rows.append({"model": model, "metric": metric, "select_split": select_split,
                         "report_split": report_split, "select_metric": select_metric, "ead_best": chosen["ead"],
                         "fixed_best": chosen["fixed"], "effect": pair["diff"], "ci_low": pair["diff_ci_low"],
                         "ci_high": pair["diff_ci_high"], "standard_error": pair["standard_error"],
                         "mde": pair["mde"], "num_problems": pair["num_problems"], "verdict": verdict.verdict,
                         "rule": verdict.rule})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", required=True, help="per-problem tables of every evaluation")
    parser.add_argument("--families", required=True, help="sampler -> family (ead or fixed), JSON")
    parser.add_argument("--k", type=int, nargs="+", required=True)
    parser.add_argument("--baseline", required=True, help="sampler every other is differenced against")
    parser.add_argument("--select-split", required=True)
    parser.add_argument("--report-split", required=True)
    parser.add_argument("--select-metric", required=True)
    parser.add_argument("--resamples", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--headline", required=True)
    args = parser.parse_args(argv)
    log = setup_logging("inference_only")
    families = json.loads(args.families)
    problems = load(args.problems)
    table = sampler_table(problems, families, args.k, args.baseline, resamples=args.resamples, seed=args.seed)
    INFERENCE_ONLY.write(table, args.table)
    top = headline(problems, table, families, args.k, select_split=args.select_split, report_split=args.report_split,
                   select_metric=args.select_metric, resamples=args.resamples, seed=args.seed)
    INFERENCE_ONLY_HEADLINE.write(top, args.headline)
    for row in top.itertuples():
        log.info("%s %s: %s - %s = %+.4f [%+.4f, %+.4f], MDE %.4f -> %s", row.model, row.metric, row.ead_best,
                 row.fixed_best, row.effect, row.ci_low, row.ci_high, row.mde, row.verdict)


if __name__ == "__main__":
    main()
