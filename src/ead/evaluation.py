"""Evaluate a model on a held-out split: Pass@k / Worst@k from n sampled completions, and greedy accuracy.

Sampling is at a declared schedule (default: fixed tau = 1.0), never greedy-only, so Pass@16 and Worst@16 mean
what they say; greedy accuracy is reported as its own metric. Grading uses the task's own grader
(:mod:`ead.rewards`), the same function that gives the RL reward. Outputs tidy tables:

* per problem: problem_id, num_samples, num_correct, greedy_correct, and the settings;
* summary: one row per metric (greedy_accuracy, pass@k, worst@k) with value and a 95% bootstrap CI over
  problems, and the settings (model, data, split, task, n, schedule, seed, step);
* with ``--failures``, per problem its sampled completions counted by first mistake (:func:`failure_counts`: the
  task's ``Task.classify_failure``; no rows for a task that classifies none).

Run:
    python -m ead.evaluation --model results/models/tiny_policy --data results/data/countdown.parquet \
        --split val --task countdown --n 16 --k 1 16 --max-new-tokens 64 --seed 0 \
        --per-problem results/eval/tiny_policy_val_problems.csv --out results/eval/tiny_policy_val.csv \
        --failures results/eval/tiny_policy_val_failures.csv
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ead.data.tasks import get_task
from ead.io import read_table, setup_logging
from ead.metrics import pass_worst_summary
from ead.models import load_hf_model
from ead.numerics import pin_job
from ead.rewards import add_grader_argument, configure_grader, grade_many, report_grades
from ead.samplers.engines import sample_hf
from ead.schedule import FixedTemperature, Schedule, build_schedule
from ead.tables import (
    BASE_FAILURES,
    BASE_PROBLEMS,
    BASE_SUMMARY,
    FAILURE_COLUMNS,
    FAILURE_OK,
    TIMEOUT_PROBLEM_COLUMN,
    TIMEOUT_STEP_COLUMN,
)

__all__ = ["evaluate", "failure_counts", "first_problems_of_split"]


def first_problems_of_split(table: pd.DataFrame, split: str | None, limit: int | None, source: str) -> pd.DataFrame:
    """Rows of ``split`` (all rows if None), first ``limit`` of them; errors name the file and the split."""
    if split is not None:
        if "split" not in table.columns:
            raise SystemExit(f"{source}: no 'split' column, cannot select split {split!r}")
        table = table[table["split"] == split]
        if table.empty:
            raise SystemExit(f"{source}: no rows with split == {split!r}")
    return table.head(limit) if limit else table


def failure_counts(problem_ids: list, texts: list[str], references: list[str], task: str,
                   order: list | None = None) -> pd.DataFrame:
    """Completions counted by first mistake, one row per (problem, failure) (:data:`ead.tables.FAILURE_COLUMNS`):
    ``failure`` is ``ok`` (a solution) or one of the task's ``failure_types`` (``Task.classify_failure`` of each
    completion's text against its problem's reference), every one of them for every problem (zero counts included),
    problems in ``order`` (default: first appearance); no rows for a task that classifies none."""
    spec = get_task(task)
    if not spec.probed:
        return pd.DataFrame(columns=list(FAILURE_COLUMNS)).astype({"num_samples": int})
    if not len(problem_ids) == len(texts) == len(references):
        raise ValueError(f"failure_counts: {len(problem_ids)} problem ids, {len(texts)} texts and {len(references)} "
                         "references; one of each per completion")
    classified = pd.DataFrame({"problem_id": problem_ids,
                               "failure": [spec.classify_failure(text, reference)
                                           for text, reference in zip(texts, references)]})
    failures = [FAILURE_OK, *spec.failure_types]
    unknown = sorted(set(classified["failure"]) - set(failures))
    if unknown:
        raise ValueError(f"task {task!r}: classify_failure returned {unknown}, not one of {failures}")
    order = list(dict.fromkeys(problem_ids)) if order is None else list(order)
    unordered = sorted(set(problem_ids) - set(order), key=str)
    if unordered:
        raise ValueError(f"failure_counts: order lacks problems {unordered[:3]} of the completions "
                         f"({len(unordered)} in all); it must hold every problem id")
    counts = (pd.crosstab(classified["problem_id"], classified["failure"])
              .reindex(index=order, columns=failures, fill_value=0).fillna(0).astype(int))
    return (counts.rename_axis(index="problem_id", columns="failure").stack().rename("num_samples")
            .reset_index()[list(FAILURE_COLUMNS)])


def evaluate(model, tokenizer, problems: pd.DataFrame, task: str, *, n: int, ks: list[int], schedule: Schedule,
             max_new_tokens: int, seed: int, batch_size: int, chat_template: bool = False,
             greedy: bool = True, step: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(per-problem table, summary table, failure counts: :func:`failure_counts` of the sampled completions, not the
    greedy ones) for ``problems`` (columns id, question, answer)."""
    ids, prompts, references = problems["id"].tolist(), problems["question"].tolist(), problems["answer"].tolist()
    options = dict(max_new_tokens=max_new_tokens, seed=seed, batch_size=batch_size, chat_template=chat_template,
                   step=step)
    sampled = sample_hf(model, tokenizer, ids, prompts, schedule, n=n, **options)
    reference_of = dict(zip(ids, references))
    sample_references = [reference_of[p] for p in sampled["prompt_id"]]
    grades = grade_many(sampled["text"].tolist(), sample_references, task)
    sampled["correct"] = [g.score for g in grades]
    sampled[TIMEOUT_PROBLEM_COLUMN] = [float(g.status == "timeout") for g in grades]
    failures = failure_counts(sampled["prompt_id"].tolist(), sampled["text"].tolist(), sample_references, task,
                              order=ids)
    per_problem = (sampled.groupby("prompt_id", sort=False)
                   .agg(num_samples=("correct", "size"), num_correct=("correct", "sum"),
                        **{TIMEOUT_PROBLEM_COLUMN: (TIMEOUT_PROBLEM_COLUMN, "sum")})
                   .reindex(ids).rename_axis("problem_id").reset_index())
    if greedy:
        decoded = sample_hf(model, tokenizer, ids, prompts, FixedTemperature(1.0), n=1, greedy=True, **options)
        greedy_grades = grade_many(decoded["text"].tolist(), references, task)
        per_problem["greedy_correct"] = [g.score for g in greedy_grades]
        per_problem[TIMEOUT_PROBLEM_COLUMN] += [float(g.status == "timeout") for g in greedy_grades]
        grades = grades + greedy_grades
    # a timeout scores 0 like a wrong answer: count it, log it, and fail past grader.max_timeout_share
    report_grades(grades, f"evaluation with {schedule.name} at step {step}")
    summary = pass_worst_summary(per_problem, ks, seed=seed)
    settings = {"task": task, "num_problems": len(problems), "n": n, "schedule": schedule.name,
                "schedule_params": json.dumps(schedule.to_dict(), sort_keys=True), "seed": seed, "step": step,
                "max_new_tokens": max_new_tokens, "mean_response_tokens": float(sampled["num_tokens"].mean()),
                TIMEOUT_STEP_COLUMN: float(per_problem[TIMEOUT_PROBLEM_COLUMN].sum())}
    return per_problem.assign(**settings), summary.assign(**settings), failures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True, help="problems table with id, question, answer (and split)")
    parser.add_argument("--split", required=True, help="evaluate only rows of this split")
    parser.add_argument("--task", required=True, help="grader task (countdown, math500, gsm8k, mmlu, ...)")
    parser.add_argument("--limit", type=int, required=True, help="first N problems only")
    parser.add_argument("--n", type=int, required=True, help="sampled completions per problem (n >= max k)")
    parser.add_argument("--k", type=int, nargs="+", required=True)
    parser.add_argument("--schedule", required=True,
                        help='evaluation sampler (JSON), e.g. {"name": "fixed", "tau": 1.0}')
    parser.add_argument("--max-new-tokens", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--batch-size", type=int, required=True, help="sequences per sampling batch")
    parser.add_argument("--chat-template", action="store_true")
    parser.add_argument("--per-problem", required=True, help="per-problem table path")
    parser.add_argument("--out", required=True, help="summary table path")
    parser.add_argument("--failures", help="also write the completions counted by first mistake here")
    parser.add_argument("--threads", type=int, required=True, help="torch threads (fixed: float sums depend on it)")
    add_grader_argument(parser)
    args = parser.parse_args(argv)
    configure_grader(args.grader)

    pin_job(args.threads)
    log = setup_logging("evaluation")
    if max(args.k) > args.n:
        raise SystemExit(f"--n {args.n} is smaller than the largest k {max(args.k)}; unbiased Pass@k needs n >= k")
    problems = first_problems_of_split(read_table(args.data), args.split, args.limit, args.data)
    model, tokenizer = load_hf_model(args.model)
    per_problem, summary, failures = evaluate(
        model, tokenizer, problems, args.task, n=args.n, ks=args.k, schedule=build_schedule(json.loads(args.schedule)),
        max_new_tokens=args.max_new_tokens, seed=args.seed, batch_size=args.batch_size,
        chat_template=args.chat_template)
    extra = {"model": args.model, "data": args.data, "split": args.split or "all"}
    BASE_PROBLEMS.write(per_problem.assign(**extra), args.per_problem)
    BASE_SUMMARY.write(summary.assign(**extra), args.out)
    if args.failures:
        BASE_FAILURES.write(failures, args.failures)
    for row in summary.itertuples():
        log.info("%s = %.4f [%.4f, %.4f]", row.metric, row.value, row.ci_low, row.ci_high)


if __name__ == "__main__":
    main()
