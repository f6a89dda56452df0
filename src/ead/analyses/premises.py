"""Premise probe (no RL): do the paper's premises hold for this policy on this task, before any RL runs on them?

On a policy (after SFT) and a fixed set of problems of its task (countdown, or the strategy task of the positive
control; the task is the table's ``source`` column), every sampler of the probe draws n samples per
problem with common random numbers (the same seeded stream per batch: where two samplers' distributions agree they
draw the same token). Samplers whose schedule depends on the RL step (EAD's d_s) are probed at each of
``steps``. Per (sampler, step), as a mean over problems with a 95% bootstrap CI, and as a *paired* difference
against the baseline sampler (same problems, same random numbers) with its CI and minimum detectable effect:

* ``pass@1``, ``pass@{n}``, ``informative@{g}`` (a group of g rollouts with 0 < correct < g: the groups that
  give GRPO-style advantages a signal), ``distinct_correct`` (distinct correct chains per problem);
* failure shares among failed samples, by first mistake (pooled ratio, bootstrap over problems; the task's
  ``classify_failure``, :class:`ead.data.tasks.Task`): on countdown ``strategy`` (a legal move into a dead end),
  ``arithmetic``, ``rule``; on the strategy task ``strategy`` (a strategy other than the key's), ``execution``,
  ``format``;
* the off-policy gap TIS would correct if the policy trained at tau = 1: per-token ``log_ratio`` (log pi_1 -
  log pi_sampler), the fraction of tokens and of sequences whose weight exp(log-ratio) exceeds ``tis_cap``, the
  mean sequence log-ratio, and ``sequence_ess_fraction``: per problem, the effective sample size of its n samples'
  sequence weights as a share of n (:func:`ead.metrics.ess_fraction`; 1 on policy);
* ``greedy_accuracy`` (sampler-independent, one row).

It then states three premises of the paper as verdicts (``ead.verdicts.decide`` on the paired CIs):

* G1, a trade-off exists: heat early helps coverage (``hot`` sampler's Pass@n above the baseline's) and cold
  late helps accuracy (``cold`` sampler's Pass@1 above the baseline's);
* G2, strategy errors are a large share of the baseline's failures (above ``strategy_share_min``);
* G3, EAD raises the informative-group fraction at group size ``informative_k`` over the baseline, at every
  probed step.

With ``group_by`` in the settings (config ``premises.group_by``: a column of the task's data table, the strategy
task's ``key``) it also writes, to ``--groups-out`` (``ead.tables.PREMISES_BY_GROUP``), per (sampler, step) and
value of that column: Pass@1 and ``informative@{informative_k}`` over the value's problems with their 95% bootstrap
CIs over problems, the paired difference to the baseline on the same problems, and the problem count.

Run:
    python -m ead.analyses.premises --model results/models/tiny1m --data results/data/countdown.parquet \
        --settings '{"split": "val", "limit": 256, "n": 16, ...}' --out results/premises/tiny1m.csv \
        --verdicts results/premises/tiny1m_verdicts.csv [--groups-out results/premises/tiny1m_by_key.csv]
(``--settings`` is the config's ``premises`` section with the samplers resolved to schedules, one typed document,
:class:`ead.settings.premises.ProbeSettings`, read strictly: an unknown or missing key is refused by name; the
workflow builds it, see workflow/rules/premises.smk.) Samplers listed in its ``measured`` key take c and d0 from
``--measured-schedule`` (the policy's table of ``ead.analyses.measured_schedule``), as RL cells of them do.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pandas as pd

from ead.analyses.measured_schedule import read_measured_schedule
from ead.data.tasks import get_task
from ead.data.tasks import table_task as one_task_of
from ead.evaluation import first_problems_of_split
from ead.io import read_table, setup_logging
from ead.metrics import (
    bootstrap_mean_ci,
    bootstrap_ratio_ci,
    ess_fraction,
    informative_at_k,
    minimum_detectable_effect,
    pass_at_k,
)
from ead.models import load_hf_model
from ead.numerics import pin_job
from ead.samplers.engines import sample_hf
from ead.schedule import build_schedule
from ead.settings.base import ConfigError
from ead.settings.premises import ProbeSettings
from ead.tables import PREMISE_VERDICTS, PREMISES, PREMISES_BY_GROUP
from ead.verdicts import combine, decide

#: The verdict table's part of G1's heat half (the hot sampler's Pass@n minus the baseline's), which readers select.
G1_HEAT_PART = "heat early raises coverage"
PROBE_POSITIONS = np.arange(512)  # positions compared to tell whether a schedule changes with the RL step


def step_dependent(schedule, steps: list[int]) -> bool:
    """Whether ``schedule`` gives other temperatures at some probed step than at the first one."""
    if schedule.reads_logits:  # per-token temperatures from the logits (entropy_aware): no step in them
        return False
    first = schedule.temperatures(PROBE_POSITIONS, steps[0])
    return any(not np.array_equal(schedule.temperatures(PROBE_POSITIONS, s), first) for s in steps[1:])


def table_task(table: pd.DataFrame, source: str) -> str:
    """The task of a synthetic problems table: its ``source`` column, one task per table, one the probe knows."""
    return one_task_of(table, source, "the premise probe", lambda task: task.probed)


def per_problem_quantities(samples: pd.DataFrame, problems: pd.DataFrame, tis_cap: float,
                           task: str) -> pd.DataFrame:
    """One row per problem: correct count, distinct correct chains, failures by type, log-ratio sums and counts."""
    reference = dict(zip(problems["id"], problems["answer"]))
    probe_task = get_task(task)
    log_cap = math.log(tis_cap)
    rows = []
    for problem_id, group in samples.groupby("prompt_id", sort=False):
        kinds, chains = [], set()
        token_ratio_sum = token_count = tokens_capped = sequences_capped = 0.0
        sequence_ratios = []
        for text, behaviour, target in zip(group["text"], group["behaviour_logprobs"], group["target_logprobs"]):
            kind = probe_task.classify_failure(text, reference[problem_id])
            kinds.append(kind)
            if kind == "ok":
                chains.add("\n".join(line.strip() for line in text.strip().splitlines() if line.strip()))
            ratio = np.asarray(target, dtype=np.float64) - np.asarray(behaviour, dtype=np.float64)
            token_ratio_sum += ratio.sum()
            token_count += ratio.size
            tokens_capped += float((ratio > log_cap).sum())
            sequence_ratios.append(ratio.sum())
            sequences_capped += float(ratio.sum() > log_cap)
        row = {"problem_id": problem_id, "num_samples": len(group), "num_correct": kinds.count("ok"),
               "distinct_correct": len(chains), "token_log_ratio_sum": token_ratio_sum, "num_tokens": token_count,
               "tokens_capped": tokens_capped, "sequences_capped": sequences_capped,
               "sequence_log_ratio": float(np.mean(sequence_ratios)),
               "sequence_ess_fraction": ess_fraction(np.asarray(sequence_ratios))}
        row.update({f"failures_{kind}": kinds.count(kind) for kind in probe_task.failure_types})
        rows.append(row)
    return pd.DataFrame(rows).set_index("problem_id")


def per_problem_metrics(quantities: pd.DataFrame, n: int, group_sizes: list[int]) -> dict[str, np.ndarray]:
    """Per-problem values of every mean-type metric (same problem order as ``quantities``)."""
    counts = quantities["num_samples"].to_numpy(), quantities["num_correct"].to_numpy()
    metrics = {"pass@1": pass_at_k(*counts, 1), f"pass@{n}": pass_at_k(*counts, n),
               "distinct_correct": quantities["distinct_correct"].to_numpy(dtype=float),
               "sequence_log_ratio": quantities["sequence_log_ratio"].to_numpy(),
               "sequences_capped": (quantities["sequences_capped"] / quantities["num_samples"]).to_numpy(),
               "sequence_ess_fraction": quantities["sequence_ess_fraction"].to_numpy()}
    for g in group_sizes:
        metrics[f"informative@{g}"] = informative_at_k(*counts, g)
    return metrics


def ratio_metrics(quantities: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Pooled ratios (numerator, denominator per problem): failure shares and per-token off-policy statistics."""
    kinds = [column.removeprefix("failures_") for column in quantities.columns if column.startswith("failures_")]
    failures = quantities[[f"failures_{kind}" for kind in kinds]].sum(axis=1).to_numpy()
    ratios = {f"failure_share_{kind}": (quantities[f"failures_{kind}"].to_numpy(), failures) for kind in kinds}
    ratios["token_log_ratio"] = (quantities["token_log_ratio_sum"].to_numpy(), quantities["num_tokens"].to_numpy())
    ratios["tokens_capped"] = (quantities["tokens_capped"].to_numpy(), quantities["num_tokens"].to_numpy())
    return ratios


def paired_premise_table(quantities: dict[tuple[str, int], pd.DataFrame], baseline: tuple[str, int], n: int,
              group_sizes: list[int], *, resamples: int, seed: int) -> pd.DataFrame:
    """Tidy table: per (sampler, step, metric) the value with its CI, and the paired difference to ``baseline``."""
    base_metrics = per_problem_metrics(quantities[baseline], n, group_sizes)
    rows = []
    for (sampler, step), table in quantities.items():
        table = table.loc[quantities[baseline].index]  # the baseline's problem order: differences are paired
        for metric, values in per_problem_metrics(table, n, group_sizes).items():
            value, low, high = bootstrap_mean_ci(values, resamples=resamples, seed=seed)
            difference = values - base_metrics[metric]
            _, diff_low, diff_high = bootstrap_mean_ci(difference, resamples=resamples, seed=seed)
            rows.append({"sampler": sampler, "step": step, "metric": metric, "value": value, "ci_low": low,
                         "ci_high": high, "diff": float(difference.mean()), "diff_ci_low": diff_low,
                         "diff_ci_high": diff_high, "mde": minimum_detectable_effect(difference)})
        for metric, (numerators, denominators) in ratio_metrics(table).items():
            if denominators.sum() <= 0:  # e.g. no failures at all
                continue
            value, low, high = bootstrap_ratio_ci(numerators, denominators, resamples=resamples, seed=seed)
            rows.append({"sampler": sampler, "step": step, "metric": metric, "value": value, "ci_low": low,
                         "ci_high": high})
    return pd.DataFrame(rows)


def premises_by_group(quantities: dict[tuple[str, int], pd.DataFrame], baseline: tuple[str, int],
                      groups: pd.Series, group_by: str, informative_k: int, *, resamples: int,
                      seed: int) -> pd.DataFrame:
    """Per (sampler, step) and value of ``groups`` (problem id -> value of the data column ``group_by``): Pass@1 and
    informative@``informative_k`` over the value's problems, mean with a bootstrap CI over them, the paired
    difference to ``baseline`` on the same problems and the value's problem count (``num_problems``)."""
    order = quantities[baseline].index  # the baseline's problem order: differences are paired
    missing = sorted(set(order) - set(groups.index))
    if missing:
        raise ValueError(f"{len(missing)} probed problems have no {group_by!r} value (e.g. {missing[:3]})")
    labels = groups.loc[order].astype(str).to_numpy()
    metrics = ("pass@1", f"informative@{informative_k}")

    def values(table):
        counts = table.loc[order, "num_samples"].to_numpy(), table.loc[order, "num_correct"].to_numpy()
        return dict(zip(metrics, (pass_at_k(*counts, 1), informative_at_k(*counts, informative_k))))

    base = values(quantities[baseline])
    rows = []
    for (sampler, step), table in quantities.items():
        for metric, per_problem in values(table).items():
            for group in sorted(set(labels)):
                chosen = labels == group
                value, low, high = bootstrap_mean_ci(per_problem[chosen], resamples=resamples, seed=seed)
                difference = per_problem[chosen] - base[metric][chosen]
                _, diff_low, diff_high = bootstrap_mean_ci(difference, resamples=resamples, seed=seed)
                rows.append({"sampler": sampler, "step": step, "group_by": group_by, "group": group,
                             "metric": metric, "value": value, "ci_low": low, "ci_high": high,
                             "diff": float(difference.mean()), "diff_ci_low": diff_low, "diff_ci_high": diff_high,
                             "num_problems": int(chosen.sum())})
    return pd.DataFrame(rows)


def problem_groups(problems: pd.DataFrame, group_by: str, source: str) -> pd.Series:
    """Problem id -> value of the probed problems' column ``group_by`` (config ``premises.group_by``)."""
    if group_by not in problems.columns:
        raise SystemExit(f"{source}: premises.group_by = {group_by!r} is not a column of the task's data table "
                         f"(columns: {sorted(problems.columns)})")
    return problems.set_index("id")[group_by]


def premise_verdicts(table: pd.DataFrame, settings: ProbeSettings) -> pd.DataFrame:
    """G1-G3 as rows: the effects they rest on, their CIs and the verdict with its rule."""
    premises, n = settings.premises, settings.n
    indexed = table.set_index(["sampler", "step", "metric"])
    first_step = settings.steps[0]

    def effect_row(sampler, step, metric, column="diff"):
        row = indexed.loc[(sampler, step, metric)]
        low, high = (row["diff_ci_low"], row["diff_ci_high"]) if column == "diff" else (row["ci_low"], row["ci_high"])
        return row[column], low, high, row.get("mde", float("nan"))

    def steps_of(sampler):
        return sorted(table.loc[table["sampler"] == sampler, "step"].unique())

    rows = []
    hot, cold = premises.hot, premises.cold
    g1_parts = []
    for sampler, metric, claim in ((hot, f"pass@{n}", G1_HEAT_PART),
                                   (cold, "pass@1", "cold late raises accuracy")):
        effect, low, high, mde = effect_row(sampler, steps_of(sampler)[0], metric)
        verdict = decide(low, high)
        g1_parts.append(verdict)
        rows.append({"premise": "G1", "part": claim, "sampler": sampler, "step": steps_of(sampler)[0],
                     "metric": f"{metric} - baseline", "effect": effect, "ci_low": low, "ci_high": high, "mde": mde,
                     "threshold": 0.0, "verdict": verdict.verdict, "rule": verdict.rule})
    g1 = combine(g1_parts)
    rows.append({"premise": "G1", "part": "a trade-off exists (both parts)", "verdict": g1.verdict, "rule": g1.rule})

    baseline, share_min = settings.baseline, premises.strategy_share_min
    g2 = {"premise": "G2", "part": "strategy errors are a large share of failures", "sampler": baseline,
          "step": first_step, "metric": "failure_share_strategy", "threshold": share_min}
    if (baseline, first_step, "failure_share_strategy") in indexed.index:
        effect, low, high, _ = effect_row(baseline, first_step, "failure_share_strategy", column="value")
        verdict = decide(low, high, threshold=share_min)
        rows.append({**g2, "effect": effect, "ci_low": low, "ci_high": high, "verdict": verdict.verdict,
                     "rule": verdict.rule})
    else:  # no failed sample: no share to measure
        rows.append({**g2, "verdict": "inconclusive", "rule": "the baseline failed on no sample"})

    ead, k = premises.ead, premises.informative_k
    g3_parts = []
    for step in steps_of(ead):
        effect, low, high, mde = effect_row(ead, step, f"informative@{k}")
        verdict = decide(low, high)
        g3_parts.append(verdict)
        rows.append({"premise": "G3", "part": f"EAD raises informative groups at step {step}", "sampler": ead,
                     "step": step, "metric": f"informative@{k} - baseline", "effect": effect, "ci_low": low,
                     "ci_high": high, "mde": mde, "threshold": 0.0, "verdict": verdict.verdict, "rule": verdict.rule})
    g3 = combine(g3_parts)
    rows.append({"premise": "G3", "part": "EAD raises informative groups (every probed step)", "verdict": g3.verdict,
                 "rule": g3.rule})
    return pd.DataFrame(rows)


def with_measured_schedules(settings: ProbeSettings, path: str | None) -> ProbeSettings:
    """The probe's settings with c and d0 of every sampler in ``settings.measured`` taken from the policy's
    measured schedule table (the rest of each schedule is the config's ``ead`` block and the sampler's overrides)."""
    measured = list(settings.measured)
    if measured and path is None:
        raise SystemExit(f"samplers {measured} are `measured: true`: pass the policy's --measured-schedule table")
    if path is not None and not measured:
        raise SystemExit(f"--measured-schedule {path} given, but no probed sampler is `measured: true`")
    if not measured:
        return settings
    sized = read_measured_schedule(path)
    samplers = {name: ({**spec, **sized} if name in measured else spec) for name, spec in settings.samplers.items()}
    return settings.with_samplers(samplers)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the policy (HF directory)")
    parser.add_argument("--data", required=True, help="the problems table (countdown or strategy: its task is its "
                        "'source' column)")
    parser.add_argument("--settings", required=True, help="probe settings (JSON; the workflow builds them)")
    parser.add_argument("--threads", type=int, required=True, help="torch threads (fixed: results depend on it)")
    parser.add_argument("--out", required=True, help="per-sampler metrics table")
    parser.add_argument("--verdicts", required=True, help="premise verdicts table")
    parser.add_argument("--measured-schedule", help="the policy's measured schedule table (samplers in `measured`)")
    parser.add_argument("--groups-out", help="the table by value of the settings' group_by column (given with it)")
    args = parser.parse_args(argv)
    try:
        settings = ProbeSettings.from_json(args.settings)
    except ConfigError as error:
        parser.error(f"--settings: {error}")
    group_by = settings.group_by
    if (group_by is None) != (args.groups_out is None):
        parser.error("--groups-out and the settings' group_by go together (config premises.group_by): "
                     f"group_by = {group_by!r}, --groups-out = {args.groups_out!r}")

    pin_job(args.threads)
    settings = with_measured_schedules(settings, args.measured_schedule)
    log = setup_logging("premises")
    model, tokenizer = load_hf_model(args.model)
    table = read_table(args.data)
    task = table_task(table, args.data)
    problems = first_problems_of_split(table, settings.split, settings.limit, args.data)
    groups = problem_groups(problems, group_by, args.data) if group_by else None
    ids, prompts = problems["id"].tolist(), problems["question"].tolist()
    n, steps = settings.n, settings.steps
    # the same seed and batch size for every sampler: batch by batch the same random numbers (common random numbers,
    # ead.samplers.engines.sample_hf)
    options = dict(n=n, max_new_tokens=settings.max_new_tokens, seed=settings.seed, batch_size=settings.batch_size)
    quantities = {}
    for name, spec in settings.samplers.items():
        schedule = build_schedule(spec)
        for step in (steps if step_dependent(schedule, steps) else steps[:1]):
            samples = sample_hf(model, tokenizer, ids, prompts, schedule, step=step, **options)
            quantities[(name, step)] = per_problem_quantities(samples, problems, settings.tis_cap, task)
            done = quantities[(name, step)]
            log.info("%s at step %d: pass@1 %.4f, distinct correct %.2f", name, step,
                     done["num_correct"].sum() / done["num_samples"].sum(), done["distinct_correct"].mean())
    table = paired_premise_table(quantities, (settings.baseline, steps[0]), n, settings.group_sizes,
                                 resamples=settings.bootstrap, seed=settings.seed)
    greedy = sample_hf(model, tokenizer, ids, prompts, build_schedule({"name": "fixed", "tau": 1.0}), greedy=True,
                       **{**options, "n": 1})
    correct = [get_task(task).classify_failure(text, answer) == "ok"
               for text, answer in zip(greedy["text"], problems.set_index("id").loc[greedy["prompt_id"], "answer"])]
    value, low, high = bootstrap_mean_ci(np.asarray(correct, dtype=float), resamples=settings.bootstrap,
                                         seed=settings.seed)
    table = pd.concat([table, pd.DataFrame([{"sampler": "greedy", "step": steps[0], "metric": "greedy_accuracy",
                                             "value": value, "ci_low": low, "ci_high": high}])], ignore_index=True)
    provenance = {"model": args.model, "data": args.data, "split": settings.split, "num_problems": len(ids),
                  "n": n, "baseline": settings.baseline, "seed": settings.seed,
                  "schedules": json.dumps(settings.samplers, sort_keys=True)}
    PREMISES.write(table.assign(**provenance), args.out)
    verdicts = premise_verdicts(table, settings)
    PREMISE_VERDICTS.write(verdicts.assign(**provenance), args.verdicts)
    if group_by:
        by_group = premises_by_group(quantities, (settings.baseline, steps[0]), groups, group_by,
                                     settings.premises.informative_k, resamples=settings.bootstrap,
                                     seed=settings.seed)
        PREMISES_BY_GROUP.write(by_group.assign(**{key: value for key, value in provenance.items()
                                                   if key != "num_problems"}), args.groups_out)
        log.info("wrote %s (%d rows, %d values of %s)", args.groups_out, len(by_group), by_group["group"].nunique(),
                 group_by)
    for row in verdicts.itertuples():
        log.info("%s %s: %s (%s)", row.premise, row.part, row.verdict, row.rule)


if __name__ == "__main__":
    main()
