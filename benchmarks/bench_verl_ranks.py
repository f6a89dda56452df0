"""Step time of the verl_cpu EAD + TIS cell on two ranks against one rank, both measured in one run.

Builds the cell's inputs as tests/vllm/test_verl_two_ranks.py does (a random tiny Llama exported as a chat model,
arithmetic prompts in verl's format), then runs `python -m ead.rl.verl.run` on them twice, one rank after the other:
configs/config.yaml + configs/verl_cpu.yaml (paper precision: verl's bf16 mixed-precision actor, bf16 rollout) at
STEPS steps, once as the profile is (1 logical GPU: one FSDP2 rank, one vLLM replica) and once spread over 2 logical
GPUs (two FSDP2 ranks over gloo, two vLLM replicas). Reports verl's own per-step timings from each run's file logger
(`timing_s/step` and its parts: rollout `gen`, `old_log_prob`, `update_actor`, `update_weights`), step 1 apart (it
holds the engines' warm-up), and each run's wall time. Writes benchmarks/results/verl_ranks.md and the block between
`<!-- verl-ranks:begin -->` and `<!-- verl-ranks:end -->` of BENCHMARKS.md (appending a section with the markers the
first time). Run it in .venv-vllm:

    PYTHONPATH=src .venv-vllm/bin/python benchmarks/bench_verl_ranks.py --workdir /tmp/verl_ranks
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ead.io import atomic_path
from ead.rl.verl.local import write_tiny_arithmetic_assets
from ead.settings import load_layered_config
from ead.settings.rl import Cell, verl_cell_settings

ROOT = Path(__file__).resolve().parents[1]
MARKERS = ("<!-- verl-ranks:begin -->", "<!-- verl-ranks:end -->")
STEPS = 6
PARTS = ("step", "gen", "old_log_prob", "update_actor", "update_weights")
ONE_GPU = "+ray_kwargs.ray_init.num_gpus=1"


def cell_config(ranks: int) -> dict:
    """The verl_cpu profile at STEPS steps; with 2 ranks, 2 logical GPUs (as tests/vllm/test_verl_two_ranks.py)."""
    config = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "verl_cpu.yaml")
    config["rl"]["steps"] = STEPS
    config["rl"]["eval"].update(limit=4, every=STEPS)
    verl = config["rl"]["verl"]
    if ONE_GPU not in verl["extra_overrides"]:
        raise SystemExit(f"configs/verl_cpu.yaml no longer declares {ONE_GPU}: update this benchmark")
    verl["extra_overrides"] = [f"+ray_kwargs.ray_init.num_gpus={ranks}" if override == ONE_GPU else override
                               for override in verl["extra_overrides"]]
    verl["n_gpus_per_node"] = ranks
    # 16 rollouts per step, 16 / ranks per rank: the log-prob micro batch must divide a rank's share
    verl["log_prob_micro_batch_size_per_gpu"] = 16 // ranks
    verl["save_freq"] = STEPS
    return config


def run_cell(root: Path, ranks: int) -> tuple[Path, float]:
    """Run the EAD + TIS cell on ``ranks`` ranks; (run directory, wall seconds)."""
    cell = Cell("tiny_arith", "dapo", "ead_tis", 4, 0)
    run_dir = root / f"ranks{ranks}"
    run_dir.mkdir(parents=True)
    command = [sys.executable, "-m", "ead.rl.verl.run",
               "--settings", verl_cell_settings(cell_config(ranks), cell).to_json(),
               "--model", str(root / "model"), "--train", str(root / "train.parquet"),
               "--val", str(root / "val.parquet"), "--run-dir", str(run_dir), "--out-dir", str(run_dir / "tables")]
    print(f"[bench_verl_ranks] {ranks} rank(s): {run_dir}", flush=True)
    started = time.perf_counter()
    with open(run_dir / "run.log", "w") as log:
        result = subprocess.run(command, cwd=root, env={**os.environ, "EAD_PROFILE": "verl_cpu"}, stdout=log,
                                stderr=subprocess.STDOUT)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"the {ranks}-rank run failed (exit {result.returncode}); see {run_dir / 'run.log'}")
    print(f"[bench_verl_ranks] {ranks} rank(s) done in {seconds:.0f} s", flush=True)
    return run_dir, seconds


def step_timings(run_dir: Path) -> dict[int, dict[str, float]]:
    """{step: {part: seconds}} from verl's file logger (timing_s/<part>)."""
    timings = {}
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        entry = json.loads(line)
        if "timing_s/step" in entry["data"]:
            timings[int(entry["step"])] = {part: float(entry["data"].get(f"timing_s/{part}", np.nan)) for part in PARTS}
    if sorted(timings) != list(range(1, STEPS + 1)):
        raise SystemExit(f"{run_dir / 'metrics.jsonl'}: timings of steps {sorted(timings)}, expected 1..{STEPS}")
    return timings


def render(runs: dict[int, tuple[dict, float]]) -> str:
    steps = list(range(2, STEPS + 1))
    lines = [f"EAD + TIS cell of the verl_cpu profile (tiny Llama, 4 prompts x n 4 = 16 rollouts of <= 48 tokens per "
             f"step, paper precision), {STEPS} steps per run; mean (median) of verl's `timing_s/*` over steps "
             f"{steps[0]}-{steps[-1]}, s:", "",
             "| ranks | step | rollout (gen) | old log-prob | actor update | weight sync | step 1 | run wall |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for ranks, (timings, wall) in sorted(runs.items()):
        cells = []
        for part in PARTS:
            values = [timings[step][part] for step in steps]
            cells.append(f"{np.mean(values):.2f} ({np.median(values):.2f})")
        lines.append(f"| {ranks} | {' | '.join(cells)} | {timings[1]['step']:.1f} | {wall:.0f} |")
    one, two = (np.mean([runs[r][0][step]["step"] for step in steps]) for r in (1, 2))
    lines += ["", f"Two ranks / one rank, step time: **{two / one:.2f}x** (measured {time.strftime('%Y-%m-%d')}, one "
              "run of each, on a 2-core machine shared with other sessions)."]
    return "\n".join(lines) + "\n"


def write_benchmarks_block(path: Path, block: str) -> None:
    """Replace the marked block of BENCHMARKS.md, or append a section holding it (existing text is never edited)."""
    text = path.read_text()
    begin, end = MARKERS
    if text.count(begin) == 0 and text.count(end) == 0:
        text = (text.rstrip("\n") + "\n\n## verl on two ranks vs one rank\n\n"
                "`PYTHONPATH=src .venv-vllm/bin/python benchmarks/bench_verl_ranks.py --workdir <empty dir>` "
                "(benchmarks/bench_verl_ranks.py says what it runs; table also in "
                f"`benchmarks/results/verl_ranks.md`).\n\n{begin}\n{end}\n")
    if text.count(begin) != 1 or text.count(end) != 1:
        raise SystemExit(f"{path} must hold exactly one {begin} and one {end}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(f"{head}{begin}\n{block}{end}{tail}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True, help="an empty directory for the inputs and runs")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "verl_ranks.md")
    parser.add_argument("--benchmarks", type=Path, default=ROOT / "BENCHMARKS.md")
    args = parser.parse_args()
    if args.workdir.exists() and any(args.workdir.iterdir()):
        raise SystemExit(f"--workdir {args.workdir} is not empty")
    args.workdir.mkdir(parents=True, exist_ok=True)
    write_tiny_arithmetic_assets(args.workdir)
    runs = {}
    for ranks in (1, 2):
        run_dir, wall = run_cell(args.workdir, ranks)
        runs[ranks] = (step_timings(run_dir), wall)
    block = render(runs)
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(f"# verl_cpu cell: two ranks vs one rank\n\n{block}")
    write_benchmarks_block(args.benchmarks, block)
    print(block)


if __name__ == "__main__":
    main()
