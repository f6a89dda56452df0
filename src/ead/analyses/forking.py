"""Forking (paper Figure 2): is branching early in a response worth more than branching late?

Per question (a seeded subset): sample a pool of reference responses at ``--tau``; pick one reference per question
(``--prefix-selection random``, or ``per_answer``: one per distinct voted answer, the authors' rule, which
over-represents wrong prefixes), among those longer than the largest fork point; for every fork point p keep its first
p tokens and sample ``--continuations`` continuations (every response gets the same total budget,
``--max-new-tokens``); grade prefix + continuation. The summary (:func:`write_summary`) reports Pass@K per
(reference, p), and Maj@K where the task's answers are unique (not countdown), as means over references with 95%
bootstrap CIs. Tables: :data:`ead.tables.FORKING_SAMPLES` (``--samples-out``) and :data:`ead.tables.FORKING`
(``--out``, or later by ``python -m ead.analyses.summary_tables``, so a new bootstrap or K never resamples).

Run:
    python -m ead.analyses.forking --model results/models/smollm2-135m-instruct --data results/data/mmlu.parquet \
        --task mmlu --num-questions 12 --reference-samples 2 --fork-points 0 16 32 64 --continuations 8 \
        --engine hf --dtype float32 --threads 1 --question-seed 1 --seed 0 --batch-size 64 --tau 1.0 \
        --prefix-selection random \
        --max-new-tokens 128 --samples-out results/analyses/forking/smollm2-135m-instruct_samples.parquet \
        --k 1 3 8 --bootstrap 1000 --out results/analyses/forking/smollm2-135m-instruct.csv
On a GPU with vLLM (the paper profile), give ``--engine vllm --dtype bfloat16`` and the hub model's directory.
"""

from __future__ import annotations

import argparse

import numpy as np
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
    summary_requested,
    vote_equivalence,
)
from ead.data.tasks import get_task
from ead.io import setup_logging
from ead.metrics import pass_at_k, vote_groups
from ead.numerics import pin_job
from ead.rewards import add_grader_argument, configure_grader
from ead.samplers.engines import encode_prompts
from ead.schedule import FixedTemperature
from ead.tables import FORKING, FORKING_SAMPLES

PREFIX_SELECTIONS = ("random", "per_answer")
#: The per-continuation columns of the samples table; every other column is a setting of the run.
SAMPLE_COLUMNS = ["question_id", "unit", "fork_point", "sample_id", "text", "num_tokens", "finished", "predicted",
                  "correct", "vote_group"]
#: The unit whose continuations vote together: one reference's prefix of p tokens.
UNIT = ["fork_point", "unit"]


def select_references(pool: pd.DataFrame, rule: str, min_tokens: int, seed: int, task: str) -> pd.DataFrame:
    """Rows of the graded reference ``pool`` whose prefixes are forked, by ``rule`` (see the module docstring).

    ``pool`` has prompt_id, sample_id, num_tokens, predicted. Only rows with num_tokens > ``min_tokens`` qualify.
    """
    if rule not in PREFIX_SELECTIONS:
        raise ValueError(f"Unknown prefix selection {rule!r}; known: {list(PREFIX_SELECTIONS)}")
    rng = np.random.default_rng(seed)
    chosen = []
    for _, group in pool.sort_values(["prompt_id", "sample_id"]).groupby("prompt_id", sort=True):
        eligible = group[group["num_tokens"] > min_tokens]
        if eligible.empty:
            continue
        if rule == "random":
            chosen.append(eligible.iloc[[int(rng.integers(len(eligible)))]])
        else:  # one per distinct answer (vote group), the first of each; unanswered references form one group
            keys = [None if pd.isna(k) else k for k in eligible["predicted"]]
            groups = vote_groups(keys, vote_equivalence(task))
            groups = np.where(groups < 0, groups.max() + 1, groups)
            chosen.append(eligible.iloc[np.unique(groups, return_index=True)[1]])
    return pd.concat(chosen, ignore_index=True) if chosen else pool.iloc[:0]


def per_unit_metrics(samples: pd.DataFrame, k: list[int]) -> pd.DataFrame:
    """One row per (fork point, reference, metric, K) of a samples table (:data:`ead.tables.FORKING_SAMPLES`): the
    value over that prefix's continuations.

    * ``pass@k`` for every task: the unbiased estimator (:func:`ead.metrics.pass_at_k`) of the chance that one of K
      continuations is correct (score 1), from the prefix's n continuations and their correct count;
    * ``maj@k`` where the task's answers are unique (:attr:`ead.data.tasks.Task.answers_unique`; not countdown,
      whose valid chains all box the target): the exact Maj@K of :func:`ead.analyses.common.maj_curves`.
    """
    fewest = int(samples.groupby(UNIT).size().min())
    if max(k) > fewest:
        raise ValueError(f"Pass@{max(k)} and Maj@{max(k)} need {max(k)} continuations per prefix; the samples have "
                         f"{fewest}")
    counts = samples.assign(success=samples["correct"] >= 1).groupby(UNIT, sort=True).agg(
        num_samples=("success", "size"), num_correct=("success", "sum")).reset_index()
    frames = [counts[UNIT].assign(metric="pass@k", k=kk, value=pass_at_k(counts["num_samples"].to_numpy(),
                                                                         counts["num_correct"].to_numpy(), kk))
              for kk in k]
    (task,) = samples["task"].unique()
    if get_task(task).answers_unique:
        majority = maj_curves(samples, UNIT)
        majority = majority[majority["n"].isin(k)].rename(columns={"n": "k", "maj_at_n": "value"})
        frames.append(majority[[*UNIT, "k", "value"]].assign(metric="maj@k"))
    return pd.concat(frames, ignore_index=True)


def write_summary(samples: pd.DataFrame, out, *, k: list[int], resamples: int, seed: int, log) -> pd.DataFrame:
    """The Fig. 2 table of a samples table (:data:`ead.tables.FORKING_SAMPLES`): per (metric, p, K) the mean of
    :func:`per_unit_metrics` over the references with bootstrap CIs and the run's settings columns, written to
    ``out`` (:data:`ead.tables.FORKING`)."""
    per_unit = per_unit_metrics(samples, k)
    table = bootstrap_cell_means(per_unit, ["metric", "fork_point", "k"], "value", resamples=resamples, seed=seed)
    table = table.assign(**sample_settings(samples, SAMPLE_COLUMNS))
    FORKING.write(table, out)
    for row in table.itertuples():
        log.info("fork after %d tokens: %s with K = %d: %.3f [%.3f, %.3f]", row.fork_point, row.metric, row.k,
                 row.value, row.ci_low, row.ci_high)
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_arguments(parser)
    parser.add_argument("--reference-samples", type=int, required=True, help="reference pool size per question")
    parser.add_argument("--prefix-selection", choices=PREFIX_SELECTIONS, required=True,
                        help="how the reference prefixes are picked")
    parser.add_argument("--fork-points", type=int, nargs="+", required=True, help="prefix lengths p (0 = normal)")
    parser.add_argument("--continuations", type=int, required=True, help="continuations per prefix (>= max K)")
    parser.add_argument("--k", type=int, nargs="+", default=None,
                        help="K of Pass@K and Maj@K (the summary, with --out)")
    parser.add_argument("--tau", type=float, required=True, help="temperature of references and continuations")
    add_grader_argument(parser)
    args = parser.parse_args(argv)
    with_summary = summary_requested(parser, args, **{"--k": args.k})
    configure_grader(args.grader)  # the config's grader: section, as every grading job
    log = setup_logging("forking")
    pin_job(args.threads)
    if min(args.fork_points) < 0 or max(args.fork_points) >= args.max_new_tokens:
        raise SystemExit(f"--fork-points {args.fork_points} must be >= 0 and < --max-new-tokens {args.max_new_tokens}")
    if with_summary and max(args.k) > args.continuations:
        raise SystemExit(f"--continuations {args.continuations} is smaller than the largest K {max(args.k)}")

    questions, prompts = load_questions(args)
    reference_of = dict(zip(questions["id"], questions["answer"]))
    engine = open_analysis_engine(args)
    tokenizer = engine.tokenizer
    schedule = FixedTemperature(args.tau)
    chat_template = args.prompt_format == "chat"

    pool = engine.sample(questions["id"].tolist(), prompts, schedule, n=args.reference_samples,
                         max_new_tokens=args.max_new_tokens, seed=args.seed, chat_template=chat_template)
    grade_samples(pool, [reference_of[p] for p in pool["prompt_id"]], args.task, "forking reference pool")
    references = select_references(pool, args.prefix_selection, max(args.fork_points), args.seed, args.task)
    log.info("%d of %d questions have a reference longer than %d tokens; %d prefixes (%s selection)",
             references["prompt_id"].nunique(), len(questions), max(args.fork_points), len(references),
             args.prefix_selection)
    if references.empty:
        raise SystemExit("no reference response is longer than the largest fork point; lower --fork-points")

    encoded = encode_prompts(tokenizer, prompts, chat_template=chat_template)
    prompt_tokens = dict(zip(questions["id"], encoded))
    references = references.assign(unit=[f"{p}#{s}" for p, s in zip(references["prompt_id"], references["sample_id"])])
    frames = []
    for offset, p in enumerate(sorted(set(args.fork_points))):
        prefixes = [list(tokens[:p]) for tokens in references["token_ids"]]
        out = engine.sample(references["unit"].tolist(), [""] * len(references), schedule, n=args.continuations,
                            max_new_tokens=args.max_new_tokens - p, seed=args.seed + 1 + offset,
                            prompt_token_ids=[prompt_tokens[q] + prefix for q, prefix in
                                              zip(references["prompt_id"], prefixes)])
        prefix_of = dict(zip(references["unit"], prefixes))
        out["text"] = [tokenizer.decode(prefix_of[u] + list(tokens), skip_special_tokens=True)
                       for u, tokens in zip(out["prompt_id"], out["token_ids"])]
        frames.append(out.rename(columns={"prompt_id": "unit"}).assign(fork_point=p))
    engine.close()
    samples = pd.concat(frames, ignore_index=True)
    samples = samples.merge(references[["unit", "prompt_id"]].rename(columns={"prompt_id": "question_id"}), on="unit")
    grade_samples(samples, [reference_of[q] for q in samples["question_id"]], args.task, "forking continuations")
    samples = add_vote_groups(samples, UNIT, args.task)

    settings = analysis_settings(args, tau=args.tau, prefix_selection=args.prefix_selection,
                                 num_questions_requested=args.num_questions,
                                 num_questions_used=int(references["prompt_id"].nunique()),
                                 reference_samples=args.reference_samples, continuations=args.continuations,
                                 max_new_tokens=args.max_new_tokens, question_seed=args.question_seed,
                                 sampling_seed=args.seed)
    samples = samples[SAMPLE_COLUMNS].assign(**settings)
    FORKING_SAMPLES.write(samples, args.samples_out)
    log.info("%d continuations of %d references; %.3f of them correct", len(samples), samples["unit"].nunique(),
             samples["correct"].mean())
    if with_summary:
        write_summary(samples, args.out, k=args.k, resamples=args.bootstrap, seed=args.seed, log=log)


if __name__ == "__main__":
    main()
