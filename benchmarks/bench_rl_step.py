"""One CPU RL training step of the default grid, broken down: rollout sampling, grading, update (mini-batches).

Runs `ead.rl.train.Trainer.train_step` for a few steps of one default-profile cell per sampler kind (fixed tau,
EAD, EAD + TIS, and GRPO with its reference forward) on the real tiny policy, then one evaluation, and reports
the median seconds per phase and each phase's share of the step. Ratios, not absolute times, are the target:
the machine is shared, so absolute seconds move with load.

Run: ``python benchmarks/bench_rl_step.py --policy results/models/tiny1m --data results/data/countdown.parquet \
    --steps 4 --threads 1 --out benchmarks/results/rl_step.md``
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

import numpy as np
import torch
import yaml

from ead.io import atomic_path, setup_logging
from ead.rl.train import Trainer
from ead.settings.rl import Cell, cell_settings

CELLS = [("dapo", "tau1.0"), ("dapo", "ead"), ("dapo", "ead_tis"), ("grpo", "ead")]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--config", default="configs/config.yaml")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    log = setup_logging("bench_rl_step")
    config = yaml.safe_load(Path(args.config).read_text())
    rows = []
    for algorithm, sampler in CELLS:
        settings = cell_settings(config, Cell("tiny1m", algorithm, sampler, 8, 0))
        trainer = Trainer(settings, args.policy, args.data, log)
        steps = [trainer.train_step(step) for step in range(1, args.steps + 1)]
        phase = {key: float(np.median([s[key] for s in steps])) for key in ("rollout_s", "grade_s", "update_s",
                                                                             "wall_time_s")}
        rows.append((algorithm, sampler, phase))
        log.info("%s/%s: %s", algorithm, sampler, phase)
    started = time.perf_counter()
    trainer.evaluate(0)
    eval_seconds = time.perf_counter() - started

    rl = config["rl"]
    lines = [
        "## One RL training step (CPU backend, default grid settings)",
        "",
        f"Command: `python benchmarks/bench_rl_step.py --policy {args.policy} --data {args.data} --steps {args.steps}"
        f" --threads {args.threads} --out {args.out}`",
        f"Machine: {platform.machine()}, {torch.get_num_threads()} torch thread(s), torch {torch.__version__}. "
        f"Step = {rl['prompts_per_step']} prompts x n 8 = {rl['prompts_per_step'] * 8} rollouts of <= "
        f"{rl['max_new_tokens']} tokens, {rl['mini_batches']} mini-batch updates; median of {args.steps} steps.",
        "",
        "| algorithm | sampler | step (s) | rollout sampling | grading | update (incl. reference forward) |",
        "|---|---|---|---|---|---|",
    ]
    for algorithm, sampler, phase in rows:
        total = phase["rollout_s"] + phase["grade_s"] + phase["update_s"]
        share = {key: phase[key] / total for key in ("rollout_s", "grade_s", "update_s")}
        lines.append(f"| {algorithm} | {sampler} | {phase['wall_time_s']:.2f} | {share['rollout_s']:.0%} | "
                     f"{share['grade_s']:.1%} | {share['update_s']:.0%} |")
    base = rows[0][2]["wall_time_s"]
    lines += ["", "Step time relative to dapo / tau1.0: " + ", ".join(
        f"{a}/{s} {p['wall_time_s'] / base:.2f}" for a, s, p in rows[1:]) + ".",
        f"One evaluation ({rl['eval']['limit']} problems x {rl['eval']['n']} samples + greedy): {eval_seconds:.1f} s "
        f"= {eval_seconds / base:.1f} training steps.", ""]
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
