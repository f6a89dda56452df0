"""Wall time of the default DAG from a fresh clone, per stage, read from Snakemake's own log (issue #15 step 5).

With ``--run`` it runs ``snakemake --cores all`` in ``--workdir`` (a fresh clone whose ``.venv`` exists: the
reproduce command's setup, or a CI run's) and times it; without, it reads the newest log already in
``--workdir/.snakemake/log``. Every job's start and finish come from the log's timestamps (one-second resolution);
a stage's span is its first start to its last finish (stages overlap: Snakemake runs jobs of different stages
side by side), its job-minutes the sum of its jobs' durations (what it costs the machine). The report goes to
``--out`` and, between the ``dag-runtime`` markers, into ``--readme``: the README quotes this measured table, never
a hand-typed time.

Run (from the repository root, after a fresh clone was set up in /tmp/fresh):
    python benchmarks/dag_runtime.py --workdir /tmp/fresh --run --out benchmarks/results/dag_runtime.md \
        --readme README.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from ead.io import atomic_path
from ead.workflow import FIGURES

# Every rule of the workflow, by stage; a rule missing here stops the report (so a new rule is placed, not dropped).
STAGE_OF_RULE = {
    "real_dataset": "data", "countdown_dataset": "data", "schedule_table": "data", "paper_data": "data",
    "synthetic_dataset": "data", "verl_local_data": "data", "verl_local_model": "models",
    "smollm2": "models", "paper_model": "models", "tiny_policy_sft": "models", "sharpened_policy": "models",
    "tiny_policy_base_eval": "base evaluation", "rl_base_eval": "base evaluation",
    "premises": "premise probe",
    "entropy_by_position": "sampling analyses", "forking": "sampling analyses", "majority_scaling": "sampling analyses",
    "analysis_summary": "sampling analyses", "analysis_claims": "sampling analyses",
    "rl_cell": "RL grid", "rl_cell_eval": "RL grid", "rl_cell_verl": "RL grid",
    "rl_tables": "tables, claims, figures", "claims": "tables, claims, figures", "summary": "tables, claims, figures",
    "rl_learns": "tables, claims, figures",
    # every figure's rule, from the one registry (ead.workflow.FIGURES)
    **{figure.rule: "tables, claims, figures" for figure in FIGURES.values()}, "all": "tables, claims, figures",
    "rl_paired_curves": "tables, claims, figures", "schedule_shapes_table": "tables, claims, figures",
    "measured_schedule": "sampling analyses",
    # the inference-only comparison (configs/ablations/inference_only.yaml) samples like the analyses
    "inference_only_eval": "sampling analyses", "inference_only_table": "sampling analyses",
}
STAGES = list(dict.fromkeys(STAGE_OF_RULE.values()))
MARKERS = ("<!-- dag-runtime:begin -->", "<!-- dag-runtime:end -->")

TIMESTAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")


@dataclass
class Job:
    jobid: int
    rule: str
    start: dt.datetime
    finish: dt.datetime | None = None

    @property
    def seconds(self) -> float:
        return (self.finish - self.start).total_seconds()


def parse_log(text: str) -> list[Job]:
    """Jobs of one Snakemake log (9.x format) with start and finish times; a job that never finished is an error."""
    jobs: dict[int, Job] = {}
    stamp: dt.datetime | None = None
    pending_rule: str | None = None
    for line in text.splitlines():
        if match := TIMESTAMP.match(line):
            stamp = dt.datetime.strptime(match.group(1), "%a %b %d %H:%M:%S %Y")
        elif match := RULE.match(line):
            pending_rule = match.group(1)
        elif (match := JOBID.match(line)) and pending_rule is not None:
            jobs[int(match.group(1))] = Job(int(match.group(1)), pending_rule, stamp)
            pending_rule = None
        elif match := FINISHED.match(line):
            jobs[int(match.group(1))].finish = stamp
    unfinished = [f"{job.rule} (jobid {job.jobid})" for job in jobs.values() if job.finish is None]
    if unfinished:
        raise ValueError(f"the log has jobs that never finished (a failed or interrupted run): {unfinished}")
    if not jobs:
        raise ValueError("the log has no jobs (was everything already up to date?)")
    return sorted(jobs.values(), key=lambda job: (job.start, job.jobid))


def stage_table(jobs: list[Job]) -> list[dict]:
    """One row per stage present: jobs, span (first start to last finish, minutes from the run's start), job-minutes."""
    unknown = sorted({job.rule for job in jobs} - STAGE_OF_RULE.keys())
    if unknown:
        raise ValueError(f"rules {unknown} have no stage in STAGE_OF_RULE (benchmarks/dag_runtime.py); add them")
    origin = min(job.start for job in jobs)
    rows = []
    for stage in STAGES:
        members = [job for job in jobs if STAGE_OF_RULE[job.rule] == stage]
        if not members:
            continue
        first = (min(job.start for job in members) - origin).total_seconds() / 60
        last = (max(job.finish for job in members) - origin).total_seconds() / 60
        rows.append({"stage": stage, "jobs": len(members), "from_min": first, "to_min": last,
                     "job_min": sum(job.seconds for job in members) / 60,
                     "longest": max(members, key=lambda job: job.seconds)})
    return rows


def render(jobs: list[Job], command_seconds: float | None, label: str) -> str:
    rows = stage_table(jobs)
    origin, end = min(job.start for job in jobs), max(job.finish for job in jobs)
    lines = [
        f"{label}: {len(jobs)} jobs, first job start to last job finish "
        f"**{(end - origin).total_seconds() / 60:.1f} min**"
        + (f" (the `snakemake` command, DAG building included: {command_seconds / 60:.1f} min)"
           if command_seconds else "")
        + f"; {sum(job.seconds for job in jobs) / 60:.1f} job-minutes on 2 cores.",
        "",
        "| stage | jobs | runs from - to (min) | job-minutes | longest job |",
        "|---|---:|---:|---:|---|",
    ]
    for row in rows:
        longest = row["longest"]
        lines.append(f"| {row['stage']} | {row['jobs']} | {row['from_min']:.1f} - {row['to_min']:.1f} | "
                     f"{row['job_min']:.1f} | {longest.rule} {longest.seconds / 60:.1f} min |")
    return "\n".join(lines) + "\n"


def replace_between_markers(text: str, block: str, where: str) -> str:
    begin, end = MARKERS
    if text.count(begin) != 1 or text.count(end) != 1:
        raise ValueError(f"{where} must hold exactly one {begin} and one {end}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{block}{end}{tail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True, help="a clone of this repository with its .venv")
    parser.add_argument("--run", action="store_true", help="run `snakemake --cores all` there first, timed")
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    parser.add_argument("--readme", type=Path, help="README whose dag-runtime block gets the stage table")
    args = parser.parse_args()

    command_seconds = None
    if args.run:
        started = time.perf_counter()
        subprocess.run([str(args.workdir / ".venv/bin/snakemake"), "--cores", "all"], cwd=args.workdir, check=True)
        command_seconds = time.perf_counter() - started
    logs = sorted((args.workdir / ".snakemake/log").glob("*.snakemake.log"))
    if not logs:
        raise SystemExit(f"no Snakemake log in {args.workdir / '.snakemake/log'}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.workdir, capture_output=True,
                            text=True, check=True).stdout.strip()
    jobs = parse_log(logs[-1].read_text())
    label = (f"Default profile from a fresh clone at commit `{commit}`, measured "
             f"{min(job.start for job in jobs):%Y-%m-%d} (`{logs[-1].name}`)")
    block = render(jobs, command_seconds, label)
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(f"# Default DAG runtime\n\nCommand: `python benchmarks/dag_runtime.py --workdir "
                             f"<fresh clone> --run --out {args.out}`\n\n{block}")
    if args.readme:
        updated = replace_between_markers(args.readme.read_text(), block, str(args.readme))
        with atomic_path(args.readme) as tmp:
            Path(tmp).write_text(updated)
    print(block)


if __name__ == "__main__":
    main()
