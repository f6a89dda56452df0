"""The smoke profile's DAG is pinned: every job and its command line, as the workflow plans them.

A refactor of how the config becomes job settings (ead.settings, workflow/rules/*_inputs.smk) must leave every job's
parameters as they were, or Snakemake reruns jobs (and results may change). The fixture was made by the code before
the settings package; a change meant to alter the DAG regenerates it on purpose:

    .venv/bin/python tests/end_to_end/test_smoke_dag.py --regenerate
"""

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "smoke_dag_commands.txt"
HEADER = [
    "# Every job of the smoke profile's DAG (snakemake -n -p --forceall --configfile configs/smoke.yaml), sorted, "
    "then the job counts.",
    "# Regenerate deliberately when a change is meant to alter the DAG: "
    "python tests/end_to_end/test_smoke_dag.py --regenerate",
]


def planned_commands(workdir: Path) -> list[str]:
    """Sorted shell commands and job counts of a forced dry run of the smoke profile in ``workdir``."""
    for name in ("Snakefile", "environment.yml"):
        shutil.copy(ROOT / name, workdir / name)
    for name in ("workflow", "configs"):
        shutil.copytree(ROOT / name, workdir / name)
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "-p", "--forceall", "--cores", "2",
                             "--configfile", "configs/smoke.yaml"], cwd=workdir, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    commands = sorted(line.strip() for line in lines if line.strip().startswith("Shell command:"))
    start = next(i for i, line in enumerate(lines) if line.startswith("Job stats"))
    counts = []
    for line in lines[start + 3:]:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            break
        counts.append(f"{fields[0]} {fields[1]}")
    return commands + sorted(counts)


def fixture_lines() -> list[str]:
    return [line for line in FIXTURE.read_text().splitlines() if not line.startswith("#")]


# In the fast lane although a Snakemake dry run (about 5 s): every change to a rule's arguments must regenerate the
# fixture on purpose, and the fast lane is what a developer runs between edits.
def test_the_smoke_dag_plans_the_pinned_jobs(tmp_path):
    planned = planned_commands(tmp_path)
    expected = fixture_lines()
    missing = [line for line in expected if line not in planned]
    added = [line for line in planned if line not in expected]
    assert not missing and not added, (f"{len(missing)} pinned job lines missing, {len(added)} new; first missing: "
                                       f"{missing[:2]}; first new: {added[:2]}")


if __name__ == "__main__" and sys.argv[1:] == ["--regenerate"]:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        FIXTURE.write_text("\n".join([*HEADER, *planned_commands(Path(directory))]) + "\n")
    print(f"wrote {FIXTURE}")
