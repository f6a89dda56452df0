"""Wall time of a profile's DAG from a fresh clone, per stage, read from Snakemake's own log.

With ``--run`` it runs ``snakemake --cores all`` (plus ``--configfile`` for another profile) in ``--workdir`` (a fresh
clone whose ``.venv`` exists: the reproduce command's setup, or a CI run's; with ``--setup`` it runs that setup first,
timed, so the block gives the README's whole reproduce command) and times it; without, it reads ``--log``
(or the newest log in ``--workdir/.snakemake/log``). Every job's start and finish come from the log's timestamps
(one-second resolution); a stage's span is its first start to its last finish (stages overlap: Snakemake runs jobs of
different stages side by side), its job-minutes the sum of its jobs' durations (what it costs the machine). The
report goes to ``--out`` and, between the markers ``<!-- BLOCK:begin -->`` / ``<!-- BLOCK:end -->``, into ``--doc``
(tools/doc_blocks.py): the docs quote this measured table, never a hand-typed time. The README's profiles
table reads the total from ``--out`` (tools/readme_tables.py). With ``--run`` the machine's speed is measured first,
on the idle machine (benchmarks/host_speed.py), and printed beside the total: machines of one kind have run the same
DAG a factor 2 apart, so a time is read with the speed that made it.

Run (from the repository root, after a fresh clone was set up in /tmp/fresh):
    python benchmarks/dag_runtime.py --workdir /tmp/fresh --run --setup --out benchmarks/results/dag_runtime.md \
        --doc docs/operations.md --block dag-runtime
    python benchmarks/dag_runtime.py --workdir /tmp/fresh --run --configfile configs/smoke.yaml \
        --out benchmarks/results/smoke_runtime.md --doc docs/operations.md --block smoke-runtime
    python benchmarks/dag_runtime.py --workdir /tmp/fresh --run --targets results/claims.csv \
        results/premises/rl_learns.csv figures/positive_control.png \
        --configfile configs/ablations/positive_control.yaml --out benchmarks/results/positive_control_runtime.md \
        --doc docs/operations.md --block positive-control-runtime
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ead.io import atomic_path
from ead.settings.analyses import ANALYSES
from ead.workflow import FIGURES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))  # doc_blocks.py, also when loaded by path
from doc_blocks import replace_between_markers as replace_named_block  # noqa: E402
from doc_blocks import replace_block  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # host_speed.py beside this file
import host_speed  # noqa: E402

# Every rule of the workflow, by stage; a rule missing here stops the report (so a new rule is placed, not dropped).
STAGE_OF_RULE = {
    "real_dataset": "data", "countdown_dataset": "data", "schedule_table": "data", "paper_data": "data",
    "synthetic_dataset": "data", "verl_local_data": "data", "verl_local_model": "models",
    "smollm2": "models", "paper_model": "models", "tiny_policy_sft": "models", "sharpened_policy": "models",
    "fork_sharpened_policy": "models",
    "tiny_policy_base_eval": "base evaluation", "rl_base_eval": "base evaluation",
    "premises": "premise probe",
    **{analysis: "sampling analyses" for analysis in ANALYSES},  # one rule per analysis (workflow/rules/analyses.smk)
    "analysis_summary": "sampling analyses", "analysis_claims": "sampling analyses",
    "rl_cell": "RL grid", "rl_cell_eval": "RL grid", "rl_cell_verl": "RL grid",
    "rl_tables": "tables, claims, figures", "claims": "tables, claims, figures", "summary": "tables, claims, figures",
    "fingerprint": "tables, claims, figures",
    "rl_learns": "tables, claims, figures",
    # every figure's rule, from the one registry (ead.workflow.FIGURES)
    **{figure.rule: "tables, claims, figures" for figure in FIGURES.values()}, "all": "tables, claims, figures",
    "rl_paired_curves": "tables, claims, figures", "schedule_shapes_table": "tables, claims, figures",
    "rl_breakdown": "tables, claims, figures",
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


def render(jobs: list[Job], command_seconds: float | None, label: str, setup_seconds: float | None = None,
           host_step_seconds: float | None = None) -> str:
    rows = stage_table(jobs)
    origin, end = min(job.start for job in jobs), max(job.finish for job in jobs)
    lines = [
        f"{label}: {len(jobs)} jobs, first job start to last job finish "
        f"**{(end - origin).total_seconds() / 60:.1f} min**"
        + (f" (the `snakemake` command, DAG building included: {command_seconds / 60:.1f} min)"
           if command_seconds else "")
        + (f"; the set-up before it (`bash workflow/scripts/setup.sh`): {setup_seconds / 60:.1f} min, so the "
           f"README's reproduce command took {(setup_seconds + command_seconds) / 60:.1f} min"
           if setup_seconds is not None and command_seconds else "")
        + f"; {sum(job.seconds for job in jobs) / 60:.1f} job-minutes on 2 cores."
        + (f" The machine's speed, measured before the run: {host_step_seconds:.2f} s per reference training step "
           "(`benchmarks/host_speed.py`: one step of tiny1m's SFT, the job the run's first half waits for)."
           if host_step_seconds is not None else ""),
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
    """The default profile's block (``dag-runtime``) replaced by ``block``."""
    return replace_named_block(text, block, where, "dag-runtime")


def commit_before(workdir: Path, moment: dt.datetime) -> str:
    """The short hash of the newest commit of ``workdir`` made before ``moment`` (the code a read log ran)."""
    return subprocess.run(["git", "log", "-1", "--format=%h", f"--before={moment:%Y-%m-%d %H:%M:%S}"], cwd=workdir,
                          capture_output=True, text=True, check=True).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, required=True, help="a clone of this repository with its .venv")
    parser.add_argument("--run", action="store_true", help="run `snakemake --cores all` there first, timed")
    parser.add_argument("--setup", action="store_true",
                        help="with --run: run `bash workflow/scripts/setup.sh` before it, timed (the README's "
                             "reproduce command is both)")
    parser.add_argument("--configfile", help="the profile's config file (none: the default profile)")
    parser.add_argument("--targets", nargs="*", default=[],
                        help="with --run: these targets instead of `rule all` (an overlay's, e.g. the "
                             "positive control's)")
    parser.add_argument("--log", type=Path, help="read this Snakemake log instead of the newest one in --workdir")
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    parser.add_argument("--doc", type=Path, help="Markdown file whose block --block gets the stage table")
    parser.add_argument("--block", default="dag-runtime", help="name of the marked block in --doc")
    parser.add_argument("--level", default="avx2",
                        help="with --run: the CPU kernel level of the host-speed probe (the profile's "
                             "numerics.cpu_level; default avx2)")
    args = parser.parse_args()

    command_seconds = setup_seconds = host_step_seconds = None
    if args.run:  # on the idle machine, before anything of the run starts
        host_step_seconds = host_speed.measure(args.level)
    command = [str(args.workdir / ".venv/bin/snakemake"), "--cores", "all"]
    if args.configfile:
        command += ["--configfile", args.configfile]
    command[1:1] = args.targets  # before --configfile, which takes every word after it
    if args.setup:
        if not args.run:
            parser.error("--setup needs --run")
        started = time.perf_counter()
        subprocess.run(["bash", "workflow/scripts/setup.sh"], cwd=args.workdir, check=True)
        setup_seconds = time.perf_counter() - started
    if args.run:
        started = time.perf_counter()
        subprocess.run(command, cwd=args.workdir, check=True)
        command_seconds = time.perf_counter() - started
    if args.log:
        log = args.log
    else:
        logs = sorted((args.workdir / ".snakemake/log").glob("*.snakemake.log"))
        if not logs:
            raise SystemExit(f"no Snakemake log in {args.workdir / '.snakemake/log'}")
        log = logs[-1]
    jobs = parse_log(log.read_text())
    started_at = min(job.start for job in jobs)
    commit = (subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.workdir, capture_output=True,
                             text=True, check=True).stdout.strip() if args.run
              else commit_before(args.workdir, started_at))
    profile = Path(args.configfile).stem if args.configfile else "default"
    label = (f"{profile.capitalize() if profile == 'default' else f'`{profile}`'} profile "
             f"{'from a fresh clone ' if args.run else ''}at commit `{commit}`, measured {started_at:%Y-%m-%d} "
             f"(`{log.name}`)")
    block = render(jobs, command_seconds, label, setup_seconds, host_step_seconds)
    shown = " ".join(["python benchmarks/dag_runtime.py --workdir <fresh clone> --run",
                      *(["--setup"] if args.setup else []), *args.targets,
                      *([f"--configfile {args.configfile}"] if args.configfile else []), f"--out {args.out}"])
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(f"# {profile} profile: DAG runtime\n\nCommand: `{shown}`\n\n{block}")
    if args.doc:
        replace_block(args.doc, args.block, block)
    print(block)


if __name__ == "__main__":
    main()
