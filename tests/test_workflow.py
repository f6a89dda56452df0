"""The workflow's config printer and errors (ead.workflow, `python -m ead.workflow`): a config error names the
file that set the value, and the printer refuses what the workflow refuses."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("text", "message"), [
    ("rl:\n  run: main\n", r"OVERLAY: rl\.run = 'main' must be a list of experiment names"),
    ("rl:\n  run: []\n", r"OVERLAY: rl\.run = \[\]: selects no experiment"),
    ("claim_defaults: {n: 4}\n", r"configs/config\.yaml, OVERLAY: claims\[1\] \(C2\)\.sampler: the cell .* 4\) "
                                  r"is not in the grid"),
    ("rl:\n  eval: {k: [1, 8]}\n", r"configs/smoke\.yaml, OVERLAY: rl\.eval\.n = 4 must be >= every k in "
                                     r"rl\.eval\.k = \[1, 8\]"),
    ("claim_defaults: [policy, x]\n", r"OVERLAY: claim_defaults = \['policy', 'x'\] must be a mapping"),
    ("claims: [C1]\n", r"OVERLAY: claims\[0\] = 'C1' must be a mapping"),
])
def test_a_config_error_names_the_file_that_set_the_value_and_both_files_of_a_conflict(tmp_path, text, message,
                                                                                        monkeypatch, capsys):
    """What the workflow and `python -m ead.workflow` print (its main, in-process): one line, the files first, and
    no exception escapes."""
    from ead.workflow import main

    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(text)
    profile = [] if "claim_defaults: {n" in text else ["configs/smoke.yaml"]
    monkeypatch.chdir(ROOT)
    assert main(["--configfile", *profile, str(overlay)]) == 1
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert re.match("Config error: " + message.replace("OVERLAY", re.escape(str(overlay))), error), error


def test_the_config_printer_refuses_what_the_workflow_refuses(tmp_path):
    """A repeated --configfile (Snakemake keeps only the last list) and an empty overlay (Snakemake refuses it
    without naming it) are refused by the printer too, naming the flag or the file."""
    from ead.workflow import main

    overlay = tmp_path / "steps.yaml"
    overlay.write_text("rl: {steps: 4}\n")
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing set yet\n")
    assert main(["--configfile", "configs/smoke.yaml", "--configfile", str(overlay)]) == 1
    assert main(["--configfile", "configs/smoke.yaml", str(empty)]) == 1
    assert main(["--configfile", "configs/smoke.yaml", str(overlay)]) == 0


def test_the_printer_and_the_workflow_give_the_same_error_for_a_repeated_flag_and_an_empty_overlay(tmp_path, capsys):
    from ead.workflow import main

    empty = tmp_path / "empty.yaml"
    empty.write_text("\n")
    main(["--configfile", "configs/smoke.yaml", str(empty)])
    assert capsys.readouterr().err.strip() == f"Config error: config file {empty}: is empty; a profile or overlay " \
                                               "sets at least one key"
    main(["--configfile", "configs/smoke.yaml", "--configfile", str(empty)])
    assert capsys.readouterr().err.startswith("Config error: --configfile given 2 times")


def test_a_config_error_names_the_file_that_set_the_value(tmp_path):
    """The workflow's message (and `python -m ead.workflow`'s) starts with the profile or overlay that set the key."""
    overlay = tmp_path / "hot.yaml"
    overlay.write_text("ead:\n  tau_max: hot\n")
    second = tmp_path / "second.yaml"
    second.write_text("rl:\n  steps: 4\n")
    for files in ([overlay, second], [second, overlay]):
        result = subprocess.run([sys.executable, "-m", "ead.workflow", "--configfile", "configs/smoke.yaml",
                                 *map(str, files)], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 1
        assert result.stderr.strip() == f"Config error: {overlay}: ead.tau_max = 'hot': 'hot' is not of type 'number'"
    result = subprocess.run([sys.executable, "-m", "ead.workflow", "--configfile", "configs/smoke.yaml", "--config",
                             "rl__experiments__main__seeds=[0, 0]"], cwd=ROOT, capture_output=True, text=True)
    assert result.stderr.startswith("Config error: --config: rl.experiments.main.seeds = [0, 0]: 0 is listed twice")


def test_an_analysis_figure_is_a_target_only_when_its_analysis_lists_a_model():
    from ead.settings import load_layered_config
    from ead.workflow import FIGURES, final_figures

    root = Path(__file__).resolve().parents[1]
    default = load_layered_config(root / "configs" / "config.yaml")
    assert {"fig01_entropy_by_position", "fig02_forking", "fig09_majority_scaling"} <= set(final_figures(default))
    control = load_layered_config(root / "configs" / "config.yaml", root / "configs" / "ablations" /
                                  "positive_control.yaml")  # its analyses list no model
    assert final_figures(control) == ["fig03_annealing_schedule", "positive_control", "rl_chain"]
    assert FIGURES["fig09_majority_scaling"].analysis == "majority_scaling"


def test_a_suggested_fix_that_would_be_refused_too_says_so_at_once(capsys):
    """The pass@k refusal proposes `--config rl__eval__n=16 ...`; over the smoke profile the positive control would
    then meet a second refusal (its breakdown's 4 phases exceed smoke's 2 steps), so the first message says that too,
    and points an overlay's user to the table of which overlay runs over which profile."""
    from ead.workflow import main

    assert main(["--configfile", "configs/smoke.yaml", "configs/ablations/positive_control.yaml"]) == 1
    message = capsys.readouterr().err
    assert "k exceeds rl.eval.n = 4 samples" in message
    assert ("(with --config rl__eval__n=16 rl__eval__k='[1, 16]' this combination is still refused: "
            "configs/ablations/positive_control.yaml, configs/smoke.yaml: rl.breakdown.phases = 4 exceeds rl.steps = 2"
            in message)
    assert '(configs/README.md, "Which overlay runs over which profile"' in message


def test_a_suggested_fix_that_works_adds_nothing(tmp_path, capsys):
    """Where the proposed `--config` pairs are enough, the message is the refusal alone (no overlay of
    configs/ablations, so no pointer to the overlay table either)."""
    from ead.workflow import main

    overlay = tmp_path / "pass16.yaml"
    overlay.write_text("rl:\n  eval: {n: 4, k: [1, 4]}\n")
    assert main(["--configfile", "configs/config.yaml", str(overlay)]) == 1
    message = capsys.readouterr().err.strip()
    assert message.endswith("or use a k <= rl.eval.n"), message


def test_the_report_of_an_unfinished_profile_names_it_and_the_runs_that_can_be_reported(tmp_path):
    """Snakemake names only the first missing report file; ead.workflow.report_refusal names the profile, what to run
    and the other profiles' runs found here, each with the --configfile that reports it."""
    from ead.workflow import report_refusal, report_requested

    assert report_requested(["snakemake", "--report", "report.html"])
    assert report_requested(["snakemake", "--report=r.html", "--configfile", "configs/smoke.yaml"])
    assert not report_requested(["snakemake", "--cores", "all", "--report-after-run", "--report", "r.html"])
    assert not report_requested(["snakemake", "--cores", "all"])
    (tmp_path / "configs" / "ablations").mkdir(parents=True)
    (tmp_path / "configs" / "smoke.yaml").write_text("profile: smoke\n")
    (tmp_path / "configs" / "ablations" / "positive_control.yaml").write_text("profile: positive_control\n")
    for run in ("smoke", "positive_control"):
        (tmp_path / "runs" / run / "figures").mkdir(parents=True)
    targets = ["figures/fig03_annealing_schedule.png", "results/summary.md"]
    assert report_refusal(tmp_path, ".", targets, "default") == (
        "snakemake --report: the default profile's run is not finished in results/ and figures/ (2 of its 2 final "
        "outputs missing, first figures/fig03_annealing_schedule.png); the report shows one profile's finished run: "
        "run that profile first (the same command with --cores all instead of --report), or report a run made here: "
        "positive_control's (--configfile configs/ablations/positive_control.yaml); smoke's (--configfile "
        "configs/smoke.yaml)")
    for target in targets:
        (tmp_path / "runs" / "smoke" / target).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "runs" / "smoke" / target).write_text("x")
    assert report_refusal(tmp_path, "runs/smoke", targets, "smoke") is None


def test_a_misspelt_workflow_profile_is_refused_naming_the_profiles_there_are():
    """Snakemake 9 ignores `--workflow-profile workflow/profiles/slurmm` silently and plans the paper profile's jobs
    locally; the workflow refuses it (Snakefile -> common.smk) and accepts the real ones and `none`."""
    from ead.workflow import workflow_profile_refusal

    for good in (["--workflow-profile", "workflow/profiles/slurm"],
                 ["--workflow-profile=workflow/profiles/slurm_local"], ["--workflow-profile", "none"],
                 ["--cores", "all"]):
        assert workflow_profile_refusal(["snakemake", *good], ROOT) is None, good
    assert workflow_profile_refusal(["snakemake", "--workflow-profile", "workflow/profiles/slurmm"], ROOT) == (
        "--workflow-profile workflow/profiles/slurmm: no such profile (no workflow/profiles/slurmm/config.yaml), and "
        "Snakemake would ignore it silently; the workflow's profiles are profiles/default, workflow/profiles/slurm, "
        "workflow/profiles/slurm_local (or none)")
    result = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", "configs/paper.yaml",
                             "--workflow-profile", "workflow/profiles/slurmm"], cwd=ROOT, capture_output=True,
                            text=True)
    assert result.returncode == 1 and "Config error: --workflow-profile workflow/profiles/slurmm" in result.stderr
