"""Every result table, declared once (a :class:`ead.tables.schema.Table` each), and the columns they share:

* :data:`STEPS` (``steps.csv`` of an RL cell): one row per training step, every :data:`TRAIN_METRICS` column;
* :data:`EVAL_PROBLEMS` (``eval_problems.csv``): per (step, sampler of the evaluation, problem) the sample and
  correct counts and ``greedy_correct`` (NaN where not graded: the verl backend, and the own-sampler rows);
* :data:`EVAL_FAILURES` (``eval_failures.csv``, CPU backend): per (step, sampler of the evaluation, problem) its
  samples counted by first mistake (the task's ``Task.classify_failure``: ``ok`` or one of its failure types; no rows
  for a task that classifies none), from the same samples as eval_problems.csv's counts;
* :data:`EVAL` (``eval.csv``): per (step, sampler of the evaluation, metric) the mean over problems with a 95%
  bootstrap CI;
* :data:`TRAIN_CURVES`, :data:`EVAL_CURVES` (``results/rl/{train,eval}_curves.csv``): the grid over seeds;
* :data:`BASE_PROBLEMS`, :data:`BASE_SUMMARY`, :data:`BASE_FAILURES` (``results/eval/*``, ``results/rl/base/*``):
  the evaluation job's per-problem, summary and failure-count tables;
* :data:`SCHEDULE_TABLE`, :data:`ENTROPY_BY_POSITION` (and :data:`ENTROPY_BY_ROLE` for the tiny policies),
  :data:`FORKING`, :data:`MAJORITY_SCALING`: the tables of Figs. 3, 1, 2 and 9 (``results/schedule/``,
  ``results/analyses/<analysis>/<model>.csv``);
* :data:`ENTROPY_SAMPLES`, :data:`FORKING_SAMPLES`, :data:`MAJORITY_SAMPLES`: what the sampling analyses sampled
  and graded (``results/analyses/<analysis>/<model>_samples.parquet``), from which their summary tables are made;
* :data:`PREMISES`, :data:`PREMISE_VERDICTS`: the premise probe (``results/premises/<policy>{,_verdicts}.csv``);
  :data:`PREMISES_BY_GROUP` (``results/premises/<policy>_by_<column>.csv``): its Pass@1 and informative groups by
  value of a column of the task's data table (config ``premises.group_by``);
* :data:`RL_LEARNS` (``results/premises/rl_learns.csv``): premise G4, "RL learns here", read from the RL grid;
* :data:`PREMISE_TRADEOFF`, :data:`PREMISE_TRADEOFF_RHO`: G1's heat effect against G4's gain across policies and runs
  (``ead.claims.premise_tradeoff``, run by hand);
* :data:`PAIRED_CURVES` (``results/rl/paired_curves.csv``): each sampler minus a baseline at every evaluated step;
* :data:`SIGNAL_BY_PHASE`, :data:`EVAL_BY_GROUP` (``results/rl/{signal_by_phase,eval_by_group}.csv``): the grid
  broken down by training phase and by a column of the task's data table (config ``rl.breakdown``);
* :data:`SAMPLER_SCHEDULES` (``results/rl/schedule_shapes.csv``): tau by position and step of RL samplers;
* :data:`INFERENCE_ONLY`, :data:`INFERENCE_ONLY_HEADLINE` (``results/inference_only/``): samplers without RL;
* :data:`MEASURED_SCHEDULE` (``results/schedule/measured_<policy>.csv``): c and d0 sized from measurement;
* :data:`CLAIMS` (``results/claims.csv``): the paper's claims as paired comparisons with verdicts (the RL claims,
  and those of Figs. 1 and 2, first written to ``results/analyses/claims.csv`` by ``ead.claims.analyses``).

Every RL cell table carries :data:`CELL_COLUMNS` and the settings columns :data:`SETTINGS_COLUMNS`
(``ead.settings.cell.CellSettings.table_columns``).
"""

from __future__ import annotations

from typing import Callable

from ead.tables.schema import Bound, Coverage, Empty, Table

__all__ = [
    "ALL_TRAIN_METRICS", "BASE_FAILURES", "BASE_PROBLEMS", "BASE_SUMMARY", "CELL_COLUMNS", "CLAIMS",
    "CONFIG_COLUMNS", "COUNT_BOUNDS", "COUNT_COLUMNS", "ENTROPY_BY_POSITION", "ENTROPY_BY_ROLE", "ENTROPY_SAMPLES",
    "EVAL", "EVAL_CURVES", "FINGERPRINT", "EVAL_BY_GROUP", "EVAL_FAILURES", "EVAL_PROBLEMS", "EVALUATED_WITH",
    "FAILURE_COLUMNS", "FAILURE_METRIC_PREFIX", "FAILURE_OK", "FORKING", "FORKING_SAMPLES", "GROUP", "INFERENCE_ONLY",
    "INFERENCE_ONLY_HEADLINE", "LATER_TRAIN_METRICS", "MACHINE_SPREAD",
    "MAJORITY_SAMPLES", "MAJORITY_SCALING", "MEASURED_SCHEDULE",
    "PAIRED_CURVES", "PREMISE_TRADEOFF", "PREMISE_TRADEOFF_RHO", "PREMISE_VERDICTS", "PREMISES", "PREMISES_BY_GROUP",
    "PROBLEM_COLUMNS", "RL_LEARNS", "SAMPLER_SCHEDULES", "SCHEDULE_TABLE", "SETTINGS_COLUMNS", "SIGNAL_BY_PHASE",
    "STATUS_COLUMN", "STEPS", "TABLES", "TIMEOUT_PROBLEM_COLUMN", "TIMEOUT_STEP_COLUMN", "TIMING_COLUMNS",
    "TRAIN_CURVES", "TRAIN_METRICS", "evaluated_steps", "expected_eval_steps", "expected_steps",
]

#: The cell every RL table row belongs to.
CELL_COLUMNS = ("policy", "algorithm", "sampler", "n", "seed")
_CELL_KINDS = {"policy": "str", "algorithm": "str", "sampler": "str", "n": "int", "seed": "int"}
#: Settings columns of every RL cell table (``ead.settings.cell.CellSettings.table_columns``), in that order.
SETTINGS_COLUMNS = {"lr": "float", "tis": "str", "tis_cap": "float", "loss_mode": "str", "schedule_params": "str",
                    "fixed_tau_trains_at": "str", "eval_tau": "float", "prompts_per_step": "int",
                    "mini_batches": "int"}
#: Settings columns the aggregation carries into the curves.
CONFIG_COLUMNS = ["lr", "tis", "tis_cap", "loss_mode", "schedule_params", "fixed_tau_trains_at", "eval_tau"]
#: A curve is one (policy, algorithm, sampler, n) over seeds.
GROUP = ["policy", "algorithm", "sampler", "n"]
#: Columns that time a job (wall-clock seconds) rather than compute a result: they differ between any two runs.
TIMING_COLUMNS = ("rollout_s", "grade_s", "update_s", "wall_time_s")
#: Per-step training metrics of steps.csv that the aggregation turns into curves (both backends write every one;
#: NaN where a backend has no source).
TRAIN_METRICS = ["reward_mean", "entropy", "response_length", "pg_clipfrac", "ppo_kl", "grad_norm", "grad_norm_max",
                 "tis_weight_mean", "tis_weight_max", "tis_capped_fraction", "behaviour_target_log_ratio",
                 *TIMING_COLUMNS]
#: How a cell's evaluation rows were sampled: at the declared evaluation temperature (``rl.eval.tau``, the same for
#: every cell: what the figures and most claims compare) or with the cell's own sampler at that step (its EAD
#: schedule, or its fixed tau; the CPU backend, at the last step only), both on the held-out evaluation problems; or
#: (``train_pool``) at the declared temperature on the cell's fixed pool of training problems (``rl.train_pool``, CPU
#: backend, at the same steps as ``eval_tau``): how far the policy learned the prompts it trained on. Every held-out
#: reader (figures, claims, G4) selects ``eval_tau`` or ``own_sampler`` by name.
EVALUATED_WITH = ("eval_tau", "own_sampler", "train_pool")
#: The evaluations every cell holds, rows or not (the others exist only where configured: ``train_pool``).
_EVALUATED_ALWAYS = ("eval_tau", "own_sampler")
#: A per-problem evaluation's counts (the evaluation job's table, ``BASE_PROBLEMS``), in order.
COUNT_COLUMNS = ("problem_id", "num_samples", "num_correct", "greedy_correct")
#: A problem's counts: at least one sample, at most that many correct, a greedy answer right or wrong.
COUNT_BOUNDS = (Bound("num_samples", low=1), Bound("num_correct", low=0, high="num_samples"),
                Bound("greedy_correct", low=0, high=1))
#: eval_problems.csv's own columns, in order: the step and sampler of the evaluation, then its counts.
PROBLEM_COLUMNS = ("step", "evaluated_with", *COUNT_COLUMNS)
_PROBLEM_KINDS = {"step": "int", "evaluated_with": "str", "problem_id": "id", "num_samples": "int",
                  "num_correct": "int", "greedy_correct": "float"}
_ESTIMATE = {"metric": "str", "value": "float", "ci_low": "float", "ci_high": "float"}
_CELL_TABLE = {**_CELL_KINDS, **SETTINGS_COLUMNS}

#: Training metrics added after tables were first written, so optional in :data:`STEPS` (empty in older tables):
#: ``loss_token_fraction`` (CPU backend: the share of response tokens the loss kept), ``tis_ess_fraction`` (verl's
#: ``rollout_is_eff_sample_size`` of the step's truncated TIS weights, both backends) and ``sequence_ess_fraction``
#: (CPU backend: per rollout group, the ESS of the sequence weights pi_train / pi_behaviour as a share of n, averaged
#: over groups; what the premise probe reports before RL), ``tis_capped_sequence_fraction`` (the share of the step's
#: sequences whose importance weight exp(sum of log pi_train - log pi_behaviour) exceeds ``tis_cap``, the revised
#: paper's "fewer than 1% of sequences hit the truncation threshold"; CPU backend at every TIS level, verl backend from
#: ``rollout_corr/rollout_is_ratio_fraction_high`` in cells with sequence-level TIS and empty in the others, where
#: verl 0.9.1 computes no sequence weight: ead.rl.verl.convert).
#: ``informative_group_fraction`` and ``solved_group_fraction`` (CPU backend: the shares of the step's rollout groups
#: with 0 < correct < n, the groups GRPO learns from, and with a correct rollout) and ``first_token_entropy`` (CPU
#: backend: the tau = 1 entropy of the first response token, the strategy task's fork) say where a sampler's rollouts
#: give the update a signal.
LATER_TRAIN_METRICS = ["loss_token_fraction", "tis_ess_fraction", "sequence_ess_fraction",
                       "tis_capped_sequence_fraction", "informative_group_fraction", "solved_group_fraction",
                       "first_token_entropy"]
#: Every per-step training metric of steps.csv (a claim on one of these compares or thresholds per-seed step means).
ALL_TRAIN_METRICS = TRAIN_METRICS + LATER_TRAIN_METRICS
#: The grader's timeouts (``Grade.status == "timeout"``: an answer that used up its CPU budget twice and scored 0) as
#: counts: per step of an RL cell (``grader_timeouts``, its rollouts), per problem of an evaluation (``num_timeouts``,
#: its samples and greedy answer), per evaluation job (``grader_timeouts``); and per graded sample its status
#: (``grade_status``). Optional (NaN / empty in tables written before they existed, and where a backend does not
#: record them: verl's training steps); kind float so that such tables still read.
TIMEOUT_STEP_COLUMN = "grader_timeouts"
TIMEOUT_PROBLEM_COLUMN = "num_timeouts"
STATUS_COLUMN = "grade_status"
#: Completeness (:class:`Coverage`): a cell's steps.csv holds every step 1..rl.steps (:func:`expected_steps`); its
#: eval_problems.csv holds every evaluation step of each evaluation kind (:func:`expected_eval_steps`) and, in every
#: evaluation, every problem that an evaluation of the same policy and kind holds (the evaluation set; the training
#: pool's for ``train_pool`` rows).
#: Keys and finite columns (:attr:`Table.keys`, :attr:`Table.finite`): a cell's steps.csv has one row per step, and
#: every training metric is a finite number, except those a backend does not record, empty in the whole file
#: (:class:`Empty`); its eval_problems.csv one row per (step, evaluated_with, problem) with finite counts.
_NOT_RECORDED = Empty("where the backend does not record it (verl: grad_norm_max, "
                      "behaviour_target_log_ratio, loss_token_fraction, sequence_ess_fraction, grader_timeouts, "
                      "informative_group_fraction, solved_group_fraction, first_token_entropy; TIS "
                      "statistics of a run without TIS) or the table predates the column")
_ALWAYS_RECORDED = ("reward_mean", "entropy", "response_length")
STEPS = Table("steps", {"step": "int", **{metric: "float" for metric in TRAIN_METRICS}, **_CELL_TABLE},
              optional={**{metric: "float" for metric in LATER_TRAIN_METRICS}, TIMEOUT_STEP_COLUMN: "float"},
              coverage=(Coverage("step", CELL_COLUMNS),),
              keys=(*CELL_COLUMNS, "step"),
              finite=("step", *TRAIN_METRICS, *LATER_TRAIN_METRICS, TIMEOUT_STEP_COLUMN),
              empty={metric: _NOT_RECORDED for metric in (*TRAIN_METRICS, *LATER_TRAIN_METRICS, TIMEOUT_STEP_COLUMN)
                     if metric not in _ALWAYS_RECORDED})
_NOT_GRADED = Empty("in the rows of an evaluation without a greedy answer (own-sampler rows; every row of a verl "
                    "cell, which validates with one sampling setting)", rows=True)
EVAL_PROBLEMS = Table("eval_problems", {**_PROBLEM_KINDS, **_CELL_TABLE}, optional={TIMEOUT_PROBLEM_COLUMN: "float"},
                      coverage=(Coverage("step", (*CELL_COLUMNS, "evaluated_with"), ("evaluated_with",)),
                                Coverage("problem_id", (*CELL_COLUMNS, "evaluated_with", "step"),
                                         ("policy", "evaluated_with"))),
                      keys=(*CELL_COLUMNS, "step", "evaluated_with", "problem_id"),
                      finite=("step", "num_samples", "num_correct", "greedy_correct", TIMEOUT_PROBLEM_COLUMN),
                      empty={"greedy_correct": _NOT_GRADED, TIMEOUT_PROBLEM_COLUMN: _NOT_RECORDED},
                      bounds=COUNT_BOUNDS)

#: A per-problem evaluation's samples by first mistake (``ead.evaluation.failure_counts``), one row per (problem,
#: failure): ``failure`` is :data:`FAILURE_OK` (a solution) or one of the task's ``failure_types``, every one of them
#: present (zero counts included), so a problem's rows sum to its ``num_samples`` of the per-problem counts table.
FAILURE_OK = "ok"
#: The evaluation-by-group metric of a failure type (``ead.rl.breakdown``): ``failure:strategy`` is the share of the
#: samples whose first mistake was the strategy.
FAILURE_METRIC_PREFIX = "failure:"
FAILURE_COLUMNS = ("problem_id", "failure", "num_samples")
_FAILURE_KINDS = {"problem_id": "id", "failure": "str", "num_samples": "int"}
BASE_FAILURES = Table("base_failures", _FAILURE_KINDS, keys=("problem_id", "failure"), finite=("num_samples",),
                      bounds=(Bound("num_samples", low=0),))
EVAL_FAILURES = Table("eval_failures", {"step": "int", "evaluated_with": "str", **_FAILURE_KINDS, **_CELL_TABLE},
                      keys=(*CELL_COLUMNS, "step", "evaluated_with", "problem_id", "failure"),
                      finite=("step", "num_samples"), bounds=(Bound("num_samples", low=0),))


def expected_steps(steps: int) -> range:
    """The steps a cell's steps.csv must hold: 1..``steps`` (rl.steps)."""
    return range(1, steps + 1)


def evaluated_steps(steps: int, every: int) -> list[int]:
    """The RL steps at which a cell is evaluated at the declared temperature: 0 (the base evaluation), every
    ``every`` (rl.eval.every) and the last, ``steps`` (rl.steps). The CPU trainer evaluates at these, the completeness
    check expects them, and verl's ``trainer.test_freq = every`` with ``val_before_train`` validates at the same."""
    if every < 1:
        raise ValueError(f"rl.eval.every must be >= 1, got {every}")
    return sorted({0, *range(every, steps + 1, every), steps})


def expected_eval_steps(steps: int, every: int, own_sampler: bool) -> Callable[[dict], list[int]]:
    """The evaluation steps a cell's eval_problems.csv must hold, by evaluation kind: :func:`evaluated_steps` at the
    declared temperature, and on the training pool where a cell has pool rows (``train_pool``); with the cell's own
    sampler the last step (if ``own_sampler``)."""
    declared = evaluated_steps(steps, every)

    def of_group(values: dict) -> list[int]:
        if values["evaluated_with"] in ("eval_tau", "train_pool"):
            return declared
        return [steps] if own_sampler else []

    # a cell lacking a whole kind of evaluation it must hold is caught (train_pool: only where configured, so a cell
    # with pool rows must hold them at every evaluated step)
    of_group.every_group = {"evaluated_with": _EVALUATED_ALWAYS}
    return of_group
_VERL_AGGREGATE = Empty("in rows from verl's own validation aggregates (steps without a dump: no CI, and no value "
                        "for a k verl did not report)", rows=True)
EVAL = Table("eval", {"step": "int", "evaluated_with": "str", **_ESTIMATE, **_CELL_TABLE},
             optional={TIMEOUT_STEP_COLUMN: "float"}, keys=(*CELL_COLUMNS, "step", "evaluated_with", "metric"),
             finite=("step", "value", "ci_low", "ci_high", TIMEOUT_STEP_COLUMN),
             empty={"value": _VERL_AGGREGATE, "ci_low": _VERL_AGGREGATE, "ci_high": _VERL_AGGREGATE,
                    TIMEOUT_STEP_COLUMN: _NOT_RECORDED})
_CURVE = {**{column: _CELL_KINDS[column] for column in GROUP}, "step": "int", **_ESTIMATE, "num_seeds": "int",
          **{column: SETTINGS_COLUMNS[column] for column in CONFIG_COLUMNS}}
_ESTIMATE_FINITE = ("step", "value", "ci_low", "ci_high")
TRAIN_CURVES = Table("train_curves", _CURVE, keys=(*GROUP, "metric", "step"),
                     finite=(*_ESTIMATE_FINITE, "num_seeds"), extent=True)
EVAL_CURVES = Table("eval_curves", {**_CURVE, "evaluated_with": "str", "num_problems": "int"},
                    keys=(*GROUP, "evaluated_with", "metric", "step"),
                    finite=(*_ESTIMATE_FINITE, "num_seeds", "num_problems"), extent=True)
BASE_PROBLEMS = Table("base_problems", {column: _PROBLEM_KINDS[column] for column in COUNT_COLUMNS},
                      optional={TIMEOUT_PROBLEM_COLUMN: "float"}, keys=("problem_id",),
                      finite=("num_samples", "num_correct", "greedy_correct", TIMEOUT_PROBLEM_COLUMN),
                      empty={"greedy_correct": _NOT_GRADED, TIMEOUT_PROBLEM_COLUMN: _NOT_RECORDED},
                      bounds=COUNT_BOUNDS)
BASE_SUMMARY = Table("base_summary", {**_ESTIMATE, "step": "int", "n": "int", "num_problems": "int", "split": "str",
                                      "schedule_params": "str", "mean_response_tokens": "float"},
                     optional={TIMEOUT_STEP_COLUMN: "float"}, keys=("metric",),
                     finite=(*_ESTIMATE_FINITE, "num_problems", TIMEOUT_STEP_COLUMN),
                     empty={TIMEOUT_STEP_COLUMN: _NOT_RECORDED})

_CI = {"ci_low": "float", "ci_high": "float"}
SCHEDULE_TABLE = Table("schedule_table", {"decay_d": "float", "effective_decay": "float", "position": "int",
                                          "tau": "float", "tau_max": "float", "tau_min": "float", "warmup": "int",
                                          "decay_scale": "float", "step": "int"},
                       keys=("decay_d", "step", "position"), finite=("tau", "position", "step"))
_ANALYSIS = {"model_name": "str", "engine": "str", "task": "str"}
ENTROPY_BY_POSITION = Table("entropy_by_position", {
    "position": "int", "mean_entropy": "float", **_CI, "num_questions": "int", "num_responses": "int",
    "fraction_alive": "float", **_ANALYSIS}, keys=(*_ANALYSIS, "position"),
    finite=("position", "mean_entropy", "num_questions", "num_responses", "fraction_alive"))
#: Fig. 1 by token role (the tiny policies' responses, by their task's roles:
#: ``ead.analyses.entropy_by_position.token_roles``).
ENTROPY_BY_ROLE = Table("entropy_by_role", {"role": "str", "mean_entropy": "float", **_CI, "num_questions": "int",
                                            "num_tokens": "int", "responses_left_out": "int", **_ANALYSIS},
                        keys=(*_ANALYSIS, "role"), finite=("mean_entropy", "num_questions", "num_tokens"))
FORKING = Table("forking", {"metric": "str", "fork_point": "int", "k": "int", "value": "float", **_CI,
                            "num_units": "int", **_ANALYSIS},
                keys=(*_ANALYSIS, "metric", "fork_point", "k"), finite=("fork_point", "k", "value", "num_units"))
MAJORITY_SCALING = Table("majority_scaling", {
    "sampler": "str", "n": "int", "maj_at_n": "float", **_CI, "num_units": "int", "accuracy": "float",
    "no_answer_rate": "float", "mean_response_tokens": "float", "schedule_params": "str", **_ANALYSIS},
    keys=(*_ANALYSIS, "sampler", "n"), finite=("n", "maj_at_n", "num_units", "accuracy", "no_answer_rate"))
#: What the sampling analyses sampled, one row per response (graded ones with the grader's vote key, score and vote
#: group within their unit, ``ead.analyses.common.add_vote_groups``), plus the job's settings columns. Their summary
#: job (``ead.analyses.summary_tables``) reads these and writes the three tables above.
_GRADED = {"sample_id": "int", "num_tokens": "int", "predicted": "str", "correct": "float", "vote_group": "int"}
ENTROPY_SAMPLES = Table("entropy_by_position_samples", {
    "prompt_id": "id", "sample_id": "int", "num_tokens": "int", "mean_entropy": "float", "entropies": "array",
    **_ANALYSIS}, keys=(*_ANALYSIS, "prompt_id", "sample_id"), finite=("num_tokens",))
FORKING_SAMPLES = Table("forking_samples", {"question_id": "id", "unit": "str", "fork_point": "int", **_GRADED,
                                            **_ANALYSIS}, optional={STATUS_COLUMN: "str"},
                          keys=(*_ANALYSIS, "question_id", "unit", "fork_point", "sample_id"),
                          finite=("fork_point", "sample_id", "num_tokens"))
MAJORITY_SAMPLES = Table("majority_scaling_samples", {"sampler": "str", "schedule_params": "str", "prompt_id": "id",
                                                      **_GRADED, **_ANALYSIS}, optional={STATUS_COLUMN: "str"},
                           keys=(*_ANALYSIS, "sampler", "schedule_params", "prompt_id", "sample_id"),
                           finite=("sample_id", "num_tokens"))

#: The premise probe (``ead.analyses.premises``): per (sampler, step, metric) a value with its CI and, for mean-type
#: metrics, the paired difference to the baseline sampler with its CI and minimum detectable effect (NaN for
#: pooled ratios and greedy accuracy); and one row per premise part with its effect and verdict.
_PROBE = {"model": "str", "num_problems": "int", "n": "int", "baseline": "str", "seed": "int"}
PREMISES = Table("premises", {"sampler": "str", "step": "int", **_ESTIMATE, "diff": "float", "diff_ci_low": "float",
                              "diff_ci_high": "float", "mde": "float", **_PROBE},
                 keys=("model", "sampler", "step", "metric"), finite=("step", "value"))
_NO_EFFECT = Empty("in a row that combines a premise's parts (its overall verdict) or has nothing to measure (G2 where "
                   "the baseline failed on no sample)", rows=True)
PREMISE_VERDICTS = Table("premise_verdicts", {"premise": "str", "part": "str", "effect": "float", **_CI,
                                              "threshold": "float", "verdict": "str", "rule": "str", **_PROBE},
                         keys=("model", "premise", "part"), finite=("effect", *_CI),
                         empty={column: _NO_EFFECT for column in ("effect", *_CI)})
#: The probe by group (``ead.analyses.premises``, config ``premises.group_by``): per (sampler, step) and value
#: ``group`` of the data table's column ``group_by`` (the strategy task's ``key``), Pass@1 and informative@k (k: the
#: probe's ``informative_k``) as the mean over the group's problems with a 95% bootstrap CI over them, and the paired
#: difference to the baseline sampler on the same problems with its CI; ``num_problems`` is the group's problem
#: count (the other provenance columns are the probe's). ``group`` is an id (text, or a whole number where the
#: column's values are: a CSV reads them back as numbers).
PREMISES_BY_GROUP = Table("premises_by_group", {"sampler": "str", "step": "int", "group_by": "str", "group": "id",
                                                **_ESTIMATE, "diff": "float", "diff_ci_low": "float",
                                                "diff_ci_high": "float", **_PROBE},
                          keys=("model", "sampler", "step", "group_by", "group", "metric"),
                          finite=("step", "value", "ci_low", "ci_high", "diff", "diff_ci_low", "diff_ci_high",
                                  "num_problems"),
                          bounds=(Bound("num_problems", low=1),))

#: The claims table (``ead.claims.rl``): one row per paper claim tested on the grid, a paired effect with its CI,
#: standard error, minimum detectable effect and verdict; ``baseline_algorithm`` (RL rows; empty for the analyses'
#: rows and in tables written before it existed) names the baseline cell's algorithm; ``threshold`` (threshold claims
#: on one cell, ``ead.claims.rl``: effect = the cell's metric minus it; empty in paired rows) the claimed bound;
#: ``best_of`` and ``selection`` (claims against the best of several candidate baselines, ``ead.claims.rl``; empty in
#: other rows) the candidates (space-separated) and the selection rule with each candidate's score on the selection
#: problems, the chosen one being ``baseline``;
#: ``over`` (evaluation rows of RL claims): ``last`` (the metric at the last evaluated step) or ``curve`` (its mean
#: over the evaluated steps after step 0, the area under the learning curve); ``rl_learns`` (RL rows): the verdict of
#: premise G4 (:data:`RL_LEARNS`) in the claim's (policy, algorithm, n), or ``untested`` where the grid has no G4
#: row for it. Both are empty in the analyses' rows and in tables written before they existed. ``smallest_effect``: the
#: smallest effect the claim declared it cares about (metric units), against which a CI inside +/- it reads
#: ``negligible`` (:func:`ead.verdicts.decide`); empty in threshold claims' rows. ``predicted_verdict`` and
#: ``predicted_effect``: the claim's pre-registered prediction (config ``claims[i].prediction``), empty where none.
CLAIMS = Table("claims", {"claim": "str", "figure": "str", "statement": "str", "policy": "str", "algorithm": "str",
                          "n": "int", "sampler": "str", "baseline": "str",
                          "metric": "str", "evaluated_with": "str",
                          "step": "int",
                          "effect": "float", **_CI, "standard_error": "float", "mde": "float", "num_seeds": "int",
                          "num_units": "int", "smallest_effect": "float", "verdict": "str", "rule": "str",
                          "scope": "str"},
               optional={"baseline_algorithm": "str", "threshold": "float", "best_of": "str", "selection": "str",
                         "over": "str", "rl_learns": "str", "predicted_verdict": "str", "predicted_effect": "float"},
               keys=("claim", "policy"),
               finite=("effect", "ci_low", "ci_high", "standard_error", "mde", "num_units", "smallest_effect"),
               empty={"mde": Empty("in a row of fewer than two units (no spread to size it from)", rows=True),
                      "smallest_effect": Empty("in a threshold claim's row (its threshold is the size that "
                                               "matters)", rows=True)})

#: Premise G4, "RL learns here" (``ead.claims.rl_learns``, ``results/premises/rl_learns.csv``): per (policy, algorithm,
#: n) of the grid with cells of the G4 sampler (tau 1.0), the metric (Pass@1) at the last evaluated step minus step 0,
#: paired by seed and problem, with its two-way bootstrap CI, standard error and MDE, the thresholds it is read against
#: (``min_effect``: the mean; ``min_ci_low``: the CI's lower bound) and the verdict with its rule. A sibling of
#: :data:`PREMISE_VERDICTS` (same premise/part/effect/CI/verdict/rule columns), since G1-G3 are measured per policy
#: before RL and G4 on the RL grid.
RL_LEARNS = Table("rl_learns", {"premise": "str", "part": "str", "policy": "str", "algorithm": "str", "n": "int",
                                "sampler": "str", "metric": "str", "step": "int", "effect": "float", **_CI,
                                "standard_error": "float", "mde": "float", "min_effect": "float",
                                "min_ci_low": "float", "num_seeds": "int", "num_problems": "int", "verdict": "str",
                                "rule": "str"},
                  keys=("policy", "algorithm", "n", "premise"),
                  finite=("step", "effect", "ci_low", "ci_high", "min_effect", "min_ci_low", "num_seeds",
                          "num_problems"))

#: G1's heat effect against G4's gain across policies (``ead.claims.premise_tradeoff``): per (source run, policy) the
#: premise probe's G1 heat half (hot sampler's Pass@n minus tau 1.0's, with its CI and verdict) and the run's G4 row of
#: one (algorithm, n, sampler) (gain, CI, verdict, step, seeds, problems), with each side's average rank among the rows;
#: and one row of Spearman's rho between the two over those rows, with its permutation p-value and what it covers.
PREMISE_TRADEOFF = Table("premise_tradeoff", {
    "source": "str", "policy": "str", "heat_sampler": "str", "heat_metric": "str", "heat_effect": "float",
    "heat_ci_low": "float", "heat_ci_high": "float", "heat_verdict": "str", "algorithm": "str", "n": "int",
    "sampler": "str", "gain_metric": "str", "gain_step": "int", "gain_effect": "float", "gain_ci_low": "float",
    "gain_ci_high": "float", "gain_verdict": "str", "num_seeds": "int", "num_problems": "int", "heat_rank": "float",
    "gain_rank": "float"}, keys=("source", "policy"),
    finite=("heat_effect", "heat_ci_low", "heat_ci_high", "gain_effect", "gain_ci_low", "gain_ci_high", "heat_rank",
            "gain_rank"))
PREMISE_TRADEOFF_RHO = Table("premise_tradeoff_rho", {
    "x": "str", "y": "str", "rho": "float", "num_points": "int", "num_policies": "int", "p_value": "float",
    "p_method": "str", "points": "str"}, keys=("x", "y"), finite=("num_points", "num_policies"))

#: Paired-difference curves (``ead.rl.paired``): per (policy, algorithm, n, evaluated_with, sampler, baseline, step,
#: metric) the mean over (seed, problem) of sampler - baseline with its two-way bootstrap CI, standard error and
#: minimum detectable effect (80% power): a claims row's estimator at every evaluated step; the figures' paired panels.
PAIRED_CURVES = Table("paired_curves", {"policy": "str", "algorithm": "str", "n": "int", "evaluated_with": "str",
                                        "sampler": "str", "baseline": "str", "step": "int", "metric": "str",
                                        "effect": "float", **_CI, "standard_error": "float", "mde": "float",
                                        "num_seeds": "int", "num_problems": "int"},
                      keys=("policy", "algorithm", "n", "evaluated_with", "sampler", "baseline", "metric", "step"),
                      finite=("step", "effect", "ci_low", "ci_high", "standard_error", "mde", "num_seeds",
                              "num_problems"),
                      empty={column: Empty("where the bootstrap drew once (no spread: rl.paired --resamples 1)")
                             for column in ("standard_error", "mde")}, extent=True)

#: The grid broken down (``ead.rl.breakdown``, config ``rl.breakdown``): per (policy, algorithm, sampler, n), training
#: ``phase`` (steps ``first_step``..``last_step``) and per-step training ``metric`` of steps.csv, the mean over seeds of
#: each seed's mean over the phase's steps, with a 95% bootstrap CI over seeds; and per evaluated ``step`` and value
#: ``group`` of the data table's column ``group_by``, the evaluation ``metric`` at the declared temperature over the
#: group's problems, mean over seeds and problems with a two-way bootstrap CI.
_BREAKDOWN = {column: _CELL_KINDS[column] for column in GROUP}
SIGNAL_BY_PHASE = Table("signal_by_phase", {**_BREAKDOWN, "metric": "str", "phase": "int", "first_step": "int",
                                            "last_step": "int", "value": "float", **_CI, "num_seeds": "int"},
                        keys=(*GROUP, "metric", "phase"),
                        finite=("phase", "first_step", "last_step", "value", "ci_low", "ci_high", "num_seeds"),
                        bounds=(Bound("num_seeds", low=1), Bound("first_step", low=1, high="last_step")))
EVAL_BY_GROUP = Table("eval_by_group", {**_BREAKDOWN, "step": "int", "group_by": "str", "group": "id",
                                        "metric": "str", "value": "float", **_CI, "num_seeds": "int",
                                        "num_problems": "int"},
                      keys=(*GROUP, "group_by", "group", "metric", "step"),
                      finite=("step", "value", "ci_low", "ci_high", "num_seeds", "num_problems"),
                      bounds=(Bound("num_seeds", low=1), Bound("num_problems", low=1)))

#: The temperature each RL sampler gives by (step, position) (``ead.analyses.sampler_schedules``), with its schedule
#: document: the top row of the schedule-shapes figure.
SAMPLER_SCHEDULES = Table("sampler_schedules", {"sampler": "str", "step": "int", "position": "int", "tau": "float",
                                                "schedule_params": "str"},
                          keys=("sampler", "step", "position"), finite=("step", "position", "tau"))

#: Inference-only sampler comparison (``ead.analyses.inference_only``): per (model, split, sampler, metric) the mean
#: over problems with its CI, and the paired difference to ``baseline`` with its CI, SE and MDE; and the headline:
#: per (model, metric) the best EAD minus the best fixed temperature on the report split, chosen on the selection split.
_PAIRED_DIFF = {"diff": "float", "diff_ci_low": "float", "diff_ci_high": "float", "standard_error": "float",
                "mde": "float", "num_problems": "int"}
INFERENCE_ONLY = Table("inference_only", {"model": "str", "split": "str", "sampler": "str", "family": "str",
                                          "metric": "str", "value": "float", **_CI, "baseline": "str", **_PAIRED_DIFF},
                       keys=("model", "split", "sampler", "metric"), finite=("value", "ci_low", "ci_high"))
INFERENCE_ONLY_HEADLINE = Table("inference_only_headline", {
    "model": "str", "metric": "str", "select_split": "str", "report_split": "str", "select_metric": "str",
    "ead_best": "str", "fixed_best": "str", "effect": "float", **_CI, "standard_error": "float", "mde": "float",
    "num_problems": "int", "verdict": "str", "rule": "str"}, keys=("model", "metric"),
    finite=("effect", "ci_low", "ci_high"))

#: The schedule sized from measurement (``ead.analyses.measured_schedule``): per (schedule: measured or hand_sized,
#: position) tau at step 0, each schedule's c (``warmup``) and d0, and the measurements and rule behind them.
MEASURED_SCHEDULE = Table("measured_schedule", {
    "schedule": "str", "policy": "str", "position": "int", "tau": "float", "warmup": "int", "d0": "float",
    "tau_max": "float", "tau_min": "float", "decay_scale": "float", "entropy_fraction": "float", "window": "int",
    "length_quantile": "float", "floor_fraction": "float", "rule": "str", "early_median_entropy": "float",
    "length_at_quantile": "float", "floor_position": "float", "num_responses": "int"},
    keys=("schedule", "policy", "position"), finite=("position", "tau", "warmup", "d0"))

#: Every declared table by name.
#: ``results/fingerprint.csv`` (``ead.fingerprint``): a digest of what each stage of the run computed, one row per
#: file, in the DAG's order of stages; equal digests are equal numbers, bit for bit.
FINGERPRINT = Table("fingerprint", {"stage": "str", "path": "str", "digest": "str", "rows": "int"}, keys=("path",))
#: ``ead.claims.machine_spread``: per claim row, its effect in runs that differ only in their CPU kernels, the spread
#: beside the first run's CI half-width, every run's verdict, and whether the verdict holds in all (``robust``).
MACHINE_SPREAD = Table("machine_spread", {"claim": "str", "policy": "str", "algorithm": "str", "n": "int",
                                          "sampler": "str", "baseline": "str", "metric": "str",
                                          "evaluated_with": "str", "step": "int", "runs": "str", "effects": "str",
                                          "effect_spread": "float", "ci_half_width": "float",
                                          "spread_share": "float", "verdicts": "str", "robust": "str"},
                       keys=("claim", "policy", "algorithm", "n", "sampler", "baseline", "metric", "evaluated_with",
                             "step"),
                       finite=("effect_spread", "ci_half_width"))

TABLES = {table.name: table for table in (STEPS, EVAL_PROBLEMS, EVAL_FAILURES, EVAL, TRAIN_CURVES, EVAL_CURVES,
                                          BASE_PROBLEMS, BASE_SUMMARY, BASE_FAILURES, SCHEDULE_TABLE,
                                          ENTROPY_BY_POSITION, ENTROPY_BY_ROLE, FORKING,
                                          MAJORITY_SCALING, ENTROPY_SAMPLES, FORKING_SAMPLES, MAJORITY_SAMPLES,
                                          PREMISES, PREMISE_VERDICTS, PREMISES_BY_GROUP, RL_LEARNS, PREMISE_TRADEOFF,
                                          PREMISE_TRADEOFF_RHO, CLAIMS, PAIRED_CURVES, SIGNAL_BY_PHASE, EVAL_BY_GROUP,
                                          SAMPLER_SCHEDULES, INFERENCE_ONLY, INFERENCE_ONLY_HEADLINE,
                                          MEASURED_SCHEDULE, FINGERPRINT, MACHINE_SPREAD)}
