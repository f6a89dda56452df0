"""Inference-time scaling with majority voting (paper Figure 9): Maj@N of EAD vs fixed-temperature sampling.

For a seeded random subset of ``--num-questions`` questions, sample ``--samples`` (M) chain-of-thought responses
per question with each schedule in ``--schedules`` (JSON specs, e.g. the EAD block of the config and fixed
tau 0.6 / 1.0), grade them with the task's grader, and compute Maj@N for N = 1..M exactly: the mean vote
correctness over all N-subsets drawn without replacement (voting rule and estimator in :mod:`ead.metrics`:
math-verify-equivalent answers are one vote, unanswered samples cast none, ties go to the earliest sample).
The benchmark value per (schedule, N) is the mean over questions with a 95% bootstrap CI over questions.

Tables: ``--samples-out`` (parquet, one row per graded sample), ``--out`` (csv, one row per (schedule, N):
maj_at_n, ci_low, ci_high, num_units, accuracy (= Maj@1, mean sample accuracy), no_answer_rate, settings).

Run:
    python -m ead.analyses.majority_scaling --model results/models/smollm2-135m-instruct \
        --data results/data/gsm8k.parquet --task gsm8k --num-questions 16 --samples 8 --max-new-tokens 160 \
        --schedules '{"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 25}' '{"name": "fixed", "tau": 0.6}' \
        --samples-out results/analyses/majority_scaling/smollm2-135m-instruct_samples.parquet \
        --out results/analyses/majority_scaling/smollm2-135m-instruct.csv
On a GPU with vLLM (the paper profile), add ``--engine vllm --dtype bfloat16`` and the hub model's directory.
"""

from __future__ import annotations

import argparse
import json

import pandas as pd

from ead.analyses.common import (add_common_arguments, analysis_settings, cot_prompt, grade_samples, maj_curves,
                                 open_analysis_engine, schedule_label, select_questions, set_threads, summarise)
from ead.io import read_table, setup_logging, write_table
from ead.rewards import add_grader_argument, configure_grader
from ead.schedule import build_schedule
from ead.tables import MAJORITY_SCALING


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser, question_seed=0, batch_size=64)  # configs/config.yaml analyses.majority
    parser.add_argument("--samples", type=int, required=True, help="M samples per question and schedule")
    parser.add_argument("--schedules", nargs="+", required=True, help="schedule specs (JSON), one per sampler")
    parser.add_argument("--max-solution-steps", type=int, default=None,
                        help="only questions whose reference solution has at most this many lines (GSM8K)")
    add_grader_argument(parser)
    args = parser.parse_args(argv)
    configure_grader(args.grader)  # the config's grader: section, as every grading job
    log = setup_logging("majority_scaling")
    set_threads(args.threads)
    schedules = [build_schedule(json.loads(spec)) for spec in args.schedules]
    labels = [schedule_label(s) for s in schedules]
    if len(set(labels)) != len(labels):
        raise SystemExit(f"--schedules repeat a sampler: {labels}")

    questions = select_questions(read_table(args.data), args.num_questions, args.question_seed, args.data,
                                 max_solution_steps=args.max_solution_steps, subjects=args.subjects)
    reference_of = dict(zip(questions["id"], questions["answer"]))
    prompts = [cot_prompt(q, args.task) for q in questions["question"]]
    engine = open_analysis_engine(args)
    frames = []
    for schedule, label in zip(schedules, labels):
        log.info("sampling %d x %d with %s", len(questions), args.samples, label)
        out = engine.sample(questions["id"].tolist(), prompts, schedule, n=args.samples,
                            max_new_tokens=args.max_new_tokens, seed=args.seed,
                            chat_template=args.prompt_format == "chat")
        grade_samples(out, [reference_of[p] for p in out["prompt_id"]], args.task)
        frames.append(out.assign(sampler=label))
    engine.close()
    samples = pd.concat(frames, ignore_index=True)

    per_unit = maj_curves(samples, ["sampler", "prompt_id"], args.task)
    table = summarise(per_unit, ["sampler", "n"], "maj_at_n", resamples=args.bootstrap, seed=args.seed)
    by_sampler = samples.groupby("sampler").agg(accuracy=("correct", "mean"),
                                                no_answer_rate=("predicted", lambda k: float(k.isna().mean())),
                                                mean_response_tokens=("num_tokens", "mean"))
    table = table.merge(by_sampler, left_on="sampler", right_index=True)
    params = {label: json.dumps(s.to_dict(), sort_keys=True) for s, label in zip(schedules, labels)}
    table["schedule_params"] = table["sampler"].map(params)
    settings = analysis_settings(
        args, num_questions=len(questions), samples_per_question=args.samples, max_new_tokens=args.max_new_tokens,
        max_solution_steps=args.max_solution_steps if args.max_solution_steps is not None else -1,
        question_seed=args.question_seed, sampling_seed=args.seed)
    keep = ["sampler", "schedule_params", "prompt_id", "sample_id", "text", "num_tokens", "finished", "predicted",
            "correct"]
    write_table(samples[keep].assign(**settings), args.samples_out)
    MAJORITY_SCALING.write(table.rename(columns={"value": "maj_at_n"}).assign(**settings), args.out)
    for label in labels:
        rows = table[table["sampler"] == label].set_index("n")
        log.info("%s: Maj@1 %.3f, Maj@%d %.3f [%.3f, %.3f]", label, rows.loc[1, "value"], args.samples,
                 rows.loc[args.samples, "value"], rows.loc[args.samples, "ci_low"], rows.loc[args.samples, "ci_high"])


if __name__ == "__main__":
    main()
