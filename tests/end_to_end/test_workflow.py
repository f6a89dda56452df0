"""The Snakemake workflow end to end on the smoke profile, its incremental reruns, config errors and lint.

The tests work in one copy of the session's smoke run (tests/conftest.py, ``smoke_run``: a copy of the workflow,
Snakefile, environment files, workflow/ and configs/, in which the smoke profile ran from an empty directory), so the
checkout's own results/ and figures/ are never touched. The `ead` package comes from the installed environment; the
test that edits a module of it edits a private copy (``PYTHONPATH``), never the checkout's, which tests running beside
it import.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from ead.claims import VERDICTS
from ead.settings import load_layered_config
from ead.settings.rl import expand_grid
from ead.workflow import final_figures, rl_figures
from tests.conftest import SMOKE_ARGS

ROOT = Path(__file__).resolve().parents[2]
# Downloads (registry wheels) are shared with the rest of the test suite instead of being fetched per copy.
# The figures of the default and smoke profiles, from the one registry (ead.workflow.FIGURES)
FIGURES = final_figures(load_layered_config(ROOT / "configs" / "config.yaml"))
RL_FIGURES = [name for name in FIGURES if name in rl_figures()]
SMOKE = list(SMOKE_ARGS)


def snakemake(workdir, *args, check=True, package: Path | None = None):
    """``snakemake --cores 2 *args`` in ``workdir``; with ``package``, a directory holding a copy of `ead` that the
    workflow and its jobs import instead of the installed one."""
    env = None if package is None else {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(package), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "2", *args], cwd=workdir,
                            capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result


def planned_jobs(workdir, *args, package: Path | None = None):
    """{rule name: number of jobs} a dry run would execute (empty when there is nothing to do)."""
    result = snakemake(workdir, "--dry-run", *args, package=package)
    if "Nothing to be done" in result.stdout + result.stderr:
        return {}
    lines = (result.stdout + result.stderr).splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Job stats"))
    jobs = {}
    for line in lines[start + 3:]:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            break
        if fields[0] != "total":
            jobs[fields[0]] = int(fields[1])
    return jobs


def planned_rules(workdir, *args, package: Path | None = None):
    """Rule names of the jobs a dry run would execute (empty when there is nothing to do)."""
    return set(planned_jobs(workdir, *args, package=package))


def smoke_config():
    """The smoke profile as Snakemake sees it: configs/config.yaml updated recursively by configs/smoke.yaml."""
    return load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "smoke.yaml")


@pytest.fixture(scope="module")
def workdir(module_smoke_run_copy):
    """A copy of the session's smoke run (tests/conftest.py, ``smoke_run``: the whole DAG from an empty directory)."""
    return module_smoke_run_copy


@pytest.mark.slow
def test_smoke_profile_renders_every_figure_then_has_nothing_to_do(workdir):
    # the session's smoke run built the whole DAG from an empty directory; its copy here is complete as it stands
    assert planned_rules(workdir, *SMOKE) == set()
    out = workdir / "runs" / "smoke"  # the smoke profile's own root; the default profile's results/ stay untouched
    assert not (workdir / "results").exists() and not (workdir / "figures").exists()
    for stem in FIGURES:
        for fmt in ("png", "pdf"):
            path = out / "figures" / f"{stem}.{fmt}"
            assert path.stat().st_size > 1000, path
        assert b"ead-profile=smoke" in (out / "figures" / f"{stem}.pdf").read_bytes(), stem
    for policy in ("tiny1m", "tiny1m_sharp"):
        base = pd.read_csv(out / "results" / "eval" / f"{policy}_base.csv")
        assert set(base.metric) == {"greedy_accuracy", "pass@1", "worst@1", "pass@4", "worst@4"}
        assert (base.num_problems == 8).all() and (base.n == 4).all()
    # every grid cell trained and was aggregated: steps 1..2, evaluations at every step (rl.eval.every 1)
    cells = expand_grid(smoke_config()["rl"])
    train = pd.read_csv(out / "results" / "rl" / "train_curves.csv")
    evaluated = pd.read_csv(out / "results" / "rl" / "eval_curves.csv")
    for table in (train, evaluated):
        combinations = {(c.policy, c.algorithm, c.sampler, c.n) for c in cells}
        assert len(table.groupby(["policy", "algorithm", "sampler", "n"])) == len(combinations)
    assert sorted(train.step.unique()) == [1, 2] and sorted(evaluated.step.unique()) == [0, 1, 2]
    # the unbiased estimators, and verl's bootstrap best@k / worst@k (k > 1) under their own names
    assert set(evaluated.metric) == {"greedy_accuracy", "pass@1", "worst@1", "pass@4", "worst@4", "verl_best@4",
                                     "verl_worst@4"}
    assert (out / "results" / "models" / "smollm2-135m-instruct" / "model.safetensors").exists()
    for name in ("math500", "gsm8k", "mmlu", "math", "countdown", "arithmetic"):
        assert len(pd.read_parquet(out / "results" / "data" / f"{name}.parquet")) > 0
    analyses = out / "results" / "analyses"
    model = "smollm2-135m-instruct"
    entropy = pd.read_csv(analyses / "entropy_by_position" / f"{model}.csv")
    assert entropy.position.min() == 0 and entropy.position.max() < 12 and (entropy.mean_entropy > 0).all()
    forking = pd.read_csv(analyses / "forking" / f"{model}.csv")
    assert set(zip(forking.metric, forking.fork_point, forking.k)) == {
        (metric, p, k) for metric in ("maj@k", "pass@k") for p in (0, 4) for k in (1, 3)}
    majority = pd.read_csv(analyses / "majority_scaling" / f"{model}.csv")
    assert set(majority.n) == {1, 2, 3} and majority.sampler.nunique() == 3
    for table in (entropy, forking, majority):
        assert set(table.model_name) == {model} and set(table.engine) == {"hf"}
    # the tiny policy runs the same jobs on its own task: countdown test split, Pass@K only, entropy by token role
    policy_entropy = pd.read_csv(analyses / "entropy_by_position" / "tiny1m.csv")
    policy_forking = pd.read_csv(analyses / "forking" / "tiny1m.csv")
    roles = pd.read_csv(analyses / "entropy_by_role" / "tiny1m.csv")
    for table in (policy_entropy, policy_forking, roles):
        assert set(table.task) == {"countdown"} and set(table.split) == {"test"} and set(table.model_name) == {"tiny1m"}
    # the arithmetic policy votes (Maj@N) on its own task, next to SmolLM2 on GSM8K
    policy_majority = pd.read_csv(analyses / "majority_scaling" / "tiny_arith.csv")
    assert set(policy_majority.task) == {"arithmetic"} and set(policy_majority.n) == {1, 2, 3}
    assert set(policy_forking.metric) == {"pass@k"} and set(roles.role) <= {"operand", "operator", "result", "answer",
                                                                              "syntax", "other", "end"}
    summary = (out / "results" / "summary.md").read_text()
    assert "(profile: smoke)" in summary
    claims = pd.read_csv(out / "results" / "claims.csv")
    # the RL claims (C2 at the last step and over the curve), then those of Figs. 1, 2 and 9
    assert list(claims.claim) == ["C2", "C2-curve", "C7", "F1", "F2", "F3"]
    assert set(claims.verdict) <= set(VERDICTS)  # F1's CI at smoke size lies inside its bound: negligible
    assert list(claims.smallest_effect) == [0.02, 0.02, 0.005, 0.05, 0.02, 0.02]  # each claim's declared bound
    assert list(claims.policy[3:]) == ["tiny1m", "tiny1m", "tiny_arith"]
    assert set(claims.algorithm[3:]) == {"none (no RL)"}
    assert list(claims.over[:2]) == ["last", "curve"]
    # premise G4 on the grid's tau 1.0 cells: one seed, so inconclusive by rule, and every RL claim carries it
    learns = pd.read_csv(out / "results" / "premises" / "rl_learns.csv")
    assert set(learns.premise) == {"G4"} and set(learns.verdict) == {"inconclusive"}
    assert set(claims.rl_learns[:3]) == {"inconclusive"} and claims.rl_learns[3:].isna().all()
    verdicts = pd.read_csv(out / "results" / "premises" / "tiny1m_verdicts.csv")
    assert set(verdicts.premise) == {"G1", "G2", "G3"}
    for section in ("Premises", "Paper claims on the grid and the analyses", "Policies before RL", "RL grid",
                    "Entropy by response position", "Forking", "Majority voting"):
        assert f"## {section}" in summary, section
    assert "### Probed samplers, paired against tau1.0" in summary
    assert "### Entropy by token role (Fig. 1, countdown)" in summary
    assert summary.count("| tiny1m | dapo |") >= 2  # one row per final cell
    for table in (base, train, evaluated, entropy, forking, majority, verdicts, claims, learns):
        assert set(table.profile) == {"smoke"}  # every table records the profile that made it
    assert planned_rules(workdir, *SMOKE) == set()
    # the README's report command as a newcomer types it after this run, without the profile's --configfile: refused
    # naming the unfinished default profile and the smoke run it can report instead, not Snakemake's first missing file
    plain = snakemake(workdir, "--report", "report.html", check=False)
    assert plain.returncode == 1 and "marked for report but does not exist" not in plain.stderr
    assert "snakemake --report: the default profile's run is not finished in results/ and figures/" in plain.stderr
    assert "report a run made here: smoke's (--configfile configs/smoke.yaml)" in plain.stderr
    # one command gives a self-contained HTML report with every figure, the summary and the verdicts
    snakemake(workdir, *SMOKE, "--report", "report.html")
    html = (out / "report.html").read_text()
    for name in [f"{stem}.png" for stem in FIGURES] + ["summary.md", "tiny1m_verdicts.csv"]:
        assert name in html, name


@pytest.mark.slow
def test_editing_tau_max_reruns_only_what_uses_it(workdir):
    snakemake(workdir, *SMOKE)
    config_path = workdir / "configs" / "config.yaml"
    original = config_path.read_text()
    try:
        config = yaml.safe_load(original)
        config["ead"]["tau_max"] = 1.5
        config_path.write_text(yaml.safe_dump(config))
        # the schedule figure, the Maj@N analysis of both its models (their samples, then their summaries, and the
        # arithmetic policy's claim F3), the premise probe (they sample with the ead block's EAD schedule) and exactly
        # the RL cells whose sampler takes tau_max from the `ead` block (and premise G4, which reads every cell's
        # evaluations)
        rl = smoke_config()["rl"]
        ead_cells = [c for c in expand_grid(rl) if rl["samplers"][c.sampler]["name"] == "ead"
                     and "tau_max" not in rl["samplers"][c.sampler]]
        assert 0 < len(ead_cells) < len(expand_grid(rl))
        assert planned_jobs(workdir, *SMOKE) == {"schedule_table": 1, "fig03_annealing_schedule": 1,
                                                 "majority_scaling": 2, "analysis_summary": 2,
                                                 "analysis_claims": 1, "fig09_majority_scaling": 1,
                                                 "rl_cell": len(ead_cells), "rl_cell_eval": len(ead_cells),
                                                 "rl_tables": 1, "rl_paired_curves": 1, "rl_figure": len(RL_FIGURES),
                                                 "premises": len(smoke_config()["premises"]["policies"]),
                                                 "rl_learns": 1, "claims": 1, "summary": 1, "fingerprint": 1,
                                                 "all": 1}
    finally:
        config_path.write_text(original)
    assert planned_rules(workdir, *SMOKE) == set()


@pytest.mark.slow
def test_changing_the_evaluation_k_retrains_nothing(workdir):
    """eval_problems.csv holds the per-problem counts any k <= n needs: a new rl.eval.k re-summarises every cell
    (rl_cell_eval) and re-aggregates, and no RL cell or evaluation reruns."""
    snakemake(workdir, *SMOKE)
    cells = expand_grid(smoke_config()["rl"])
    assert planned_jobs(workdir, *SMOKE, "rl={eval: {k: [1, 2]}}") == {
        "rl_cell_eval": len(cells), "rl_tables": 1, "rl_paired_curves": 1, "rl_figure": len(RL_FIGURES), "summary": 1,
        "all": 1}
    assert planned_rules(workdir, *SMOKE) == set()


@pytest.mark.slow
def test_changing_the_bootstrap_or_the_forking_k_samples_nothing(workdir):
    """The analysis jobs write their graded samples only; rule analysis_summary makes each table with its CIs from
    them, so a new analyses.bootstrap (or forking's K) re-summarises and re-renders, and no model samples again."""
    snakemake(workdir, *SMOKE)
    assert smoke_config()["analyses"]["bootstrap"] != 200
    # every summary table: entropy, forking and Maj@N of SmolLM2, entropy, entropy by role and forking of tiny1m,
    # Maj@N of tiny_arith
    assert planned_jobs(workdir, *SMOKE, "analyses__bootstrap=200") == {
        "analysis_summary": 7, "fig01_entropy_by_position": 1, "fig02_forking": 1, "fig09_majority_scaling": 1,
        "summary": 1, "all": 1}
    # forking's k is SmolLM2's (tiny1m's comes from analyses.forking.countdown): its one summary
    assert smoke_config()["analyses"]["forking"]["k"] != [1]
    assert planned_jobs(workdir, *SMOKE, "analyses={forking: {k: [1]}}") == {
        "analysis_summary": 1, "fig02_forking": 1, "summary": 1, "all": 1}
    assert planned_rules(workdir, *SMOKE) == set()


@pytest.mark.slow
def test_editing_the_plot_style_rerenders_every_figure_and_nothing_else(smoke_run_copy, tmp_path):
    """The plot rules' code inputs are the files of the `ead` package the workflow imports (plot_code in
    workflow/rules/common.smk). The edit goes to a private copy of the package, in a run of this test's own: editing
    the checkout's would be seen by every test running beside this one (their plans would gain the figures) and would
    outlive a killed run."""
    import ead

    workdir = smoke_run_copy
    package = tmp_path / "package"
    shutil.copytree(Path(ead.__file__).parent, package / "ead", ignore=shutil.ignore_patterns("__pycache__"))
    # the figures' code inputs are now the copy's files (another set of inputs): they re-render once, nothing else
    snakemake(workdir, *SMOKE, package=package)
    style = package / "ead" / "plots" / "style.py"
    style.write_text(style.read_text() + "# a style edit\n")
    assert planned_jobs(workdir, *SMOKE, package=package) == {
        "fig03_annealing_schedule": 1, "fig01_entropy_by_position": 1, "fig02_forking": 1, "fig09_majority_scaling": 1,
        "rl_figure": len(RL_FIGURES), "all": 1}
    snakemake(workdir, *SMOKE, package=package)
    assert planned_rules(workdir, *SMOKE, package=package) == set()


@pytest.mark.slow
def test_bad_config_fails_with_one_message_and_no_traceback(workdir, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("ead:\n  tau_min: 1.5\n")
    result = snakemake(workdir, "--dry-run", "--configfile", str(bad), check=False)
    assert result.returncode != 0
    # the schedule's own check (ead.schedule), named by the config section it came from
    # named by the file that set it
    assert (f"Config error: {bad}: ead: ead schedule: tau_min must be <= tau_max, got tau_min=1.5 > tau_max=1.2"
            in result.stderr)
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.slow
def test_the_positive_control_summary_plans_only_what_the_overlay_runs(workdir):
    """Its analyses list no model and it uses one policy: its summary needs none of the default's analyses, models or
    base evaluations, and asking for an analysis figure is refused when the DAG is built, naming the key."""
    overlay = ["--configfile", "configs/ablations/positive_control.yaml"]
    jobs = planned_jobs(workdir, "results/summary.md", *overlay)
    assert jobs == {"synthetic_dataset": 1, "tiny_policy_sft": 1, "tiny_policy_base_eval": 1, "premises": 1,
                    "rl_base_eval": 1, "rl_cell": 30, "rl_tables": 1, "rl_learns": 1, "claims": 1, "rl_breakdown": 1,
                    "summary": 1}
    result = snakemake(workdir, "--dry-run", "figures/fig01_entropy_by_position.png", *overlay, check=False)
    assert result.returncode != 0
    assert "analyses.entropy_by_position.models is empty" in result.stdout + result.stderr


@pytest.mark.slow
def test_lint_is_clean(workdir):
    result = snakemake(workdir, "--lint", check=False)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_overrides_from_the_command_line_keep_their_types_and_bad_overlays_fail_by_name(workdir, tmp_path):
    # a nested key from the command line, both spellings; Snakemake alone hands '1.5' over as a string
    for override in ("ead={tau_max: 1.5}", "ead__tau_max=1.5"):
        result = snakemake(workdir, "--dry-run", "--printshellcmds", *SMOKE, override, "--",
                           "results/schedule/schedule_table.csv")
        assert "--tau-max 1.5 " in result.stdout, override
    empty = tmp_path / "empty.yaml"
    empty.write_text("rl:\n  experiments: {}\n")
    for args, message in (
        (["--configfile", "configs/smoke.yaml", str(empty)],
         f"Config error: {empty}: rl.experiments = {{}} cannot take effect"),
        (["--configfile", "configs/smoke.yaml", "--configfile", "configs/ablations/decay_scale_20.yaml"],
         "Config error: --configfile given 2 times"),
        (["--config", "ead__tau_max=hot"],
         "Config error: --config: ead.tau_max = 'hot': 'hot' is not of type 'number'"),
    ):
        result = snakemake(workdir, "--dry-run", *args, check=False)
        assert result.returncode != 0 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.slow
def test_a_failed_sft_job_is_rerun_once_its_input_is_restored(workdir):
    """A corrupt parquet fails the SFT job with a message naming the file, and Snakemake deletes the job's
    model; once the parquet is restored (same bytes, same time), the missing model is rebuilt rather than Snakemake
    saying "Nothing to be done" with the model gone (models are final targets). Runs last: it leaves the run
    needing the rebuild."""
    snakemake(workdir, *SMOKE)
    root = workdir / "runs" / "smoke"
    data, model = root / "results" / "data" / "countdown.parquet", root / "results" / "models" / "tiny1m"
    original, times = data.read_bytes(), data.stat()
    damaged = bytearray(original)
    damaged[100:900] = bytes(range(200)) * 4
    data.write_bytes(bytes(damaged))
    result = snakemake(workdir, *SMOKE, "--until", "tiny_policy_sft", check=False)
    assert result.returncode != 0
    log = (root / "results" / "logs" / "models" / "tiny1m_sft.log").read_text()
    assert "countdown.parquet: cannot be read as parquet" in log, log
    assert not model.exists()
    data.write_bytes(original)
    os.utime(data, ns=(times.st_atime_ns, times.st_mtime_ns))
    assert planned_jobs(workdir, *SMOKE).get("tiny_policy_sft") == 1


def jobs_of_dry_run(text: str) -> list[dict]:
    """The jobs a dry run prints: {"rule": name, "input": [paths], "output": [paths]} each."""
    jobs = []
    for line in text.splitlines():
        if line.startswith("rule ") and line.endswith(":"):
            jobs.append({"rule": line[5:-1], "input": [], "output": []})
        elif jobs and line.strip().startswith(("input:", "output:")):
            key, _, paths = line.strip().partition(": ")
            jobs[-1][key] = [path.strip() for path in paths.split(",")]
    return jobs


@pytest.mark.slow
def test_every_table_the_summary_report_or_a_figure_reads_is_rebuilt_when_deleted(smoke_run_copy):
    """Snakemake rebuilds a missing file only for a job that runs: a table read by an existing figure or summary, once
    deleted (by hand, or by a failed job), stayed missing ("Nothing to be done", then --report failed on it)."""
    workdir, out = smoke_run_copy, smoke_run_copy / "runs" / "smoke"
    every_job = jobs_of_dry_run(snakemake(workdir, "--dry-run", "--forceall", *SMOKE).stdout)
    readers = [job for job in every_job if any(path.startswith("figures/") or path == "results/summary.md"
                                               for path in job["output"])]
    tables = sorted({path for job in readers for path in job["input"] if path.endswith(".csv")})
    assert {"results/claims.csv", "results/premises/rl_learns.csv", "results/rl/eval_curves.csv",
            "results/rl/train_curves.csv", "results/rl/paired_curves.csv"} <= set(tables), tables
    for table in tables:
        kept = out / (table + ".kept")
        (out / table).rename(kept)  # a rename keeps the file's time: restored, it is as up to date as before
        try:
            planned = jobs_of_dry_run(snakemake(workdir, "--dry-run", *SMOKE).stdout)
        finally:
            kept.rename(out / table)
        assert any(table in job["output"] for job in planned), f"{table} deleted: the dry run does not rebuild it"
