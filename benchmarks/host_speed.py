"""How fast this machine runs the default profile's critical path: seconds per training step of the tiny1m policy.

Machines of one kind (the same core count, the same CPU name) have run the same DAG at speeds a factor 2 apart: the
default profile's runtime means little without the speed of the machine that measured it. The reference step is what
the default's longest job repeats 800 times (tiny1m's SFT, ead.models.sft): one forward, backward and AdamW step of
the tiny1m shape (``TinyPolicyShape()``) on a batch of 128 sequences of 76 tokens, one torch thread, at a declared
CPU kernel level (ead.numerics). It runs in a child process whose environment is that level's, as a workflow job's;
the reported value is the median of ``--steps`` timed steps after two untimed ones. benchmarks/dag_runtime.py
measures it before a timed run and prints it beside the run's total.

Run:
    python benchmarks/host_speed.py --level avx2
"""

from __future__ import annotations

import argparse
import json
import numbers
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: The reference batch: tiny1m's SFT batch size and a typical padded width of its countdown batches.
BATCH, WIDTH = 128, 76
WARMUP_STEPS = 2


def training_step_seconds(steps: int) -> list[float]:
    """``steps`` timed reference steps in this process, at the level and thread count it was pinned to
    (ead.numerics.pin_job), after :data:`WARMUP_STEPS` untimed ones; seconds each. benchmarks/bench_cpu_level.py
    times its training at each level with this too."""
    import torch

    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer

    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(), seed=0)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.95), weight_decay=0.01)
    generator = torch.Generator().manual_seed(0)
    input_ids = torch.randint(3, len(tokenizer), (BATCH, WIDTH), generator=generator)
    attention_mask = torch.ones_like(input_ids)
    seconds = []
    for step in range(WARMUP_STEPS + steps):
        started = time.perf_counter()
        loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=input_ids).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step >= WARMUP_STEPS:  # the first steps warm the allocator and the kernels' caches
            seconds.append(time.perf_counter() - started)
    return seconds


def machine() -> str:
    """The machine a timing was made on, as a reader can compare it: cores, the CPU's name and the widest vector
    instructions it has (AVX-512, AVX2-only, or neither), memory; e.g. "2-core AMD EPYC (AVX-512), 24 GiB"."""
    import os
    import re

    text = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    name = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    flags = set((re.search(r"^flags\s*:\s*(.+)$", text, re.MULTILINE) or [None, ""])[1].split())
    vector = "AVX-512" if "avx512f" in flags else "AVX2-only" if "avx2" in flags else "no AVX2"
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count()}-core {name[1].strip() if name else 'CPU of unknown name'} ({vector}), "
            f"{memory:.0f} GiB")


def measure(level: str = "avx2", steps: int = 10) -> float:
    """Median seconds per reference step on this machine at CPU kernel ``level``, measured in a child process that
    runs with that level's job environment (ead.numerics.job_environment). ValueError names a bad argument."""
    from ead.numerics import CPU_LEVELS, child_environment

    if level not in CPU_LEVELS:
        raise ValueError(f"level must be one of {list(CPU_LEVELS)}, got {level!r}")
    if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or steps < 1:
        raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
    steps = int(steps)  # numpy integers too
    child = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--level", level, "--steps", str(steps),
                            "--child"], env=child_environment(level), capture_output=True, text=True)
    if child.returncode != 0:
        raise RuntimeError(f"the host-speed probe failed at level {level!r}:\n{child.stderr[-2000:]}")
    return statistics.median(json.loads(child.stdout.strip().splitlines()[-1]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="avx2", help="CPU kernel level (numerics.cpu_level; default avx2)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps (default 10)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # the timed process itself
    args = parser.parse_args(argv)
    if args.child:
        from ead.numerics import pin_job

        pin_job(1)
        print(json.dumps(training_step_seconds(args.steps)))
        return
    try:
        seconds = measure(args.level, args.steps)
    except ValueError as error:
        parser.error(str(error))
    print(f"{seconds:.2f} s per reference step (tiny1m, {BATCH} x {WIDTH} tokens, 1 thread, level {args.level})")


if __name__ == "__main__":
    main()
