"""Inference-time scaling with majority voting (paper Figure 9): Maj@N of EAD vs fixed-temperature sampling.

Samples M responses per question with each schedule of ``--schedules`` (JSON specs), grades them, and computes Maj@N
for N = 1..M exactly (the mean vote correctness over all N-subsets; voting rule and estimator in :mod:`ead.metrics`),
then the mean over questions with a 95% bootstrap CI over questions. Tables: :data:`ead.tables.MAJORITY_SAMPLES`
(``--samples-out``) and :data:`ead.tables.MAJORITY_SCALING` (``--out``, or later by
``python -m ead.analyses.summary_tables``, so a new bootstrap setting never resamples).

Run:
    python -m ead.analyses.majority_scaling --model results/models/smollm2-135m-instruct \
        --data results/data/gsm8k.parquet --task gsm8k --num-questions 16 --samples 8 --max-new-tokens 160 \
        --engine hf --dtype float32 --threads 1 --question-seed 0 --seed 0 --batch-size 64 \
        --schedules '{"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 25}' '{"name": "fixed", "tau": 0.6}' \
        --samples-out results/analyses/majority_scaling/smollm2-135m-instruct_samples.parquet \
        --bootstrap 1000 --out results/analyses/majority_scaling/smollm2-135m-instruct.csv
On a GPU with vLLM (the paper profile), give ``--engine vllm --dtype bfloat16`` and the hub model's directory.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ead.analyses.common import (
    add_common_arguments,
    add_vote_groups,
    analysis_settings,
    bootstrap_cell_means,
    grade_samples,
    load_questions,
    maj_curves,
    open_analysis_engine,
    sample_settings,
    schedule_label,
    summary_requested,
)
from ead.data.tasks import get_task
from ead.io import setup_logging
from ead.numerics import pin_job
from ead.rewards import add_grader_argument, configure_grader
from ead.schedule import build_schedule
from ead.tables import MAJORITY_SAMPLES, MAJORITY_SCALING

#: The per-sample columns of the samples table; every other column is a setting of the run.
SAMPLE_COLUMNS = ["sampler", "schedule_params", "prompt_id", "sample_id", "text", "num_tokens", "finished", "predicted",
                  "correct", "vote_group"]
#: The unit whose samples vote together: one question under one sampler.
UNIT = ["sampler", "prompt_id"]


def write_summary(samples: pd.DataFrame, out, *, resamples: int, seed: int, log) -> pd.DataFrame:
    """The Fig. 9 table of a samples table (:data:`ead.tables.MAJORITY_SAMPLES`): Maj@N per (sampler, N) over the
    questions with bootstrap CIs, each sampler's accuracy, no-answer rate and response length, and the run's settings
    columns, written to ``out`` (:data:`ead.tables.MAJORITY_SCALING`)."""
    per_unit = maj_curves(samples, UNIT)
    table = bootstrap_cell_means(per_unit, ["sampler", "n"], "maj_at_n", resamples=resamples, seed=seed)
    by_sampler = samples.groupby("sampler").agg(accuracy=("correct", "mean"),
                                                no_answer_rate=("predicted", lambda k: float(k.isna().mean())),
                                                mean_response_tokens=("num_tokens", "mean"),
                                                schedule_params=("schedule_params", "first"))
    table = table.merge(by_sampler, left_on="sampler", right_index=True)
    table = table.rename(columns={"value": "maj_at_n"}).assign(**sample_settings(samples, SAMPLE_COLUMNS))
    MAJORITY_SCALING.write(table, out)
    for label, rows in table.groupby("sampler", sort=False):
        rows = rows.set_index("n")
        last = rows.index.max()
        log.info("%s: Maj@1 %.3f, Maj@%d %.3f [%.3f, %.3f]", label, rows.loc[1, "maj_at_n"], last,
                 rows.loc[last, "maj_at_n"], rows.loc[last, "ci_low"], rows.loc[last, "ci_high"])
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--samples", type=int, required=True, help="M samples per question and schedule")
    parser.add_argument("--schedules", nargs="+", required=True, help="schedule specs (JSON), one per sampler")
    parser.add_argument("--max-solution-steps", type=int, default=None,
                        help="only questions whose reference solution has at most this many lines (GSM8K)")
    add_grader_argument(parser)
    args = parser.parse_args(argv)
    with_summary = summary_requested(parser, args)
    if not get_task(args.task).answers_unique:
        parser.error(f"--task {args.task}: Maj@N votes on answers, and {args.task}'s correct responses do not share "
                     "one answer (countdown: every valid chain boxes the target)")
    configure_grader(args.grader)  # the config's grader: section, as every grading job
    log = setup_logging("majority_scaling")
    pin_job(args.threads)
    schedules = [build_schedule(json.loads(spec)) for spec in args.schedules]
    labels = [schedule_label(s) for s in schedules]
    if len(set(labels)) != len(labels):
        raise SystemExit(f"--schedules repeat a sampler: {labels}")

    questions, prompts = load_questions(args, max_solution_steps=args.max_solution_steps)
    reference_of = dict(zip(questions["id"], questions["answer"]))
    engine = open_analysis_engine(args)
    frames = []
    for schedule, label in zip(schedules, labels):
        log.info("sampling %d x %d with %s", len(questions), args.samples, label)
        out = engine.sample(questions["id"].tolist(), prompts, schedule, n=args.samples,
                            max_new_tokens=args.max_new_tokens, seed=args.seed,
                            chat_template=args.prompt_format == "chat")
        grade_samples(out, [reference_of[p] for p in out["prompt_id"]], args.task, f"Maj@N samples with {label}")
        frames.append(out.assign(sampler=label))
    engine.close()
    samples = add_vote_groups(pd.concat(frames, ignore_index=True), UNIT, args.task)
    settings = analysis_settings(
        args, num_questions=len(questions), samples_per_question=args.samples, max_new_tokens=args.max_new_tokens,
        max_solution_steps=args.max_solution_steps if args.max_solution_steps is not None else -1,
        question_seed=args.question_seed, sampling_seed=args.seed)
    samples = samples[SAMPLE_COLUMNS].assign(**settings)
    MAJORITY_SAMPLES.write(samples, args.samples_out)
    for label, rows in samples.groupby("sampler", sort=False):
        log.info("%s: %d samples, accuracy %.3f", label, len(rows), rows["correct"].mean())
    if with_summary:
        write_summary(samples, args.out, resamples=args.bootstrap, seed=args.seed, log=log)


if __name__ == "__main__":
    main()
