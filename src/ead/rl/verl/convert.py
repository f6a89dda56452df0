"""verl's metrics -> our result tables (``steps.csv``, ``eval_problems.csv``, ``eval.csv``), as declared by the results
contract (:mod:`ead.tables`) that the CPU backend also writes, so the aggregation and the figure rules read both
backends alike. This module depends on :mod:`ead.tables` and :mod:`ead.metrics` only (no torch, no transformers, no
CPU trainer).

Inputs of one run (verl 0.9.1):

* the file logger's JSONL (``trainer.logger=[..., file]``, path ``$VERL_FILE_LOGGER_PATH``; ``utils/tracking.py``
  ``FileLogger.log`` writes one line ``{"step": s, "data": {metric: value}}`` per ``logger.log`` call). The v1
  trainer logs the validation before training at step 0 on its own line and merges later validation metrics into
  the training step's line (``trainer/ppo/v1/trainer_base.py``, ``fit``). A restarted run truncates the file, so
  :mod:`ead.rl.verl.run` keeps earlier files as ``metrics.<n>.jsonl``; all are read, later lines win.
* the validation dumps (``trainer.validation_data_dir``/``{step}.jsonl``, ``trainer_base._write_generations``):
  one line per sampled response with ``input``, ``output``, ``score`` and our reward's extra keys (``acc``, ``pred``).

``steps.csv``: one row per training step with every training metric the aggregation reads
(:data:`ead.tables.TRAIN_METRICS`); verl metric -> column in :data:`STEP_COLUMNS`, columns without a verl
source (and TIS columns of runs without TIS) are empty; plus ``entropy_temperature`` (the tau verl's entropy was
computed at), the cell and its settings columns (:meth:`ead.settings.cell.CellSettings.table_columns`).

``eval_problems.csv``: from the dumps, per (step, problem): ``problem_id`` (a hash of the prompt text, the same in
every cell of a policy), ``num_samples``, ``num_correct`` and ``greedy_correct`` = NaN (verl validates with one
sampling setting per run, so there is no greedy pass; the aggregation then reports no greedy accuracy).

``eval.csv``: one row per (step, metric). Steps with a dump: :func:`ead.metrics.pass_worst_summary` of the per-problem
table (unbiased Pass@k / Worst@k with a bootstrap CI over problems, as the CPU evaluation); ``estimator =
unbiased``. Validated steps without a dump fall back to verl's own aggregates from the JSONL:
``val-core/<source>/acc/mean@N`` -> pass@1 and worst@1, ``.../acc/best@k/mean`` -> pass@k,
``val-aux/<source>/acc/worst@k/mean`` -> worst@k (verl's bootstrap with replacement, biased: see ead.metrics), no CI,
``estimator = verl_bootstrap``; those steps are absent from ``eval_problems.csv`` and so from the figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from ead.metrics import pass_worst_summary
from ead.tables import CELL_COLUMNS, EVAL, EVAL_PROBLEMS, PROBLEM_COLUMNS, STEPS, TIMEOUT_PROBLEM_COLUMN, TRAIN_METRICS

log = logging.getLogger(__name__)

__all__ = ["STEP_COLUMNS", "eval_problems_from_dumps", "eval_table", "eval_table_from_metrics", "read_file_logger",
           "steps_table"]

#: steps.csv column -> verl 0.9.1 metric name (source of each: see the module docstring of ead.rl.verl).
STEP_COLUMNS = {
    "reward_mean": "critic/score/mean",  # trainer/ppo/metric_utils.py compute_data_metrics
    "entropy": "actor/entropy",  # trainer/ppo/v1/trainer_base.py (agg of the old-log-prob pass entropy)
    "response_length": "response_length/mean",  # metric_utils.py compute_data_metrics
    "pg_clipfrac": "actor/pg_clipfrac",  # trainer/ppo/core_algos.py policy losses, prefixed "actor/"
    "ppo_kl": "actor/ppo_kl",
    "grad_norm": "actor/grad_norm",  # workers/engine_workers.py update_actor
    "tis_weight_mean": "rollout_corr/rollout_is_mean",  # trainer/ppo/rollout_corr_helper.py
    "tis_weight_max": "rollout_corr/rollout_is_max",
    "tis_capped_fraction": "rollout_corr/rollout_is_ratio_fraction_high",
    "tis_ess_fraction": "rollout_corr/rollout_is_eff_sample_size",
    "rollout_s": "timing_s/gen",  # metric_utils.py compute_timing_metrics (marked_timer names, v1 trainer_base)
    "grade_s": "timing_s/reward",
    "update_s": "timing_s/update_actor",
    "wall_time_s": "timing_s/step",
    "actor_lr": "actor/lr",  # the optimizer's lr as logged (the settings column `lr` is the configured one)
}
#: The share of sequences whose weight exceeds the cap (``tis_capped_sequence_fraction``) exists in verl 0.9.1 only
#: when the weight is a sequence's: with ``rollout_is=sequence``, ``compute_is_metrics`` (rollout_corr_helper.py) sets
#: ``rollout_is_ratio_fraction_high`` to the share of rows whose summed log-ratio exceeds log(threshold). With
#: ``rollout_is=token`` the same key counts tokens and no metric sums a sequence's log-ratios against the threshold
#: (``rollout_is_seq_fraction_high`` compares a sequence's mean token weight), so those cells leave the column empty.
SEQUENCE_CAPPED_METRIC = "rollout_corr/rollout_is_ratio_fraction_high"
EVAL_COLUMNS = ["step", "metric", "value", "ci_low", "ci_high", "estimator", "num_problems", "num_samples"]


def read_file_logger(paths) -> dict[int, dict]:
    """{step: merged metrics} from one or more file-logger JSONL files (in order; later values win).

    A torn last line (no trailing newline and not valid JSON: the trainer was killed while appending it) is dropped
    with a warning, as JSONL readers treat a crash mid-append; its step is then missing, so a resumed run redoes it.
    Any other line that is not a file-logger line fails, naming the file and the line.
    """
    records: dict[int, dict] = defaultdict(dict)
    for path in paths:
        text = Path(path).read_text()
        lines = text.splitlines()
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                step, data = int(entry["step"]), entry["data"]
            except json.JSONDecodeError as error:
                if number == len(lines) and not text.endswith("\n"):
                    log.warning("%s:%d: dropped a torn last line (no newline, not JSON: %s; the trainer stopped while "
                                "writing it): %r", path, number, error, line[:120])
                    continue
                raise ValueError(f"{path}:{number}: not a verl file-logger line ({error}): {line[:120]!r}") from None
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}:{number}: not a verl file-logger line ({error}): {line[:120]!r}") from None
            records[step].update(data)
    return dict(sorted(records.items()))


def _scalar(value):
    if isinstance(value, list):  # per-micro-batch lists if a metric was not reduced
        return float(np.mean(value)) if value else math.nan
    return math.nan if value is None else float(value)


def is_training_record(data: dict) -> bool:
    """A file-logger line of a training step (the step-0 validation line carries no training metric)."""
    return STEP_COLUMNS["reward_mean"] in data


def logged_training_steps(run_dir) -> list[int]:
    """The training steps the run's file-logger outputs (every attempt's) hold, in order."""
    files = metrics_files(run_dir)
    return [step for step, data in read_file_logger(files).items() if is_training_record(data)] if files else []


def steps_table(records: dict[int, dict], cell: dict, entropy_temperature: float = math.nan) -> pd.DataFrame:
    """One row per training step (lines carrying training metrics; the step-0 validation line has none), with a
    column for every training metric the aggregation reads (empty where verl has no such metric).

    ``tis_capped_sequence_fraction`` is filled in cells whose ``tis`` is ``sequence`` only
    (:data:`SEQUENCE_CAPPED_METRIC`).
    verl computes ``actor/entropy`` from the trainer's logits divided by ``rollout.temperature``: tau = 1 for EAD
    cells, but tau itself for fixed-tau cells trained at the behaviour temperature. ``entropy_temperature`` records
    which one (a column), so tau = 1 entropies are never silently mixed with entropies at tau.
    """
    columns = ["step", *dict.fromkeys([*TRAIN_METRICS, *STEP_COLUMNS, "tis_capped_sequence_fraction"])]
    sequence_level = cell.get("tis") == "sequence"  # the settings column `tis` (CellSettings.table_columns)
    rows = []
    for step, data in records.items():
        if not is_training_record(data):
            continue
        rows.append({"step": step, **{col: _scalar(data.get(name)) for col, name in STEP_COLUMNS.items()},
                     "tis_capped_sequence_fraction": (_scalar(data.get(SEQUENCE_CAPPED_METRIC)) if sequence_level
                                                      else math.nan)})
    table = pd.DataFrame(rows, columns=columns).astype({col: float for col in columns[1:]})
    table.insert(table.columns.get_loc("entropy") + 1, "entropy_temperature", float(entropy_temperature))
    return table.assign(**cell)


def problem_id(prompt: str) -> str:
    """A stable id of a validation prompt (its text is all a dump line names it by)."""
    return hashlib.sha1(prompt.encode()).hexdigest()[:16]


def eval_problems_from_dumps(validation_dir) -> pd.DataFrame:
    """Per (step, problem) counts from verl's validation dumps ({step}.jsonl); greedy_correct is NaN (no greedy)."""
    parts = []
    files = sorted(Path(validation_dir).glob("*.jsonl"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1)
    for path in files:
        if not path.stem.isdigit():
            continue
        try:
            samples = pd.read_json(path, lines=True)
        except ValueError as error:
            raise ValueError(f"{path}: verl's validation dump of step {path.stem} is damaged ({error}); the job was "
                             f"stopped while verl wrote it: rerun the cell's job, which resumes from before that step "
                             f"and validates it again") from None
        if samples.empty:
            continue
        correct_column = "acc" if "acc" in samples else "score"
        samples["correct"] = (samples[correct_column].astype(float) > 0.5).astype(int)
        # our reward's `timeout` key (ead.rl.verl.reward); NaN in dumps of runs made before it existed
        samples[TIMEOUT_PROBLEM_COLUMN] = samples["timeout"].astype(float) if "timeout" in samples else math.nan
        per_problem = (samples.groupby("input", sort=False)
                       .agg(num_samples=("correct", "size"), num_correct=("correct", "sum"),
                            **{TIMEOUT_PROBLEM_COLUMN: (TIMEOUT_PROBLEM_COLUMN, lambda v: v.sum(min_count=1))})
                       .reset_index())
        per_problem["problem_id"] = per_problem["input"].map(problem_id)
        if per_problem["problem_id"].duplicated().any():
            raise ValueError(f"{path}: two validation prompts share a problem id")
        # verl validates with one sampling setting, the declared evaluation temperature (rollout.val_kwargs)
        parts.append(per_problem.assign(step=int(path.stem), greedy_correct=math.nan, evaluated_with="eval_tau"))
    columns = [*PROBLEM_COLUMNS, TIMEOUT_PROBLEM_COLUMN]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def eval_table_from_problems(eval_problems: pd.DataFrame, ks: list[int], seed: int = 0) -> pd.DataFrame:
    """eval rows of the dumped steps: the CPU evaluation's summary (unbiased estimators, bootstrap CI)."""
    parts = []
    for step, group in eval_problems.groupby("step", sort=True):
        summary = pass_worst_summary(group, ks, seed=seed)
        parts.append(summary.assign(step=step, estimator="unbiased", num_problems=len(group),
                                    num_samples=int(group["num_samples"].min())))
    return pd.concat(parts, ignore_index=True)[EVAL_COLUMNS] if parts else pd.DataFrame(columns=EVAL_COLUMNS)


_VAL_KEY = re.compile(r"^val-(?:core|aux)/(?P<source>[^/]+)/acc/(?P<name>mean@\d+|best@\d+/mean|worst@\d+/mean)$")


def eval_table_from_metrics(records: dict[int, dict], ks: list[int]) -> pd.DataFrame:
    """eval rows from verl's aggregated validation metrics in the file logger (no CI; verl's estimators)."""
    rows = []
    for step, data in records.items():
        found: dict[str, float] = {}
        sources = set()
        for key, value in data.items():
            match = _VAL_KEY.match(key)
            if match:
                sources.add(match["source"])
                found[match["name"]] = _scalar(value)
        if not found:
            continue
        if len(sources) > 1:
            raise ValueError(f"step {step}: validation metrics of several data sources {sorted(sources)}; "
                             "the paper profile validates on one (MATH-500)")
        n = max(int(name.split("@")[1]) for name in found if name.startswith("mean@"))
        for k in ks:
            if k == 1:
                values = {"pass@1": found[f"mean@{n}"], "worst@1": found[f"mean@{n}"]}
            else:
                values = {f"pass@{k}": found.get(f"best@{k}/mean", math.nan),
                          f"worst@{k}": found.get(f"worst@{k}/mean", math.nan)}
            for metric, value in values.items():
                rows.append({"step": step, "metric": metric, "value": value, "ci_low": math.nan,
                             "ci_high": math.nan, "estimator": "verl_bootstrap", "num_problems": math.nan,
                             "num_samples": n})
    return pd.DataFrame(rows, columns=EVAL_COLUMNS)


def eval_table(records: dict[int, dict], eval_problems: pd.DataFrame, cell: dict, ks: list[int],
               seed: int = 0) -> pd.DataFrame:
    """eval.csv: dump-based rows where a step has a dump, verl's aggregates for the other validated steps."""
    from_dumps = eval_table_from_problems(eval_problems, ks, seed)
    from_metrics = eval_table_from_metrics(records, ks)
    from_metrics = from_metrics[~from_metrics["step"].isin(set(from_dumps["step"]))]
    parts = [part for part in (from_dumps, from_metrics) if not part.empty]
    table = (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=EVAL_COLUMNS))
    table = table.sort_values(["step", "metric"], kind="stable").reset_index(drop=True)
    return table.assign(evaluated_with="eval_tau", **cell)


def metrics_files(run_dir) -> list[Path]:
    """The run's file-logger outputs, oldest first (metrics.1.jsonl, metrics.2.jsonl, ..., metrics.jsonl)."""
    run_dir = Path(run_dir)
    older = sorted(run_dir.glob("metrics.*.jsonl"), key=lambda p: int(p.name.split(".")[1]))
    current = run_dir / "metrics.jsonl"
    return older + ([current] if current.exists() else [])


def convert_run(run_dir, cell: dict, ks: list[int], out_dir, seed: int = 0,
                entropy_temperature: float = math.nan, total_steps: int | None = None) -> None:
    """Write steps.csv, eval_problems.csv and eval.csv of one run into ``out_dir``.

    ``cell`` holds the columns every table carries: the cell (policy, algorithm, sampler, n, seed) and its settings
    (:meth:`ead.settings.cell.CellSettings.table_columns`). With ``total_steps``, a run whose logged steps are not
    exactly 1..total_steps (a partial run) is an error and nothing is written.
    """
    missing = [key for key in CELL_COLUMNS if key not in cell]
    if missing:
        raise ValueError(f"cell columns {missing} missing from {cell}")
    files = metrics_files(run_dir)
    if not files:
        raise FileNotFoundError(f"no verl file-logger output (metrics*.jsonl) in {run_dir}")
    records = read_file_logger(files)
    steps = steps_table(records, cell, entropy_temperature)
    if steps.empty:
        raise ValueError(f"{run_dir}: the file logger recorded no training step")
    if total_steps is not None and steps["step"].tolist() != list(range(1, total_steps + 1)):
        logged = steps["step"].tolist()
        raise ValueError(f"{run_dir}: a partial run: the file logger has training steps {logged[:3]}...{logged[-3:]} "
                         f"({len(logged)} steps), not 1..{total_steps} (rl.steps); no table written")
    validation = Path(run_dir) / "validation"
    problems = eval_problems_from_dumps(validation) if validation.is_dir() else pd.DataFrame(columns=PROBLEM_COLUMNS)
    evaluation = eval_table(records, problems, cell, ks, seed)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for table, contract in ((steps, STEPS), (problems.assign(**cell), EVAL_PROBLEMS), (evaluation, EVAL)):
        contract.write(table, out / f"{contract.name}.csv")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, help="directory with metrics*.jsonl and validation/")
    parser.add_argument("--cell", required=True,
                        help='JSON: {"policy", "algorithm", "sampler", "n", "seed"} and the settings columns')
    parser.add_argument("--k", type=int, nargs="+", required=True)
    parser.add_argument("--seed", type=int, required=True, help="bootstrap seed (rl.eval.seed)")
    parser.add_argument("--out-dir", required=True, help="where steps.csv, eval_problems.csv, eval.csv go")
    parser.add_argument("--entropy-temperature", type=float, default=math.nan,
                        help="the run's actor_rollout_ref.rollout.temperature (verl's entropy is at this tau)")
    args = parser.parse_args(argv)
    convert_run(args.run_dir, json.loads(args.cell), args.k, args.out_dir, seed=args.seed,
                entropy_temperature=args.entropy_temperature)


if __name__ == "__main__":
    main()
