"""The paper profile keeps the paper's settings whatever the CPU testbed's defaults become.

configs/paper.yaml states only its deltas over configs/config.yaml, so a change to the CPU defaults (e.g. a warm-up
or decay rescaled to the countdown testbed's response length) would silently reach the paper profile. These values
are the paper's (Sec. 5, App. A) and the authors' code reading (decay_scale 20): if one fails, state the paper's value
in configs/paper.yaml, do not change it here.
"""

from pathlib import Path

import pytest

from ead.settings.layering import load_layered_config
from ead.settings.rl import expand_grid, learning_rate, sampler_schedule

ROOT = Path(__file__).resolve().parents[1]
PAPER = load_layered_config(ROOT / "configs" / "config.yaml", ROOT / "configs" / "paper.yaml")


def test_ead_schedule_is_the_papers():
    assert PAPER["ead"] == {"tau_max": 1.2, "tau_min": 0.1, "d0": 25, "step_factor": 5, "d_max": 40000,
                            "warmup": 10, "decay_scale": 20}
    assert sampler_schedule(PAPER, "ead_tmin0.8")["tau_min"] == 0.8  # the 7B model's floor
    assert sampler_schedule(PAPER, "ead_aggressive")["tau_max"] == 2.0  # App. B's aggressive schedule
    assert PAPER["rl"]["samplers"]["ead_tis"] == {"name": "ead", "tis": "token", "tis_cap": 2.0}
    assert [sampler_schedule(PAPER, f"tau{t}")["tau"] for t in ("0.6", "1.0", "1.2")] == [0.6, 1.0, 1.2]


def test_minimal_rl_recipe_sizes_and_learning_rates():
    rl = PAPER["rl"]
    assert rl["backend"] == "verl"
    assert (rl["steps"], rl["prompts_per_step"], rl["mini_batches"], rl["max_new_tokens"]) == (500, 1024, 4, 3072)
    assert [learning_rate(rl, n) for n in (4, 8, 16)] == [1e-6, 2e-6, 4e-6]
    assert (rl["eval"]["n"], rl["eval"]["tau"], rl["eval"]["every"]) == (16, 1.0, 20) and 16 in rl["eval"]["k"]
    assert rl["algorithms"]["dapo"] == {"loss_mode": "vanilla", "clip_ratio_low": 0.2, "clip_ratio_high": 0.28,
                                        "loss_agg_mode": "token-mean", "use_kl_loss": False}
    grpo = rl["algorithms"]["grpo"]
    assert (grpo["use_kl_loss"], grpo["kl_loss_coef"], grpo["kl_loss_type"]) == (True, 0.001, "low_var_kl")
    clip_cov = rl["algorithms"]["clip_cov"]
    assert (clip_cov["clip_cov_ratio"], clip_cov["clip_cov_lb"], clip_cov["clip_cov_ub"]) == (0.0002, 1.0, 5.0)


@pytest.mark.parametrize("experiment, policies, samplers, n", [
    ("main", {"qwen2.5-math-1.5b", "llama-3.2-1b-instruct"}, {"tau0.6", "tau1.0", "tau1.2", "ead", "ead_tis"}, {8}),
    ("larger_model", {"qwen2.5-math-7b"}, {"tau0.6", "tau1.0", "tau1.2", "ead_tmin0.8"}, {8}),
    ("rollout_scaling", {"qwen2.5-math-1.5b", "llama-3.2-1b-instruct"}, {"tau1.0", "ead"}, {4, 8, 16}),
    ("off_policy", {"qwen2.5-math-1.5b"}, {"ead_aggressive", "ead_aggressive_tis"}, {8}),
])
def test_grid_uses_the_papers_models_and_samplers(experiment, policies, samplers, n):
    cells = expand_grid(PAPER["rl"], [experiment])
    assert {c.policy for c in cells} == policies
    assert {c.sampler for c in cells} == samplers and {c.n for c in cells} == n


def test_hub_models_are_the_papers():
    assert {name: entry["hub_id"] for name, entry in PAPER["paper_models"].items()} == {
        "qwen2.5-math-1.5b": "Qwen/Qwen2.5-Math-1.5B", "llama-3.2-1b-instruct": "meta-llama/Llama-3.2-1B-Instruct",
        "qwen2.5-math-7b": "Qwen/Qwen2.5-Math-7B", "llama-3-8b-instruct": "meta-llama/Meta-Llama-3-8B-Instruct",
        "deepseek-r1-distill-llama-8b": "deepseek-ai/DeepSeek-R1-Distill-Llama-8B"}
    assert {c.algorithm for c in expand_grid(PAPER["rl"], ["algorithms"])} >= {"grpo", "clip_cov"}
    assert PAPER["analyses"]["entropy_by_position"]["models"] == ["llama-3-8b-instruct"]
    assert PAPER["analyses"]["forking"]["models"] == ["deepseek-r1-distill-llama-8b"]
    assert PAPER["analyses"]["majority_scaling"]["models"] == ["qwen2.5-math-1.5b", "qwen2.5-math-7b"]
