"""SLURM overhead: wall time of the same smoke slice run locally and through the local SLURM cluster.

One run of this script times both variants back to back (``--repeats`` alternates their order), each in a fresh copy
of the workflow, with the slice of tests/end_to_end/test_slurm_local.py: data, the tiny1m SFT, its step-0 evaluation,
one RL cell and its eval table, the schedule table and Fig. 3 (7 jobs). Local: ``--cores 1`` (one job at a time, as a
1-CPU SLURM job runs); SLURM: ``--workflow-profile workflow/profiles/slurm_local`` (2 jobs at once, 1 CPU each).
Besides the wall times it sums the jobs' own run times from their Snakemake benchmark files, so the difference is the
cost of submission, the 5-s first status poll, the polling interval and each job's nested Snakemake start-up.
``--whole`` times the whole smoke profile (its ``rule all``) instead of the slice.
Starts the cluster with workflow/scripts/slurm_local.sh if it is not running, and then stops it again.

Run (as root, from the repository root):
    .venv/bin/python benchmarks/bench_slurm_overhead.py --out benchmarks/results/slurm_overhead.md
    .venv/bin/python benchmarks/bench_slurm_overhead.py --whole --out benchmarks/results/slurm_overhead_smoke.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from ead.io import atomic_path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "workflow" / "scripts" / "slurm_local.sh"
SLURM_CONF = Path(os.environ.get("SLURM_LOCAL_DIR", ROOT / ".slurm-local")).resolve() / "slurm.conf"
TARGETS = ["results/rl/tiny1m/dapo/ead_tis/n8/seed0/eval.csv", "figures/fig03_annealing_schedule.png"]
VARIANTS = {"local": ["--cores", "1"], "slurm": ["--workflow-profile", str(ROOT / "workflow/profiles/slurm_local")]}


def timed_run(variant: str, base: Path, timeout_s: int, targets: list[str]) -> dict:
    workdir = base / f"{variant}-{time.monotonic_ns()}"
    workdir.mkdir()
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, workdir / name)
    for folder in ("workflow", "configs"):
        shutil.copytree(ROOT / folder, workdir / folder)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
           # the local cluster's config and command wrappers live in its state directory (slurm_local.sh env)
           "SLURM_CONF": str(SLURM_CONF), "PATH": os.pathsep.join([str(SLURM_CONF.parent / "bin"), os.environ["PATH"]])}
    command = [sys.executable, "-m", "snakemake", *targets, "--configfile", "configs/smoke.yaml", *VARIANTS[variant]]
    start = time.monotonic()
    result = subprocess.run(["timeout", "-k", "10", str(timeout_s), *command], cwd=workdir, env=env,
                            capture_output=True, text=True)
    wall = time.monotonic() - start
    if result.returncode != 0:
        raise SystemExit(f"{variant} run failed (rc {result.returncode}):\n{result.stderr[-3000:]}")
    output = result.stdout + result.stderr
    jobs = len(re.findall(r"^(?:local)?rule \w+:$", output, re.M))
    # the rules with a `benchmark:` file (SFT, step-0 evaluation, RL cell): their own run time inside the job
    benchmarks = sorted((workdir / "runs" / "smoke" / "results" / "benchmarks").rglob("*.tsv"))
    job_seconds = sum(float(pd.read_csv(path, sep="\t")["s"].iloc[0]) for path in benchmarks)
    submitted = output.count("submitted with SLURM jobid")
    print(f"{variant}: {wall:.1f} s wall, {jobs} jobs, {submitted} SLURM jobs, {job_seconds:.1f} s in "
          f"{len(benchmarks)} benchmarked jobs", flush=True)
    shutil.rmtree(workdir, ignore_errors=True)
    return {"variant": variant, "wall_s": wall, "jobs": jobs, "slurm_jobs": submitted,
            "benchmarked": len(benchmarks), "job_s": job_seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    parser.add_argument("--whole", action="store_true", help="the whole smoke profile (rule all), not the slice")
    args = parser.parse_args(argv)
    targets = [] if args.whole else TARGETS
    running = subprocess.run(["bash", str(SCRIPT), "status"], capture_output=True).returncode == 0
    try:
        if not running:
            subprocess.run(["timeout", "-k", "10", "900", "bash", str(SCRIPT), "start"], check=True)
        rows = []
        with tempfile.TemporaryDirectory() as base:
            for repeat in range(args.repeats):
                order = list(VARIANTS) if repeat % 2 == 0 else list(reversed(VARIANTS))
                rows += [{"repeat": repeat, **timed_run(variant, Path(base), args.timeout, targets)}
                         for variant in order]
    finally:
        if not running:
            subprocess.run(["timeout", "-k", "10", "240", "bash", str(SCRIPT), "stop"], check=True)
    table = pd.DataFrame(rows)
    mean = table.groupby("variant")[["wall_s", "job_s"]].mean()
    local, slurm = mean.loc["local"], mean.loc["slurm"]
    jobs = int(table["jobs"].iloc[0])
    lines = [
        f"# SLURM overhead: the {'whole smoke profile' if args.whole else 'smoke slice'} locally and through the "
        "local SLURM cluster",
        "",
        f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, `{' '.join(['python', *sys.argv])}` "
        f"({os.cpu_count()} CPUs; other processes shared the machine). Targets: {', '.join(targets) or 'rule all'} "
        f"(smoke profile, {jobs} jobs). benchmarked s: the own run time of the jobs that write a Snakemake benchmark "
        "file (SFT, step-0 evaluation, RL cell), measured inside the job.",
        "",
        "| repeat | variant | wall (s) | jobs | SLURM jobs | benchmarked jobs | benchmarked s |",
        "|---|---|---|---|---|---|---|",
        *(f"| {r.repeat} | {r.variant} | {r.wall_s:.1f} | {r.jobs} | {r.slurm_jobs} | {r.benchmarked} | {r.job_s:.1f} |"
          for r in table.itertuples()),
        "",
        f"Mean wall: local {local.wall_s:.1f} s, SLURM {slurm.wall_s:.1f} s: x{slurm.wall_s / local.wall_s:.2f}, "
        f"+{slurm.wall_s - local.wall_s:.1f} s, {(slurm.wall_s - local.wall_s) / jobs:.1f} s per job. "
        f"Benchmarked jobs' own run time: local {local.job_s:.1f} s, SLURM {slurm.job_s:.1f} s.",
    ]
    with atomic_path(args.out) as tmp:
        tmp.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
