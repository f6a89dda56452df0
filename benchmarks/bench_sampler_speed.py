"""HF sampling speed vs a baseline revision: tokens/s of ``ead.samplers.hf.sample`` on the entropy job's batch.

Same model (the real SmolLM2-135M-Instruct the analyses load), same batch (the entropy analysis' MMLU questions:
its question selection, chain-of-thought prompt and chat template, each question repeated ``--samples`` times,
left-padded into one batch as ``sample_hf`` does), same settings (tau = 1, float32, 1 torch thread), measured in one
run: the baseline is ``src/ead/samplers/hf.py`` as it was at git ``--baseline REV`` (imported from a temporary copy),
the current one is this checkout's; the two alternate over ``--repeats``. EOS is disabled, so both generate exactly
``--new-tokens`` tokens per row. Per run it records the time to the first token (the prompt pass) and the mean time of
a later decode step, so the time of a longer response can be read off; and it compares the two paths' outputs (the
same random numbers, so the same tokens while their logits agree, and the entropies where the tokens agree).

Run:
    python benchmarks/bench_sampler_speed.py --model results/models/smollm2-135m-instruct \
        --data results/data/mmlu.parquet --baseline 7abdc44 --out benchmarks/results/sampler_speed.md
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from ead.analyses.common import sample_questions, task_prompt
from ead.io import atomic_path, read_table
from ead.models import load_hf_model
from ead.samplers import hf as current
from ead.samplers.engines import encode_prompts
from ead.schedule import FixedTemperature


def load_baseline(revision: str):
    """``ead.samplers.hf`` as it was at git ``revision``, imported from a temporary copy."""
    shown = subprocess.run(["git", "show", f"{revision}:src/ead/samplers/hf.py"], capture_output=True, text=True)
    if shown.returncode != 0:
        raise SystemExit(f"--baseline {revision}: no src/ead/samplers/hf.py there ({shown.stderr.strip()})")
    path = Path(tempfile.mkdtemp(prefix="ead_sampler_baseline_")) / "baseline_hf.py"
    path.write_text(shown.stdout)
    spec = importlib.util.spec_from_file_location("baseline_hf", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def timed_sample(module, model, input_ids, attention_mask, new_tokens: int, pad_id: int):
    """One ``module.sample`` call: (output, seconds in all, seconds to the first token, mean seconds per later step)."""
    stamps = []
    start = time.perf_counter()
    out = module.sample(model, input_ids, attention_mask, FixedTemperature(1.0), max_new_tokens=new_tokens,
                        eos_token_ids=[], pad_token_id=pad_id, generator=torch.Generator().manual_seed(0),
                        on_position=lambda: stamps.append(time.perf_counter()))
    total = time.perf_counter() - start
    step = (stamps[-1] - stamps[0]) / (len(stamps) - 1) if len(stamps) > 1 else float("nan")
    return out, total, stamps[0] - start, step


def agreement(before, after) -> tuple[float, float]:
    """Fraction of rows whose tokens are all equal, and the largest entropy gap over the positions up to and including
    each row's first differing token (after it the two rows condition on different text)."""
    same = before.token_ids == after.token_ids
    gap = 0.0
    for row in range(same.shape[0]):
        differs = (~same[row]).nonzero().flatten()
        end = int(differs[0]) + 1 if len(differs) else same.shape[1]
        gap = max(gap, float((before.entropies[row, :end] - after.entropies[row, :end]).abs().max()))
    return float(same.all(-1).float().mean()), gap


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local HF model directory (SmolLM2-135M-Instruct)")
    parser.add_argument("--data", required=True, help="MMLU questions table (results/data/mmlu.parquet)")
    parser.add_argument("--baseline", required=True, help="git revision of src/ead/samplers/hf.py to compare with")
    parser.add_argument("--num-questions", type=int, default=24,
                        help="as configs/config.yaml analyses.entropy_by_position")
    parser.add_argument("--samples", type=int, default=4,
                        help="rows per question, as analyses.entropy_by_position.samples")
    parser.add_argument("--question-seed", type=int, default=0)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=None, help="write the markdown report here")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    baseline = load_baseline(args.baseline)
    model, tokenizer = load_hf_model(args.model)
    questions = sample_questions(read_table(args.data), args.num_questions, args.question_seed, args.data)
    encoded = encode_prompts(tokenizer, [task_prompt(q, "mmlu") for q in questions["question"]], chat_template=True)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    input_ids, attention_mask = current.left_pad([tokens for tokens in encoded for _ in range(args.samples)], pad_id)
    variants = {"before": baseline, "after": current}
    for module in variants.values():  # warm-up (allocator, kernels) on two rows, two tokens
        timed_sample(module, model, input_ids[:2], attention_mask[:2], 2, pad_id)
    runs = {name: [] for name in variants}
    outputs = {}
    for _ in range(args.repeats):
        for name, module in variants.items():  # alternating, so drift in machine load hits both alike
            outputs[name], *timing = timed_sample(module, model, input_ids, attention_mask, args.new_tokens, pad_id)
            runs[name].append(timing)
            print(name, [f"{value:.2f}" for value in timing], flush=True)

    tokens = input_ids.shape[0] * args.new_tokens
    median = {name: [statistics.median(column) for column in zip(*runs[name])] for name in variants}
    identical, gap = agreement(outputs["before"], outputs["after"])
    lengths = attention_mask.sum(-1)
    lines = [
        f"Command: `python benchmarks/bench_sampler_speed.py --model {args.model} --data {args.data} "
        f"--baseline {args.baseline} --num-questions {args.num_questions} --samples {args.samples} "
        f"--new-tokens {args.new_tokens} --repeats {args.repeats} --threads {args.threads}`",
        "",
        f"torch {torch.__version__}, {args.threads} thread(s); {input_ids.shape[0]} rows ({args.num_questions} MMLU "
        f"questions x {args.samples}), prompt lengths {int(lengths.min())}-{int(lengths.max())} tokens (mean "
        f"{float(lengths.float().mean()):.0f}; padded to {input_ids.shape[1]}), {args.new_tokens} new tokens per row, "
        f"tau = 1, float32; median of {args.repeats} alternating run(s).",
        "",
        "| sampler | tokens/s | seconds | to first token (s) | later decode step (s) |",
        "|---|---|---|---|---|",
    ]
    for name in variants:
        total, first, step = median[name]
        label = f"before (`{args.baseline}`)" if name == "before" else "after"
        lines.append(f"| {label} | {tokens / total:.1f} | {total:.1f} | {first:.1f} | {step:.3f} |")
    (total_b, first_b, step_b), (total_a, first_a, step_a) = median["before"], median["after"]
    lines += [
        "",
        f"Speed-up: **{total_b / total_a:.1f}x** tokens/s end to end ({args.new_tokens} tokens); prompt pass "
        f"{first_b / first_a:.1f}x, decode step {step_b / step_a:.1f}x.",
        f"Same random numbers: {100 * identical:.0f}% of rows sampled identical tokens; largest tau = 1 entropy gap up "
        f"to each row's first differing token: {gap:.2e} nats.",
    ]
    report = "\n".join(lines)
    print(report)
    if args.out:
        with atomic_path(args.out) as tmp:
            tmp.write_text(report + "\n")


if __name__ == "__main__":
    main()
