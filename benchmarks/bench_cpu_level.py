"""What pinning the CPU kernel level costs (ead.numerics): the default profile's tiny policy trained and sampled at
each level, as ratios to torch's own choice (``native``) in one run.

Each repetition runs every level in a fresh process (ATen reads its level once per process), in an order that
rotates between repetitions, with the environment the workflow gives a job at that level
(``ead.numerics.job_environment``), one torch thread. The workload is the default profile's two kinds of work on its
tiny policy (``TinyPolicyShape``, 1.05M parameters): SFT training steps (benchmarks/host_speed.py's reference
step: batch 128 x 76 tokens, forward, backward, clipping, AdamW) and RL-like rollouts (``generate`` of 64
sequences x 48 tokens, sampled at tau 1). It reports each level's median seconds per training step and per rollout
batch, and its ratio to ``native``. The level this machine lacks (e.g. avx512 on an AVX2 CPU) is skipped, as a job
would refuse it.

Run: ``python benchmarks/bench_cpu_level.py --repetitions 5 --out benchmarks/results/cpu_level.md``
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ead.io import atomic_path
from ead.numerics import CPU_LEVELS, child_environment, missing_features

sys.path.insert(0, str(Path(__file__).resolve().parent))  # host_speed.py beside this file
from host_speed import training_step_seconds  # noqa: E402

TRAIN_STEPS = 8
ROLLOUTS, ROLLOUT_BATCH, ROLLOUT_TOKENS = 3, 64, 48


def worker() -> dict:
    """Time the workload in this process, at whatever level its environment pins (one JSON line on stdout)."""
    import torch

    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer
    from ead.numerics import pin_job

    level = pin_job(1)
    train = training_step_seconds(TRAIN_STEPS)
    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(), seed=0)
    generator = torch.Generator().manual_seed(0)
    model.eval()
    prompts = torch.randint(3, len(tokenizer), (ROLLOUT_BATCH, 16), generator=generator)
    rollout = []
    for repetition in range(ROLLOUTS + 1):
        torch.manual_seed(repetition)
        start = time.perf_counter()
        with torch.no_grad():
            model.generate(prompts, attention_mask=torch.ones_like(prompts), do_sample=True, temperature=1.0,
                           top_k=0, top_p=1.0, max_new_tokens=ROLLOUT_TOKENS, min_new_tokens=ROLLOUT_TOKENS)
        if repetition:
            rollout.append(time.perf_counter() - start)
    return {"level": level, "train_step_s": statistics.median(train), "rollout_s": statistics.median(rollout)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--out", required=True)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker()))
        return
    levels = [level for level in CPU_LEVELS if not missing_features(level)]
    skipped = [level for level in CPU_LEVELS if level not in levels]
    results = {level: [] for level in levels}
    for repetition in range(args.repetitions):
        order = levels[repetition % len(levels):] + levels[:repetition % len(levels)]
        for level in order:
            output = subprocess.run([sys.executable, __file__, "--worker", "--out", "-"],
                                    env=child_environment(level), capture_output=True, text=True,
                                    check=True).stdout
            results[level].append(json.loads(output.strip().splitlines()[-1]))
            print(f"repetition {repetition + 1}/{args.repetitions} {level}: {results[level][-1]}", flush=True)
    median = {level: {key: statistics.median(run[key] for run in runs) for key in ("train_step_s", "rollout_s")}
              for level, runs in results.items()}
    native = median["native"]
    lines = [f"# Cost of a pinned CPU level ({platform.processor() or platform.machine()}, "
             f"{os.cpu_count()} cores, 1 torch thread, {args.repetitions} repetitions, "
             f"{time.strftime('%Y-%m-%d')})", "",
             f"`python benchmarks/bench_cpu_level.py --repetitions {args.repetitions} --out {args.out}`; levels this "
             f"CPU lacks, skipped: {', '.join(skipped) or 'none'}.", "",
             "| level | train step (s) | x native | rollout batch (s) | x native |", "|---|---:|---:|---:|---:|"]
    for level, values in median.items():
        lines.append(f"| {level} | {values['train_step_s']:.4f} | {values['train_step_s'] / native['train_step_s']:.2f}"
                     f" | {values['rollout_s']:.3f} | {values['rollout_s'] / native['rollout_s']:.2f} |")
    with atomic_path(Path(args.out)) as path:
        Path(path).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
