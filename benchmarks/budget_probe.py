"""What a response budget buys a model on a benchmark: finishing rate, answer rate and accuracy by max_new_tokens.

Samples ``--samples`` chain-of-thought responses to each of ``--num-questions`` questions (the analyses' question
selection, prompt and HF sampler) at one temperature with the largest budget, then reads every smaller budget off
the same responses: with one random stream per batch, a response sampled with budget B is the first B tokens of the
one sampled with a larger budget. Per budget B: the fraction of responses that end (EOS) within B tokens, the
fraction whose first B tokens contain an answer the grader reads, and the accuracy of those B tokens (graded as the
analyses grade). Used to choose the analyses' datasets and budgets for SmolLM2.

Run:
    python benchmarks/budget_probe.py --model results/models/smollm2-135m-instruct \
        --data results/data/arc_easy.parquet --task arc_easy --num-questions 16 --samples 4 \
        --budgets 96 128 192 256 --out benchmarks/results/budget_arc_easy.md
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from ead.analyses.common import sample_questions, task_prompt
from ead.io import atomic_path, read_table
from ead.models import load_hf_model
from ead.rewards import grade_many
from ead.samplers.engines import sample_hf
from ead.schedule import FixedTemperature


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--task", required=True, help="grader task, e.g. arc_easy or mmlu")
    parser.add_argument("--num-questions", type=int, default=16)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--budgets", type=int, nargs="+", required=True, help="max_new_tokens values to read off")
    parser.add_argument("--tau", type=float, default=1.0)
    parser.add_argument("--question-seed", type=int, default=0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="write the markdown report here")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    budgets = sorted(set(args.budgets))
    model, tokenizer = load_hf_model(args.model)
    questions = sample_questions(read_table(args.data), args.num_questions, args.question_seed, args.data)
    started = time.perf_counter()
    samples = sample_hf(model, tokenizer, questions["id"].tolist(),
                        [task_prompt(q, args.task) for q in questions["question"]], FixedTemperature(args.tau),
                        n=args.samples, max_new_tokens=budgets[-1], seed=args.seed, batch_size=args.batch_size,
                        chat_template=True)
    seconds = time.perf_counter() - started
    answers = dict(zip(questions["id"], questions["answer"]))
    references = [answers[pid] for pid in samples["prompt_id"]]
    lines = [
        f"Command: `python benchmarks/budget_probe.py --model {args.model} --data {args.data} --task {args.task} "
        f"--num-questions {args.num_questions} --samples {args.samples} --budgets {' '.join(map(str, budgets))} "
        f"--tau {args.tau} --question-seed {args.question_seed} --seed {args.seed}`",
        "",
        f"{len(samples)} responses ({len(questions)} questions x {args.samples}) at tau = {args.tau:g}, sampled in "
        f"{seconds:.0f} s ({samples['num_tokens'].sum() / seconds:.1f} tokens/s); response length median "
        f"{samples['num_tokens'].median():.0f} tokens.",
        "",
        "| max_new_tokens | finished (EOS within budget) | with an answer | accuracy | accuracy of finished |",
        "|---|---|---|---|---|",
    ]
    for budget in budgets:
        texts = [tokenizer.decode(tokens[:budget], skip_special_tokens=True) for tokens in samples["token_ids"]]
        grades = grade_many(texts, references, args.task)
        finished = (samples["finished"] & (samples["num_tokens"] <= budget)).to_numpy()
        correct = np.array([g.score for g in grades])
        answered = np.array([g.predicted is not None for g in grades])
        of_finished = f"{correct[finished].mean():.3f}" if finished.any() else "-"
        lines.append(f"| {budget} | {finished.mean():.3f} | {answered.mean():.3f} | {correct.mean():.3f} | "
                     f"{of_finished} |")
    report = "\n".join(lines)
    print(report)
    if args.out:
        with atomic_path(args.out) as tmp:
            tmp.write_text(report + "\n")


if __name__ == "__main__":
    main()
