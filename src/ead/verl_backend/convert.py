"""verl's metrics -> our result tables (``steps.csv``, ``eval.csv``), the same tables the CPU backend writes.

Inputs of one run (verl 0.9.1):

* the file logger's JSONL (``trainer.logger=[..., file]``, path ``$VERL_FILE_LOGGER_PATH``; ``utils/tracking.py``
  ``FileLogger.log`` writes one line ``{"step": s, "data": {metric: value}}`` per ``logger.log`` call). The v1
  trainer logs the validation before training at step 0 on its own line and merges later validation metrics into
  the training step's line (``trainer/ppo/v1/trainer_base.py``, ``fit``). A restarted run truncates the file, so
  :mod:`ead.verl_backend.run` keeps earlier files as ``metrics.<n>.jsonl``; all are read, later lines win.
* the validation dumps (``trainer.validation_data_dir``/``{step}.jsonl``, ``trainer_base._write_generations``):
  one line per sampled response with ``input``, ``output``, ``score`` and our reward's extra keys (``acc``, ``pred``).

``steps.csv``: one row per training step; verl metric -> column in :data:`STEP_COLUMNS` (missing -> empty, e.g.
TIS columns of runs without TIS), plus ``entropy_temperature`` (the tau verl's entropy was computed at).

``eval.csv``: one row per (step, metric). From the dumps (preferred), per problem (grouped by prompt) c correct of
n samples -> unbiased Pass@k / Worst@k (:mod:`ead.metrics`) with a bootstrap CI over problems, exactly as the CPU
evaluation; ``estimator = unbiased``. Without dumps, verl's own aggregates from the JSONL:
``val-core/<source>/acc/mean@N`` -> pass@1 and worst@1, ``.../acc/best@k/mean`` -> pass@k,
``val-aux/<source>/acc/worst@k/mean`` -> worst@k (verl's bootstrap with replacement, biased: see ead.metrics), no CI,
``estimator = verl_bootstrap``. Greedy accuracy is not produced: verl validates with one sampling setting per run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from ead.io import write_table
from ead.metrics import bootstrap_mean_ci, pass_at_k, worst_at_k

__all__ = ["STEP_COLUMNS", "eval_table", "eval_table_from_dumps", "eval_table_from_metrics", "read_file_logger",
           "steps_table"]

#: steps.csv column -> verl 0.9.1 metric name (source of each: see the module docstring of ead.verl_backend).
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
    "wall_time_s": "timing_s/step",  # metric_utils.py compute_timing_metrics
    "lr": "actor/lr",
}
CELL_COLUMNS = ["policy", "algorithm", "sampler", "n", "seed"]
EVAL_COLUMNS = ["step", "metric", "value", "ci_low", "ci_high", "estimator", "num_problems", "num_samples"]


def read_file_logger(paths) -> dict[int, dict]:
    """{step: merged metrics} from one or more file-logger JSONL files (in order; later values win)."""
    records: dict[int, dict] = defaultdict(dict)
    for path in paths:
        for number, line in enumerate(Path(path).read_text().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                step, data = int(entry["step"]), entry["data"]
            except (ValueError, KeyError, TypeError) as error:
                raise ValueError(f"{path}:{number}: not a verl file-logger line ({error}): {line[:120]!r}") from None
            records[step].update(data)
    return dict(sorted(records.items()))


def _scalar(value):
    if isinstance(value, list):  # per-micro-batch lists if a metric was not reduced
        return float(np.mean(value)) if value else math.nan
    return math.nan if value is None else float(value)


def steps_table(records: dict[int, dict], cell: dict, entropy_temperature: float = math.nan) -> pd.DataFrame:
    """One row per training step (lines carrying training metrics; the step-0 validation line has none).

    verl computes ``actor/entropy`` from the trainer's logits divided by ``rollout.temperature``: tau = 1 for EAD
    cells, but tau itself for fixed-tau cells trained at the behaviour temperature. ``entropy_temperature`` records
    which one (a column), so tau = 1 entropies are never silently mixed with entropies at tau.
    """
    rows = []
    for step, data in records.items():
        if STEP_COLUMNS["reward_mean"] not in data:
            continue
        rows.append({"step": step, **{col: _scalar(data.get(name)) for col, name in STEP_COLUMNS.items()}})
    table = pd.DataFrame(rows, columns=["step", *STEP_COLUMNS])
    table.insert(table.columns.get_loc("entropy") + 1, "entropy_temperature", float(entropy_temperature))
    return table.assign(**{key: cell[key] for key in CELL_COLUMNS})


def _eval_rows(step: int, per_problem: pd.DataFrame, ks: list[int], seed: int) -> list[dict]:
    counts = per_problem["num_samples"].to_numpy(), per_problem["num_correct"].to_numpy()
    rows = []
    for k in ks:
        for name, fn in (("pass", pass_at_k), ("worst", worst_at_k)):
            value, low, high = bootstrap_mean_ci(fn(*counts, k), seed=seed)
            rows.append({"step": step, "metric": f"{name}@{k}", "value": value, "ci_low": low, "ci_high": high,
                         "estimator": "unbiased", "num_problems": len(per_problem),
                         "num_samples": int(counts[0].min())})
    return rows


def eval_table_from_dumps(validation_dir, ks: list[int], seed: int = 0) -> pd.DataFrame:
    """eval rows from verl's validation dumps ({step}.jsonl), with unbiased estimators and bootstrap CIs."""
    rows = []
    files = sorted(Path(validation_dir).glob("*.jsonl"), key=lambda p: int(p.stem) if p.stem.isdigit() else -1)
    for path in files:
        if not path.stem.isdigit():
            continue
        samples = pd.read_json(path, lines=True)
        if samples.empty:
            continue
        correct_column = "acc" if "acc" in samples else "score"
        samples["correct"] = (samples[correct_column].astype(float) > 0.5).astype(int)
        per_problem = samples.groupby("input", sort=False)["correct"].agg(num_samples="size", num_correct="sum")
        rows.extend(_eval_rows(int(path.stem), per_problem, ks, seed))
    return pd.DataFrame(rows, columns=EVAL_COLUMNS)


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


def eval_table(records: dict[int, dict], cell: dict, ks: list[int], validation_dir=None, seed: int = 0):
    """eval.csv: dump-based rows where a step has a dump, verl's aggregates for the other validated steps."""
    from_dumps = (eval_table_from_dumps(validation_dir, ks, seed) if validation_dir and Path(validation_dir).is_dir()
                  else pd.DataFrame(columns=EVAL_COLUMNS))
    from_metrics = eval_table_from_metrics(records, ks)
    from_metrics = from_metrics[~from_metrics["step"].isin(set(from_dumps["step"]))]
    parts = [part for part in (from_dumps, from_metrics) if not part.empty]
    table = (pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=EVAL_COLUMNS))
    table = table.sort_values(["step", "metric"], kind="stable").reset_index(drop=True)
    return table.assign(**{key: cell[key] for key in CELL_COLUMNS})


def metrics_files(run_dir) -> list[Path]:
    """The run's file-logger outputs, oldest first (metrics.1.jsonl, metrics.2.jsonl, ..., metrics.jsonl)."""
    run_dir = Path(run_dir)
    older = sorted(run_dir.glob("metrics.*.jsonl"), key=lambda p: int(p.name.split(".")[1]))
    current = run_dir / "metrics.jsonl"
    return older + ([current] if current.exists() else [])


def convert_run(run_dir, cell: dict, ks: list[int], steps_out, eval_out, seed: int = 0,
                entropy_temperature: float = math.nan) -> None:
    files = metrics_files(run_dir)
    if not files:
        raise FileNotFoundError(f"no verl file-logger output (metrics*.jsonl) in {run_dir}")
    records = read_file_logger(files)
    steps = steps_table(records, cell, entropy_temperature)
    if steps.empty:
        raise ValueError(f"{run_dir}: the file logger recorded no training step")
    evaluation = eval_table(records, cell, ks, Path(run_dir) / "validation", seed)
    for table, out in ((steps, steps_out), (evaluation, eval_out)):
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        write_table(table, out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run-dir", required=True, help="directory with metrics*.jsonl and validation/")
    parser.add_argument("--cell", required=True, help='JSON: {"policy", "algorithm", "sampler", "n", "seed"}')
    parser.add_argument("--k", type=int, nargs="+", required=True)
    parser.add_argument("--steps-out", required=True)
    parser.add_argument("--eval-out", required=True)
    parser.add_argument("--entropy-temperature", type=float, default=math.nan,
                        help="the run's actor_rollout_ref.rollout.temperature (verl's entropy is at this tau)")
    args = parser.parse_args(argv)
    convert_run(args.run_dir, json.loads(args.cell), args.k, args.steps_out, args.eval_out,
                entropy_temperature=args.entropy_temperature)


if __name__ == "__main__":
    main()
