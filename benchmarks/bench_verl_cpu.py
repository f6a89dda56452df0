"""The verl_cpu profile end to end: wall time per stage, and what EAD costs inside verl's rollout.

Runs (with ``--run``) the profile's targets in ``.venv-vllm`` from a fresh results root (``--fresh`` deletes
runs/verl_cpu first) and reports:
* per stage (data, models, RL grid, tables/claims/figures): first start to last finish and job-minutes, from
  Snakemake's own log (the parser of benchmarks/dag_runtime.py);
* rollout time per training step, verl's ``timing_s/gen`` from each cell's file logger, of the EAD + TIS cell against
  the tau 1.0 cell of the same run, as a ratio of means over steps 2.. (step 1 includes the engine's warm-up).

    python benchmarks/bench_verl_cpu.py --run --fresh --out benchmarks/results/verl_cpu.md \
        --doc BENCHMARKS.md --block verl-cpu-runtime

With ``--doc`` the report also replaces the marked block ``--block`` of that Markdown file (tools/doc_blocks.py):
BENCHMARKS.md quotes it, and the README's profiles table reads its total from ``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ead.io import atomic_path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "runs" / "verl_cpu" / "results"
TARGETS = ["figures/fig04_pass_worst_at_16.png", "figures/fig06_entropy_dynamics.png", "results/claims.csv"]
CELL_RUNS = RESULTS / "rl_runs" / "tiny_arith" / "dapo"


def dag_runtime():
    spec = importlib.util.spec_from_file_location("dag_runtime", ROOT / "benchmarks" / "dag_runtime.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["dag_runtime"] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def rollout_seconds(sampler: str) -> dict[int, float]:
    """{step: timing_s/gen} of one cell's run (every metrics*.jsonl, later lines win)."""
    times = {}
    run_dir = CELL_RUNS / sampler / "n4" / "seed0"
    for path in sorted(run_dir.glob("metrics*.jsonl")):
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if "timing_s/gen" in entry["data"]:
                times[int(entry["step"])] = float(entry["data"]["timing_s/gen"])
    if not times:
        raise SystemExit(f"no timing_s/gen in {run_dir}/metrics*.jsonl: run the profile first (--run)")
    return dict(sorted(times.items()))


def rollout_report() -> str:
    ead, tau = rollout_seconds("ead_tis"), rollout_seconds("tau1.0")
    steps = sorted(set(ead) & set(tau) - {1})
    ratio = np.mean([ead[s] for s in steps]) / np.mean([tau[s] for s in steps])
    rows = "\n".join(f"| {s} | {tau[s]:.3f} | {ead[s]:.3f} |" for s in sorted(set(ead) & set(tau)))
    return (f"Rollout time per step (`timing_s/gen`, s), same run, 16 responses of <= 48 tokens per step:\n\n"
            f"| step | tau 1.0 | EAD + TIS |\n|---:|---:|---:|\n{rows}\n\n"
            f"EAD + TIS / tau 1.0, mean of steps {steps[0]}-{steps[-1]} (step 1 holds the engine's warm-up): "
            f"**{ratio:.2f}x**\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="store_true", help="run the profile's targets first, timed")
    parser.add_argument("--fresh", action="store_true", help="delete runs/verl_cpu before running")
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    parser.add_argument("--doc", type=Path, help="Markdown file whose block --block gets the report")
    parser.add_argument("--block", default="verl-cpu-runtime", help="name of the marked block in --doc")
    args = parser.parse_args()
    command_seconds = None
    if args.run:
        if args.fresh:
            shutil.rmtree(ROOT / "runs" / "verl_cpu", ignore_errors=True)
        started = time.perf_counter()
        subprocess.run([str(ROOT / ".venv-vllm" / "bin" / "snakemake"), *TARGETS, "--cores", "all",
                        "--configfile", "configs/verl_cpu.yaml"], cwd=ROOT, check=True)
        command_seconds = time.perf_counter() - started
    runtime = dag_runtime()
    # the newest Snakemake log that ran verl cells (dry runs and lint runs write logs too)
    log = next(path for path in sorted((ROOT / ".snakemake" / "log").glob("*.snakemake.log"), reverse=True)
               if "rule rl_cell_verl:" in path.read_text())
    jobs = runtime.parse_log(log.read_text())
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    label = f"verl_cpu profile at commit `{commit}`, measured {min(job.start for job in jobs):%Y-%m-%d} (`{log.name}`)"
    block = runtime.render(jobs, command_seconds, label) + "\n" + rollout_report()
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(f"# verl_cpu profile: runtime and rollout cost\n\nCommand: `python "
                             f"benchmarks/bench_verl_cpu.py --run --fresh --out {args.out}`\n\n{block}")
    if args.doc:
        sys.path.insert(0, str(ROOT / "tools"))
        from doc_blocks import replace_block
        replace_block(args.doc, args.block, block)
    print(block)


if __name__ == "__main__":
    main()
