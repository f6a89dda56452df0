"""The workflow through a real SLURM cluster on this machine (workflow/scripts/slurm_local.sh, docs/cluster.md).

A slice of the smoke profile's DAG runs with ``--workflow-profile workflow/profiles/slurm_local`` in a copy of the
session's finished smoke run (``smoke_run``, tests/conftest.py): the RL cell tiny1m/dapo/ead_tis/n8/seed0 (training,
with its checkpoints) and its evaluation table, the schedule table and Fig. 3, forced to run again. Every one of
those jobs must be a SLURM job that slurmctld allocated and completed, and the tables must equal the ones the local
smoke run wrote from the same inputs. Then the cell's training job is cancelled with scancel after its first
checkpoint: the profile's retry resubmits it and it resumes to the same tables. A wrong partition gives one clear
error. The cluster lives in its own state directory and writes nothing outside it (checked against a listing with
hashes of /etc and of SLURM's and munge's default places, taken before it started and after it stopped). The cluster
is stopped afterwards (also when a test fails) unless it was already running before these tests. Every external
command runs under ``timeout -k``.

Needs root and Debian's slurm-wlm and munge (``bash workflow/scripts/setup.sh --tests`` installs them); without them
the tests skip with the reason, except under ``CI=true``, where a missing cluster is a failure.
"""

import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import SMOKE_ARGS, copy_run

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "workflow" / "scripts" / "slurm_local.sh"
STATE = Path(os.environ.get("SLURM_LOCAL_DIR", ROOT / ".slurm-local")).resolve()
SLURM_CONF = STATE / "slurm.conf"
PROFILE = ROOT / "workflow" / "profiles" / "slurm_local"
HOLD = ROOT / "tests" / "fixtures" / "hold_after_checkpoint"  # its sitecustomize holds a job after a checkpoint
CELL = "results/rl/tiny1m/dapo/ead_tis/n8/seed0"
CHECKPOINT = "results/checkpoints/rl/tiny1m/dapo/ead_tis/n8/seed0/trainer_state.pt"
CELL_LOG = "results/logs/rl/tiny1m/dapo/ead_tis/n8/seed0.log"
TARGETS = [f"{CELL}/eval.csv", "figures/fig03_annealing_schedule.png"]
SLICE_RULES = {"rl_cell", "rl_cell_eval", "schedule_table", "fig03_annealing_schedule"}
TABLES = [f"{CELL}/steps.csv", f"{CELL}/eval_problems.csv", f"{CELL}/eval.csv", "results/schedule/schedule_table.csv"]
CLOCK = ["rollout_s", "grade_s", "update_s", "wall_time_s"]  # wall-clock timings: the only columns that may differ
CONTROLLER_LOG_START = []  # byte offset of slurmctld's log when the cluster fixture was set up
SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/")
#: Where SLURM and munge write by default (config, keys, sockets, pid files, state, spool, logs): the cluster must
#: leave every file there as it found it. /etc whole, with a hash per file; the others as listings with hashes.
SYSTEM_PLACES = [Path(path) for path in ("/etc", "/run", "/var/run", "/var/lib/slurm", "/var/lib/munge",
                                         "/var/spool", "/var/log/slurm", "/var/log/munge")]
#: Shared memory (a tmpfs that any process, a concurrent test among them, writes): not SLURM's, not listed.
SYSTEM_UNLISTED = {Path("/run/shm"), Path("/var/run/shm")}
SYSTEM_BEFORE = []  # the listing of SYSTEM_PLACES taken before the cluster started

pytestmark = pytest.mark.slow


def environment():
    """This process's environment with the checkout's src/ first on the path and SLURM's commands (ours, Snakemake's
    plugin's, the jobs') pointed at the local cluster's config in its state directory: what `slurm_local.sh env`
    prints (SLURM_CONF, and its command wrappers first on PATH, which the jobs' nested srun needs)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
            "SLURM_CONF": str(SLURM_CONF), "SLURM_LOCAL_DIR": str(STATE),
            "PATH": os.pathsep.join([str(STATE / "bin"), os.environ["PATH"]])}


def run(command, timeout_s, **kwargs):
    """``command`` under ``timeout -k`` (a hung SLURM poll must not hang the suite), output captured."""
    kwargs.setdefault("env", environment())
    return subprocess.run(["timeout", "-k", "10", str(timeout_s), *map(str, command)], capture_output=True,
                          text=True, **kwargs)


def snakemake_command(*args):
    return [sys.executable, "-m", "snakemake", *TARGETS, *SMOKE_ARGS, *args]


def missing_cluster_reason() -> str | None:
    """Why the local cluster cannot run here (None if it can)."""
    if os.geteuid() != 0:
        return "the local SLURM cluster needs root (slurmd runs jobs as their users)"
    missing = [name for name in ("slurmctld", "slurmd", "munged", "mungekey", "sbatch") if not shutil.which(name)]
    if missing:
        return (f"SLURM is not installed ({', '.join(missing)} missing): "
                "`bash workflow/scripts/setup.sh --tests` installs slurm-wlm and munge as root")
    return None


def system_listing() -> dict[str, str]:
    """Every file, link and folder under SYSTEM_PLACES, with the sha256 of each regular file's content."""
    listing = {}
    for place in SYSTEM_PLACES:
        for path in [place, *place.rglob("*")] if place.exists() else []:
            if any(path == unlisted or unlisted in path.parents for unlisted in SYSTEM_UNLISTED):
                continue
            try:
                if path.is_symlink():
                    listing[str(path)] = "-> " + os.readlink(path)
                elif path.is_file():
                    listing[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    listing[str(path)] = "folder" if path.is_dir() else "other"
            except (PermissionError, FileNotFoundError, OSError):
                listing[str(path)] = "unreadable"
    return listing


@pytest.fixture(scope="module")
def cluster(request):
    if reason := missing_cluster_reason():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and {reason}")
        pytest.skip(reason)
    already_running = run(["bash", SCRIPT, "status"], 60).returncode == 0
    SYSTEM_BEFORE.append(system_listing())

    def stop():
        stopped = run(["bash", SCRIPT, "stop"], 240)
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        assert not any(path.exists() for path in (STATE / "slurmctld.pid", STATE / "slurmd.pid",
                                                  STATE / "munge" / "munged.pid"))

    if not already_running:
        request.addfinalizer(stop)  # before the start's check: a half-started cluster is stopped too
    started = run(["bash", SCRIPT, "start"], 900)
    assert started.returncode == 0, started.stdout + started.stderr
    CONTROLLER_LOG_START.append(controller_log_path().stat().st_size)  # job ids restart with a clean state
    return stop if not already_running else None


@pytest.fixture(scope="module")
def base():
    """A directory of these tests' own (not pytest's tmp_path: its retention may delete it under a long run when
    other pytest sessions of the same user start meanwhile)."""
    with tempfile.TemporaryDirectory(prefix="ead-slurm-local-") as directory:
        yield Path(directory)


@pytest.fixture(scope="module")
def runs(cluster, base, smoke_run):
    """The slice forced to run again through SLURM in a copy of the session's smoke run; (SLURM run's root, the
    local smoke run's root, SLURM run's output). The local run made the slice's inputs (data, the SFT policy, its
    step-0 evaluation) and its own tables of the same jobs, which the SLURM jobs must reproduce."""
    slurm = copy_run(smoke_run, base / "slurm")
    result = run(snakemake_command("--workflow-profile", PROFILE, "--forcerun", *sorted(SLICE_RULES)), 1500,
                 cwd=slurm)
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-5000:]
    return slurm / "runs" / "smoke", smoke_run / "runs" / "smoke", result.stdout + result.stderr


def submitted_jobs(output: str) -> list[tuple[str, int]]:
    """(rule, SLURM job id) of every submission a Snakemake run reports, in order."""
    return [(rule, int(job)) for job, rule in SUBMITTED.findall(output)]


def controller_log_path() -> Path:
    return STATE / "log" / "slurmctld.log"


def controller_log() -> str:
    """What slurmctld logged since these tests started the cluster (or found it running)."""
    with open(controller_log_path()) as log:
        log.seek(CONTROLLER_LOG_START[-1])
        return log.read()


def assert_same_tables(a: Path, b: Path):
    for table in TABLES:
        first, second = pd.read_csv(a / table), pd.read_csv(b / table)
        assert len(first) > 0, table
        pd.testing.assert_frame_equal(first.drop(columns=CLOCK, errors="ignore"),
                                      second.drop(columns=CLOCK, errors="ignore"), obj=table)


def test_every_job_of_the_slice_ran_as_a_slurm_job(runs):
    slurm, _, output = runs
    jobs = submitted_jobs(output)
    assert sorted(rule for rule, _ in jobs) == sorted(SLICE_RULES)  # each job once, none run locally
    assert "localrule" not in output.split("Job stats", 1)[1]
    log = controller_log()
    for rule, job in jobs:
        # started by the main scheduler or by backfill, in the profile's partition
        assert re.search(rf"(sched: Allocate JobId={job} NodeList=\S+ #CPUs=\d+ Partition=cpu$"
                         rf"|sched/backfill: _start_job: Started JobId={job} in cpu on )", log, re.M), rule
        assert re.search(rf"_job_complete: JobId={job} done", log), rule
        job_log = next((slurm / ".snakemake" / "slurm_logs" / f"rule_{rule}").rglob(f"{job}.log")).read_text()
        assert f"(Rule: {rule})" in job_log and "--executor slurm-jobstep" in job_log, rule
    last_rule, last_job = jobs[-1]
    shown = run(["scontrol", "show", "job", last_job], 60)  # still listed: finished < MinJobAge seconds ago
    # the plugin's comment: rule_<name>, with _wildcards_<values> only for a job that has wildcards (fig03 has none)
    assert "JobState=COMPLETED" in shown.stdout, shown.stdout
    assert re.search(rf"^\s*Comment=rule_{last_rule}(_wildcards_\S+)?\s*$", shown.stdout, re.M), shown.stdout


def test_slurm_tables_equal_a_local_runs(runs):
    slurm, local, _ = runs
    assert_same_tables(slurm, local)
    assert (slurm / "figures" / "fig03_annealing_schedule.png").stat().st_size > 0


def stop_session(process: subprocess.Popen) -> None:
    """End a Snakemake started in its own session if it still runs: SIGINT (Snakemake then cancels its SLURM jobs),
    SIGKILL to the whole group after 60 s."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def training_started(log: Path) -> bool:
    try:
        return " rl INFO cell " in log.read_text()
    except FileNotFoundError:
        return False


def running_cell_job(snakemake: subprocess.Popen, log: Path) -> int:
    """The SLURM job id of the RL cell once its training loop started (its comment names the rule)."""
    deadline = time.monotonic() + 600
    while not training_started(log) and snakemake.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    while snakemake.poll() is None and time.monotonic() < deadline:
        queue = run(["squeue", "--noheader", "--states", "R", "--format", "%i %k"], 60).stdout.splitlines()
        # the comment is rule_<rule>_wildcards_<values> (snakemake-executor-plugin-slurm)
        jobs = [int(line.split()[0]) for line in queue if " rule_rl_cell_wildcards_" in line]
        if jobs:
            return jobs[0]
        time.sleep(0.5)
    raise AssertionError("the RL cell's SLURM job never ran")


def job_is_running(job: int) -> bool:
    return run(["squeue", "--noheader", "--jobs", job, "--states", "R", "--format", "%i"], 60).stdout.strip() != ""


def test_a_cancelled_training_job_is_resubmitted_and_resumes_to_the_same_tables(runs):
    slurm, local, _ = runs
    (slurm / CELL_LOG).unlink()  # the first run's; the new job's training writes it afresh
    log = open(slurm / "cancel.log", "w")
    checkpoint = slurm / CHECKPOINT
    held = slurm.parent.parent / "checkpoint.held"
    # The job holds right after its step-1 checkpoint is in place (HOLD's sitecustomize), so the cancellation lands
    # between that checkpoint and the tables however long scancel takes to act: without the hold a loaded machine
    # let the job write its tables and discard its checkpoint before the signal came, and the retry started over.
    hold = {"PYTHONPATH": os.pathsep.join([str(HOLD), environment()["PYTHONPATH"]]),
            "EAD_TEST_HOLD_AFTER": str(checkpoint.parent), "EAD_TEST_HOLD_MARKER": str(held)}
    rerun = subprocess.Popen(["timeout", "-k", "10", "1200",
                              *snakemake_command("--workflow-profile", PROFILE, "--forcerun", "rl_cell")],
                             cwd=slurm.parent.parent, env={**environment(), **hold}, stdout=log,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        job = running_cell_job(rerun, slurm / CELL_LOG)
        while not held.exists() and job_is_running(job):
            time.sleep(0.05)
        # Not with scontrol suspend: a suspended job's processes stay stopped through scancel and the job hangs
        # COMPLETING
        cancelled = run(["scancel", job], 60)
        assert held.exists(), "the cell's SLURM job ended without holding after its checkpoint"
        assert checkpoint.exists(), "the cell's SLURM job ended without a checkpoint being seen"
        assert not (slurm / CELL / "steps.csv").exists(), "the cell finished before it could be cancelled"
        assert cancelled.returncode == 0, cancelled.stderr
        assert rerun.wait(timeout=1200) == 0, (slurm / "cancel.log").read_text()[-5000:]
    finally:
        stop_session(rerun)
        log.close()
    output = (slurm / "cancel.log").read_text()
    cell_jobs = [number for rule, number in submitted_jobs(output) if rule == "rl_cell"]
    assert cell_jobs[0] == job and len(cell_jobs) == 2, cell_jobs  # the profile's retry: a new SLURM job
    assert re.search(rf"_job_complete: JobId={cell_jobs[1]} done", controller_log())
    assert re.search(r"resuming from \S+ after step 1", (slurm / CELL_LOG).read_text())
    assert not checkpoint.exists()  # the finished cell discards its checkpoint
    assert_same_tables(slurm, local)


def test_a_wrong_partition_gives_one_clear_error(runs, base):
    slurm, _, _ = runs
    site = base / "site"
    made = run([sys.executable, "-m", "ead.operations.slurm_profile", "--base", PROFILE, "--out", site,
                "--partition", "cpu=nosuch"], 120)
    assert made.returncode == 0, made.stderr
    checked = run([sys.executable, "-m", "ead.operations.slurm_profile", "--check", site], 120)
    assert checked.returncode == 2
    assert checked.stderr.strip().splitlines() == [
        f"ead.operations.slurm_profile: error: {site}/config.yaml: slurm_partition 'nosuch' (default-resources) not on "
        "this cluster, which has cpu, gpu"]
    result = run([sys.executable, "-m", "snakemake", "results/schedule/schedule_table.csv", "--forcerun",
                  "schedule_table", *SMOKE_ARGS, "--workflow-profile", site], 300, cwd=slurm.parent.parent)
    assert result.returncode == 1, result.stdout + result.stderr  # an error, not the timeout's 124
    assert "invalid partition specified: nosuch" in result.stdout + result.stderr
    assert not submitted_jobs(result.stdout + result.stderr)  # nothing was submitted


def test_the_cluster_keeps_its_files_in_its_state_directory_and_leaves_the_system_as_it_was(cluster, runs):
    """The last test of the module (it stops the cluster it started): SLURM's config, state, spool, logs and pid
    files, and munge's key, socket, seed, log and pid file are under the state directory, and /etc and SLURM's and
    munge's default places hold exactly what they held before the cluster started."""
    shown = run(["scontrol", "show", "config"], 60)
    assert shown.returncode == 0, shown.stderr
    config = dict(re.findall(r"^(\S+)\s+= (.*)$", shown.stdout, re.M))
    assert config["SLURM_CONF"] == str(SLURM_CONF)
    for key in ("StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile", "SlurmdPidFile", "SlurmctldLogFile",
                "SlurmdLogFile"):
        assert Path(config[key]).is_relative_to(STATE), (key, config[key])
    assert config["AuthInfo"] == f"socket={STATE / 'munge' / 'munge.socket'}"
    for name in ("munge.key", "munge.socket", "munged.pid", "munged.log"):
        assert (STATE / "munge" / name).exists(), name
    if cluster is not None:  # started by these tests: stop it, then nothing of it may be left anywhere
        cluster()
    after = system_listing()
    before = SYSTEM_BEFORE[-1]
    changed = sorted(path for path in before.keys() | after.keys() if before.get(path) != after.get(path))
    assert changed == [], {path: (before.get(path), after.get(path)) for path in changed}
