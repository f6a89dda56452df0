"""The run's headline numbers in one Markdown file, rendered from its result tables (never typed by hand).

The docs describe what each table means but quote no result: results depend on the machine (see docs/operations.md,
"Reproducibility"), so each run reads its own numbers here. Every number carries its 95% CI and the table it
comes from. Sections whose tables are not given are left out; every table option is required (it may list no file)
but the grid's breakdowns (``--signal-by-phase``, ``--eval-by-group``), which the workflow passes only where the config
has ``rl.breakdown``, and the probe's tables by group (``--premises-by-group``), only where it has
``premises.group_by``.

Run:
    python -m ead.summary --profile default --results-meaning findings --rerun "snakemake --cores all" \
        --base-eval results/eval/*_base.csv \
        --eval-curves results/rl/eval_curves.csv --entropy results/analyses/entropy_by_position/*.csv \
        --entropy-roles results/analyses/entropy_by_role/*.csv \
        --forking results/analyses/forking/*.csv --majority results/analyses/majority_scaling/*.csv \
        --premises results/premises/*_verdicts.csv --premise-metrics results/premises/tiny1m.csv \
        --rl-learns results/premises/rl_learns.csv --claims results/claims.csv \
        --signal-by-phase results/rl/signal_by_phase.csv --eval-by-group results/rl/eval_by_group.csv \
        --premises-by-group results/premises/tiny_strategy_by_key.csv --out results/summary.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ead.claims import comparison_label
from ead.io import atomic_path, setup_logging
from ead.tables import (
    BASE_SUMMARY,
    CLAIMS,
    ENTROPY_BY_POSITION,
    ENTROPY_BY_ROLE,
    EVAL_BY_GROUP,
    EVAL_CURVES,
    FAILURE_METRIC_PREFIX,
    FORKING,
    MAJORITY_SCALING,
    PREMISE_VERDICTS,
    PREMISES,
    PREMISES_BY_GROUP,
    RL_LEARNS,
    SIGNAL_BY_PHASE,
)

ENTROPY_POSITIONS = (0, 2, 4, 8, 16, 24, 32, 64, 127)  # positions quoted from the entropy-by-position curve


def percent_with_ci(row) -> str:
    """``value [ci_low, ci_high]`` in percent, one decimal."""
    return f"{100 * row['value']:.1f} [{100 * row['ci_low']:.1f}, {100 * row['ci_high']:.1f}]"


def markdown_table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def metric_columns(metrics: pd.Series) -> list[str]:
    """greedy accuracy, Pass@1 and the largest Pass@k / Worst@k present, then verl's bootstrap best@k / worst@k at
    that k where present (the RL curves), in that order."""
    present = set(metrics)
    ks = sorted({int(m.split("@")[1]) for m in present if m.startswith("pass@")})
    wanted = ["greedy_accuracy", "pass@1"] + ([f"pass@{ks[-1]}", f"worst@{ks[-1]}", f"verl_best@{ks[-1]}",
                                                f"verl_worst@{ks[-1]}"] if ks and ks[-1] > 1 else [])
    return [m for m in wanted if m in present]


def base_section(paths: list[str]) -> str:
    tables = []
    for path in paths:
        tables.append(BASE_SUMMARY.read(path).assign(policy=Path(path).stem.removesuffix("_base")))
    table = pd.concat(tables, ignore_index=True)
    metrics = metric_columns(table["metric"])
    rows = []
    for policy, group in table.groupby("policy", sort=True):
        by_metric = group.set_index("metric")
        first = group.iloc[0]
        rows.append([policy, f"{int(first['num_problems'])} x {int(first['n'])}",
                     *(percent_with_ci(by_metric.loc[m]) if m in by_metric.index else "" for m in metrics),
                     f"{first['mean_response_tokens']:.0f}"])
    header = ["policy", "problems x samples", *metrics, "mean response (tokens)"]
    settings = table.iloc[0]
    return (f"## Policies before RL\n\nFrom `{'`, `'.join(paths)}`: {settings['split']} split, sampled at "
            f"`{settings['schedule_params']}`; percent with 95% bootstrap CIs over problems.\n\n"
            + markdown_table(header, rows))


#: How the summary names the evaluations of a cell (``ead.tables.EVALUATED_WITH``).
EVALUATED_WITH_LABELS = {"eval_tau": "eval tau", "own_sampler": "own sampler", "train_pool": "training pool"}


def rl_section(path: str) -> str:
    curves = EVAL_CURVES.read(path)
    cell = ["policy", "algorithm", "sampler", "n", "evaluated_with"]
    last = curves[curves["step"] == curves.groupby(cell)["step"].transform("max")]
    metrics = metric_columns(last["metric"])
    rows = []
    for (policy, algorithm, sampler, n, evaluated_with), group in last.groupby(cell, sort=True):
        by_metric = group.set_index("metric")
        seeds = int(by_metric["num_seeds"].max()) if "num_seeds" in by_metric else ""
        rows.append([policy, algorithm, sampler, int(n), EVALUATED_WITH_LABELS[evaluated_with],
                     int(group["step"].iloc[0]), seeds,
                     *(percent_with_ci(by_metric.loc[m]) if m in by_metric.index else "" for m in metrics)])
    header = ["policy", "algorithm", "sampler", "n", "evaluated with", "step", "seeds", *metrics]
    return (f"## RL grid: final evaluation of every cell\n\nFrom `{path}`: the last evaluated step of each cell, mean "
            "over seeds with a 95% CI from the two-way bootstrap over seeds and problems (percent), at the declared "
            "evaluation temperature and (where evaluated) with the cell's own sampler. Differences between rows are "
            "unpaired here; read overlapping CIs as \"not separated\". `pass@k` and `worst@k` are the unbiased "
            "estimators; `verl_best@k` and `verl_worst@k` are verl's bootstrap best@k / worst@k (k draws with "
            "replacement, as the authors' validation logged them; `ead.metrics`), shown for comparison with numbers "
            "reported that way.\n\n"
            + markdown_table(header, rows))


def entropy_section(paths: list[str]) -> str:
    table = pd.concat([ENTROPY_BY_POSITION.read(p) for p in paths], ignore_index=True)
    rows = []
    for model, group in table.groupby("model_name", sort=True):
        by_position = group.set_index("position")
        for t in ENTROPY_POSITIONS:
            if t in by_position.index:
                row = by_position.loc[t]
                rows.append([model, row["task"], t,
                             f"{row['mean_entropy']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]",
                             f"{100 * row['fraction_alive']:.0f}%"])
    return ("## Entropy by response position (Fig. 1)\n\nFrom `" + "`, `".join(paths) + "`: full-vocabulary entropy at "
            "tau = 1 (nats), mean over questions with a 95% CI; \"alive\" = responses still generating there.\n\n"
            + markdown_table(["model", "task", "position", "entropy (nats)", "alive"], rows))


def entropy_roles_section(paths: list[str]) -> str:
    table = pd.concat([ENTROPY_BY_ROLE.read(p) for p in paths], ignore_index=True)
    rows = [[row.model_name, row.role, f"{row.mean_entropy:.3f} [{row.ci_low:.3f}, {row.ci_high:.3f}]",
             int(row.num_tokens), int(row.num_questions)] for row in table.itertuples()]
    tasks = ", ".join(sorted(table["task"].unique()))
    return (f"### Entropy by token role (Fig. 1, {tasks})\n\nFrom `" + "`, `".join(paths) + "`: the tiny policies' "
            "responses, each token by its role in the response (its task's `response_roles`, ead.data.tasks); per "
            "question the mean over its tokens of that role, then the mean over questions with a 95% CI (nats).\n\n"
            + markdown_table(["model", "role", "entropy (nats)", "tokens", "questions"], rows))


def forking_section(paths: list[str]) -> str:
    table = pd.concat([FORKING.read(p) for p in paths], ignore_index=True)
    ks = sorted(table["k"].unique())
    rows = []
    for (model, metric, p), group in table.groupby(["model_name", "metric", "fork_point"], sort=True):
        by_k = group.set_index("k")
        rows.append([model, group["task"].iloc[0], metric.replace("@k", "@K"), int(p),
                     int(group["num_units"].iloc[0]),
                     *(percent_with_ci(by_k.loc[k]) if k in by_k.index else "" for k in ks)])
    return ("## Forking (Fig. 2)\n\nFrom `" + "`, `".join(paths) + "`: Pass@K (and Maj@K where the task's answers are "
            "unique) of continuations forked after p tokens (p = 0: normal sampling), percent with 95% CIs over "
            "references.\n\n"
            + markdown_table(["model", "task", "metric", "p", "references", *(f"K = {k}" for k in ks)],
                                                rows))


def majority_section(paths: list[str]) -> str:
    table = pd.concat([MAJORITY_SCALING.read(p) for p in paths], ignore_index=True)
    rows = []
    for (model, sampler), group in table.groupby(["model_name", "sampler"], sort=True):
        by_n = group.set_index("n").rename(columns={"maj_at_n": "value"})
        largest = int(by_n.index.max())
        rows.append([model, sampler, percent_with_ci(by_n.loc[1]), largest, percent_with_ci(by_n.loc[largest]),
                     f"{100 * group['no_answer_rate'].iloc[0]:.0f}%"])
    return ("## Majority voting (Fig. 9)\n\nFrom `" + "`, `".join(paths) + "`: Maj@N, percent with 95% CIs over "
            "questions.\n\n" + markdown_table(["model", "sampler", "Maj@1", "N", "Maj@N", "no answer"], rows))


def premises_section(paths: list[str]) -> str:
    table = pd.concat([PREMISE_VERDICTS.read(p) for p in paths], ignore_index=True)
    rows = []
    for row in table.itertuples():
        effect = "" if pd.isna(row.effect) else f"{row.effect:+.4f} [{row.ci_low:+.4f}, {row.ci_high:+.4f}]"
        mde = "" if "mde" not in table or pd.isna(row.mde) else f"{row.mde:.4f}"
        rows.append([Path(row.model).name, row.premise, row.part, effect, mde, f"**{row.verdict}**", row.rule])
    return ("## Premises (no RL)\n\nFrom `" + "`, `".join(paths) + "`: effects are paired differences against the "
            "baseline sampler (same problems, same random numbers) or shares, with 95% CIs; MDE = minimum detectable "
            "effect at 80% power. Verdicts by `ead.claims` (CI vs threshold).\n\n"
            + markdown_table(["policy", "premise", "part", "effect [95% CI]", "MDE", "verdict", "rule"], rows))


PROBE_METRICS = ("pass@1", "informative@8", "distinct_correct")


def premise_metrics_section(paths: list[str]) -> str:
    """Per probed sampler and step: paired differences to the baseline, and the failure shares by type."""
    table = pd.concat([PREMISES.read(p).assign(policy=Path(p).stem) for p in paths], ignore_index=True)
    rows = []
    for (policy, sampler, step), group in table.groupby(["policy", "sampler", "step"], sort=False):
        by_metric = group.set_index("metric")
        if "pass@1" not in by_metric.index:  # greedy accuracy: one row, no paired difference
            continue
        largest = max(int(m.split("@")[1]) for m in by_metric.index if m.startswith("pass@"))
        cells = [f"{by_metric.loc[m, 'diff']:+.3f} [{by_metric.loc[m, 'diff_ci_low']:+.3f}, "
                 f"{by_metric.loc[m, 'diff_ci_high']:+.3f}]" if m in by_metric.index else ""
                 for m in ("pass@1", f"pass@{largest}", *PROBE_METRICS[1:])]
        # the task's failure types by first mistake (countdown: strategy, arithmetic, rule; the strategy task:
        # strategy, execution, format), in the probe's order
        shares = [f"{metric.removeprefix('failure_share_')} {by_metric.loc[metric, 'value']:.2f}"
                  for metric in by_metric.index if metric.startswith("failure_share_")]
        ess = (f"{by_metric.loc['sequence_ess_fraction', 'value']:.3f}"
               if "sequence_ess_fraction" in by_metric.index else "")  # absent in tables of older probe runs
        rows.append([policy, sampler, int(step), f"{100 * by_metric.loc['pass@1', 'value']:.1f}", *cells,
                     " / ".join(shares), ess])
    baseline = table["baseline"].iloc[0]
    return (f"### Probed samplers, paired against {baseline}\n\nFrom `" + "`, `".join(paths) + "`: differences "
            f"to {baseline} on the same problems with the same random numbers, 95% CIs over problems.\n\n"
            + markdown_table(["policy", "sampler", "step", "Pass@1 (%)", "Pass@1 diff", "Pass@n diff",
                              "informative@8 diff", "distinct correct diff", "failure shares by first mistake",
                              "ESS share (sequence weights to tau 1)"],
                             rows))


def premise_groups_section(paths: list[str]) -> str:
    """The probe by value of a data column (ead.analyses.premises, premises.group_by): per value, sampler and step,
    Pass@1 and informative@k with their CIs and their paired differences to the baseline, in percent and points."""
    table = pd.concat([PREMISES_BY_GROUP.read(p).assign(policy=Path(p).stem.rsplit("_by_", 1)[0]) for p in paths],
                      ignore_index=True)
    group_by, baseline = table["group_by"].iloc[0], table["baseline"].iloc[0]
    metrics = list(dict.fromkeys(table["metric"]))  # pass@1, informative@k, in the probe's order
    samplers = list(dict.fromkeys(table["sampler"]))
    rows = []
    for (policy, group), rows_of_group in table.groupby(["policy", "group"], sort=True):
        indexed = rows_of_group.set_index(["sampler", "step", "metric"])
        for sampler in samplers:
            for step in sorted(rows_of_group.loc[rows_of_group["sampler"] == sampler, "step"].unique()):
                cells = []
                for metric in metrics:
                    row = indexed.loc[(sampler, step, metric)]
                    cells += [percent_with_ci(row), f"{100 * row['diff']:+.1f} [{100 * row['diff_ci_low']:+.1f}, "
                                                    f"{100 * row['diff_ci_high']:+.1f}]"]
                label = str(group).replace("|", "\\|")
                rows.append([policy, f"`{label}`", int(indexed.loc[(sampler, step, metrics[0]), "num_problems"]),
                             sampler, int(step), *cells])
    header = ["policy", group_by, "problems", "sampler", "step",
              *(f"{metric} {part}" for metric in metrics for part in ("(%)", f"- {baseline} (points)"))]
    return (f"### Probed samplers by {group_by}\n\nFrom `" + "`, `".join(paths) + "` (`ead.analyses.premises`, "
            f"config `premises.group_by`): on the problems of each value of the data table's `{group_by}` column, the "
            "mean with a 95% CI over problems (percent), and the paired difference to "
            f"{baseline} on the same problems with the same random numbers (points).\n\n"
            + markdown_table(header, rows))


def learns_section(paths: list[str]) -> str:
    """Premise G4, in points: does the G4 sampler's Pass@1 rise from step 0 to the last step (docs/rl-learns.md)? With
    a fixed training pool, the same rule on the pool's evaluation follows (its own table, labelled)."""
    table = pd.concat([RL_LEARNS.read(path) for path in paths], ignore_index=True)
    path = "`, `".join(paths)
    rows = [[f"{row.policy} / {row.algorithm} / n {row.n}", row.sampler, f"{row.metric}, step {row.step} - step 0"
             + (" (training pool)" if row.part.endswith("(training pool)") else ""),
             f"{100 * row.effect:+.1f} [{100 * row.ci_low:+.1f}, {100 * row.ci_high:+.1f}]",
             "" if pd.isna(row.mde) else f"{100 * row.mde:.1f}", f"{row.num_seeds} x {row.num_problems}",
             f"**{row.verdict}**", row.rule] for row in table.itertuples()]
    first = table.iloc[0]
    return (f"## Does RL learn here? (premise G4)\n\nFrom `{path}`: the gain of the G4 sampler's metric from step 0 "
            f"to the last evaluated step, in points, paired by seed and problem, 95% CI from the two-way bootstrap; "
            f"supported at >= {100 * first.min_effect:g} points with the CI's low end above "
            f"{100 * first.min_ci_low:g}. Read the sampler claims below only in a setting where it is supported."
            "\n\n" + markdown_table(["setting", "sampler", "metric", "gain, points [95% CI]", "MDE", "seeds x problems",
                                      "verdict", "rule"], rows))


def predicted(row) -> str:
    """A claims row's pre-registered prediction (verdict and signed effect), empty where it has none."""
    if not isinstance(row.predicted_verdict, str) or not row.predicted_verdict:
        return ""
    return f"{row.predicted_verdict} ({row.predicted_effect:+.4f})"


def claims_section(path: str) -> str:
    table = CLAIMS.read(path)
    rows = [[row.claim, row.figure, row.statement, f"{row.policy} / {row.algorithm} / n {row.n}",
             comparison_label(row),
             row.metric + (f" ({EVALUATED_WITH_LABELS[row.evaluated_with]})"
                           if row.evaluated_with in ("own_sampler", "train_pool") else "")
             + (" (curve mean)" if row.over == "curve" else ""),
             f"{row.effect:+.4f} [{row.ci_low:+.4f}, {row.ci_high:+.4f}]", f"{row.mde:.4f}",
             "" if pd.isna(row.smallest_effect) else f"{row.smallest_effect:g}", row.num_seeds,
             f"**{row.verdict}**", predicted(row), row.rl_learns if isinstance(row.rl_learns, str) else "",
             row.scope]
            for row in table.itertuples()]
    return (f"## Paper claims on the grid and the analyses\n\nFrom `{path}`: RL claims are paired effects (same seeds: "
            "same prompts and rollout random numbers; same evaluation problems and draws) at the last evaluated step "
            "or, marked (curve mean), averaged over the evaluated steps after step 0 (the area under the learning "
            "curve); RL learns: premise G4's verdict in the claim's setting (`results/premises/rl_learns.csv`: tau "
            "1.0's Pass@1 gain from step 0, docs/rl-learns.md), without which a sampler comparison says nothing; "
            "95% CI from the two-way bootstrap over seeds and problems (training metrics: over seeds); the claims of "
            "Figs. 1 and 2 (algorithm `none (no RL)`) are paired effects on one fixed model, 95% CI over questions "
            "(`ead.claims.analyses`); MDE = minimum detectable effect at 80% power; +/- = the smallest effect the "
            "claim declared it cares about; verdicts by `ead.claims` (CI vs 0; negligible: CI inside +/- that "
            "bound); predicted: the claim's pre-registered verdict and effect, where it has one."
            "\n\n"
            + markdown_table(["claim", "figure", "statement", "cells", "comparison", "metric", "effect [95% CI]", "MDE",
                              "+/-", "seeds", "verdict", "predicted", "RL learns", "what this scale can show"], rows))


def signal_section(path: str) -> str:
    """The grid's per-step training metrics by training phase (ead.rl.breakdown): one column per phase."""
    table = SIGNAL_BY_PHASE.read(path)
    phases = table[["phase", "first_step", "last_step"]].drop_duplicates().sort_values("phase")
    rows = []
    for (policy, algorithm, n, metric, sampler), group in table.groupby(["policy", "algorithm", "n", "metric",
                                                                         "sampler"], sort=True):
        by_phase = group.set_index("phase")
        rows.append([f"{policy} / {algorithm} / n {n}", metric, sampler, int(by_phase["num_seeds"].max()),
                     *(f"{by_phase.loc[p, 'value']:.3f} [{by_phase.loc[p, 'ci_low']:.3f}, "
                       f"{by_phase.loc[p, 'ci_high']:.3f}]" if p in by_phase.index else ""
                       for p in phases["phase"])])
    header = ["setting", "metric", "sampler", "seeds",
              *(f"steps {row.first_step}-{row.last_step}" for row in phases.itertuples())]
    return ("## RL training signal by phase\n\nFrom `" + path + "` (`ead.rl.breakdown`): per-step training metrics of "
            "the cells' `steps.csv` (`informative_group_fraction`: the share of the step's rollout groups with 0 < "
            "correct < n, the groups the update learns from; `solved_group_fraction`: with a correct rollout; "
            "`first_token_entropy`: the first response token's tau = 1 entropy), each seed's mean over the phase's "
            "steps, then the mean over seeds with a 95% bootstrap CI over seeds.\n\n" + markdown_table(header, rows))


def groups_section(path: str) -> str:
    """The evaluation by a data column's value (ead.rl.breakdown) at the first and the last evaluated step, then, where
    the breakdown has them, the failure types' shares (:func:`failures_by_group_section`)."""
    everything = EVAL_BY_GROUP.read(path)
    failures = everything["metric"].str.startswith(FAILURE_METRIC_PREFIX)
    table = everything[~failures]
    first, last = int(table["step"].min()), int(table["step"].max())
    group_by, metric = table["group_by"].iloc[0], table["metric"].iloc[0]
    rows = []
    for (policy, algorithm, n, sampler, group), rows_of_group in table.groupby(
            ["policy", "algorithm", "n", "sampler", "group"], sort=True):
        by_step = rows_of_group.set_index("step")
        label = str(group).replace("|", "\\|")
        rows.append([f"{policy} / {algorithm} / n {n}", sampler, f"`{label}`",
                     f"{int(by_step['num_seeds'].max())} x {int(by_step['num_problems'].max())}",
                     *(percent_with_ci(by_step.loc[step]) if step in by_step.index else "" for step in (first, last))])
    header = ["setting", "sampler", group_by, "seeds x problems", f"{metric} (%), step {first}",
              f"{metric} (%), step {last}"]
    return (f"## RL evaluation by {group_by}\n\nFrom `{path}` (`ead.rl.breakdown`): {metric} at the declared "
            f"evaluation temperature on the problems of each value of the data table's `{group_by}` column, mean over "
            "seeds and problems with a 95% CI from the two-way bootstrap (percent); every evaluated step is in the "
            "table, the first and the last here.\n\n" + markdown_table(header, rows)
            + (failures_by_group_section(path, everything[failures]) if failures.any() else ""))


def failures_by_group_section(path: str, table) -> str:
    """Each failure type's share of the evaluation's samples (``failure:<type>`` rows of the breakdown) by group, at
    the first evaluated step and the last (with its CI)."""
    first, last = int(table["step"].min()), int(table["step"].max())
    group_by = table["group_by"].iloc[0]
    kinds = sorted(table["metric"].unique())
    rows = []
    for (policy, algorithm, n, sampler, group), rows_of_group in table.groupby(
            ["policy", "algorithm", "n", "sampler", "group"], sort=True):
        cells = []
        for kind in kinds:
            by_step = rows_of_group[rows_of_group["metric"] == kind].set_index("step")
            start = f"{100 * by_step.loc[first, 'value']:.1f} -> " if first in by_step.index else ""
            cells.append(start + percent_with_ci(by_step.loc[last]) if last in by_step.index else "")
        label = str(group).replace("|", "\\|")
        rows.append([f"{policy} / {algorithm} / n {n}", sampler, f"`{label}`", *cells])
    header = ["setting", "sampler", group_by,
              *(f"{kind.removeprefix(FAILURE_METRIC_PREFIX)} (%), step {first} -> {last}" for kind in kinds)]
    return (f"\n\n### Where the samples fail, by {group_by}\n\nFrom `{path}`: the share of the evaluation's samples "
            "whose first mistake is each of the task's failure types (the strategy task's `strategy`: a wrong "
            "strategy at the fork; `execution`: the key's strategy carried out wrong), at the first evaluated step "
            "and the last, with the last's 95% CI from the two-way bootstrap (percent).\n\n"
            + markdown_table(header, rows))


#: the summary's first line, by the profile's ``results_meaning`` (workflow/schemas/config.schema.yaml)
RESULTS_MEANINGS = {
    "findings": "**What this run can show:** the profile `{profile}` is sized for its claims: each verdict below comes "
                "with its CI and MDE (`results/claims.csv`), and a null says little where the MDE is large.",
    "plumbing": "**A plumbing check, not a result:** the profile `{profile}` runs the DAG at toy sizes to check that "
                "every job and table works; no number, CI or verdict below means anything about EAD (the default "
                "profile's summary does).",
}
#: what is reproducible, as the fingerprints show it (docs/operations.md)
REPRODUCIBILITY = ("Every CPU job runs at the declared kernel level (`numerics.cpu_level`), so another x86 CPU with "
                   "AVX2 computes these numbers bit for bit (`python -m ead.fingerprint --compare` checks a run "
                   "against a reference); GPU runs do not (docs/operations.md, \"Reproducibility: what is bitwise, "
                   "what is not\").")


def render(profile: str, rerun: str, base_eval=(), eval_curves=None, entropy=(), forking=(), majority=(),
           premises=(), claims=None, premise_metrics=(), entropy_roles=(), rl_learns=(), signal_by_phase=None,
           eval_by_group=None, premises_by_group=(), meaning: str = "findings") -> str:
    """The summary of one run; ``rerun`` is the command that made it (and refreshes it), with its config files;
    ``meaning`` the profile's ``results_meaning`` (:data:`RESULTS_MEANINGS`), said first."""
    if meaning not in RESULTS_MEANINGS:
        raise ValueError(f"results_meaning must be one of {list(RESULTS_MEANINGS)}, got {meaning!r}")
    sections = [f"# Results of this run (profile: {profile})\n\n{RESULTS_MEANINGS[meaning].format(profile=profile)}"
                f"\n\nRendered by `python -m ead.summary` from the result tables; rerun `{rerun}` to refresh. "
                f"{REPRODUCIBILITY}"]
    if premises:
        sections.append(premises_section(list(premises)))
    if premise_metrics:
        sections.append(premise_metrics_section(list(premise_metrics)))
    if premises_by_group:
        sections.append(premise_groups_section(list(premises_by_group)))
    if rl_learns:
        sections.append(learns_section(list(rl_learns)))
    if claims:
        sections.append(claims_section(claims))
    if base_eval:
        sections.append(base_section(list(base_eval)))
    if eval_curves:
        sections.append(rl_section(eval_curves))
    if eval_by_group:
        sections.append(groups_section(eval_by_group))
    if signal_by_phase:
        sections.append(signal_section(signal_by_phase))
    if entropy:
        sections.append(entropy_section(list(entropy)))
    if entropy_roles:
        sections.append(entropy_roles_section(list(entropy_roles)))
    if forking:
        sections.append(forking_section(list(forking)))
    if majority:
        sections.append(majority_section(list(majority)))
    return "\n\n".join(sections) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True, help="config profile that produced the tables")
    parser.add_argument("--results-meaning", choices=sorted(RESULTS_MEANINGS), required=True,
                        help="the profile's results_meaning: findings, or plumbing (a toy-sized run)")
    parser.add_argument("--rerun", required=True,
                        help="the snakemake command that made the run, with its --configfile (how to refresh it)")
    # every table option is required and may list no file: the workflow always states what it passes
    parser.add_argument("--base-eval", nargs="*", required=True, help="results/eval/{policy}_base.csv tables")
    parser.add_argument("--eval-curves", nargs="*", required=True, help="results/rl/eval_curves.csv (at most one)")
    parser.add_argument("--entropy", nargs="*", required=True, help="entropy-by-position tables")
    parser.add_argument("--entropy-roles", nargs="*", required=True, help="entropy-by-role tables (tiny policies)")
    parser.add_argument("--forking", nargs="*", required=True, help="forking tables")
    parser.add_argument("--majority", nargs="*", required=True, help="Maj@N tables")
    parser.add_argument("--premises", nargs="*", required=True, help="premise verdict tables")
    parser.add_argument("--premise-metrics", nargs="*", required=True, help="premise probe metric tables")
    parser.add_argument("--rl-learns", nargs="*", required=True,
                        help="results/premises/rl_learns.csv, premise G4, and with a training pool its table too")
    parser.add_argument("--claims", nargs="*", required=True, help="results/claims.csv (at most one)")
    # given only where the config has rl.breakdown (the workflow leaves the flags out otherwise)
    parser.add_argument("--signal-by-phase", help="results/rl/signal_by_phase.csv (ead.rl.breakdown)")
    parser.add_argument("--eval-by-group", help="results/rl/eval_by_group.csv (ead.rl.breakdown)")
    # given only where the config has premises.group_by
    parser.add_argument("--premises-by-group", nargs="+",
                        help="results/premises/<policy>_by_<column>.csv (ead.analyses.premises)")
    parser.add_argument("--out", required=True, help="Markdown file to write")
    args = parser.parse_args(argv)
    for option in ("eval_curves", "claims"):
        if len(getattr(args, option)) > 1:
            parser.error(f"--{option.replace('_', '-')} takes at most one table, got {getattr(args, option)}")
    log = setup_logging("summary")
    text = render(args.profile, args.rerun, args.base_eval, (args.eval_curves or [None])[0], args.entropy, args.forking,
                  args.majority, args.premises, (args.claims or [None])[0], args.premise_metrics, args.entropy_roles,
                  args.rl_learns, args.signal_by_phase, args.eval_by_group,
                  args.premises_by_group or (), meaning=args.results_meaning)
    with atomic_path(args.out) as tmp:
        tmp.write_text(text)
    log.info("wrote %s", args.out)


if __name__ == "__main__":
    main()
