"""EAD in TRL's GRPOTrainer (ead.rl.trl.grpo), run for real on CPU with a tiny Llama and its character tokenizer:
the behaviour log-probs are the schedule's, the schedule follows the rollout step, the TIS weights are the capped
ratio and the loss with them equals TRL's own importance-weighted loss; what would be silently wrong is refused.

Run: ``.venv/bin/python -m pytest tests/rl/trl/test_grpo.py``.
"""

from __future__ import annotations

import math

import pytest
import torch

trl = pytest.importorskip("trl")

from datasets import Dataset  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402

import ead.rl.trl.grpo as grpo  # noqa: E402
from ead.rl.trl.grpo import EADGRPOTrainer, check_trl_release, refused_settings  # noqa: E402
from ead.schedule import AnnealedSchedule, FixedTemperature  # noqa: E402

PROMPTS = ["1+2=", "3+4=", "5+6=", "12+7=", "9-3=", "2*4=", "10/5=", "8+8="]
#: hot then cold within 16 tokens, so every test sees temperatures above and below 1
SCHEDULE = AnnealedSchedule(tau_max=1.5, tau_min=0.5, d0=3, step_factor=1.0, warmup=2)


def length_reward(completions, **kwargs):
    """Varies within every group (so advantages are not all zero)."""
    return [len(completion) / 16 for completion in completions]


def trainer_for(model_dir, tmp_path, *, schedule=SCHEDULE, tis_cap=2.0, max_steps=2, trainer_class=EADGRPOTrainer,
                **config):
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    settings = dict(output_dir=str(tmp_path / "out"), per_device_train_batch_size=8, num_generations=4,
                    max_completion_length=16, max_steps=max_steps, logging_steps=1, report_to=[], use_cpu=True,
                    save_strategy="no", seed=0, bf16=False, learning_rate=1e-3)
    args = GRPOConfig(**{**settings, **config})
    extra = {"schedule": schedule, "tis_cap": tis_cap} if trainer_class is EADGRPOTrainer else {}
    return trainer_class(model=model, reward_funcs=length_reward, args=args,
                         train_dataset=Dataset.from_dict({"prompt": PROMPTS * 4}), processing_class=tokenizer, **extra)


def plain_log_probs(model, prompt_ids: list[int], completion_ids: list[int], temperatures) -> torch.Tensor:
    """log softmax(logits / tau_t)[token] of each completion token, from one unpadded forward of prompt + completion."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt_ids + completion_ids])).logits[0].double()
    rows = logits[len(prompt_ids) - 1:len(prompt_ids) - 1 + len(completion_ids)]
    tau = torch.as_tensor(temperatures, dtype=torch.float64)[:, None]
    return torch.log_softmax(rows / tau, -1).gather(-1, torch.tensor(completion_ids)[:, None]).squeeze(-1)


def test_behaviour_log_probs_are_the_schedules_at_each_position_and_rollout_step(tiny_model_dir, tmp_path):
    trainer = trainer_for(tiny_model_dir, tmp_path)
    tokenizer = trainer.processing_class
    prompt_ids = [tokenizer(prompt)["input_ids"] for prompt in PROMPTS]
    gaps = []
    for global_step in (0, 40):  # d_s grows with the step: later rollouts anneal later
        trainer.state.global_step = global_step
        torch.manual_seed(global_step)
        completions, logprobs = trainer._generate_single_turn(prompt_ids, None, {}, 1)
        assert any(len(ids) > 4 for ids in completions)
        for prompt, ids, recorded in zip(prompt_ids, completions, logprobs):
            assert len(recorded) == len(ids) and 1 <= len(ids) <= 16
            expected = plain_log_probs(trainer.model, prompt, ids, SCHEDULE.temperatures(range(len(ids)),
                                                                                       global_step))
            gaps.append(float((torch.tensor(recorded, dtype=torch.float64) - expected).abs().max()))
    assert max(gaps) < 2e-5, max(gaps)  # float32 sampler (KV-cached, left-padded) against a float64 softmax


def test_under_tau_1_every_tis_weight_is_1(tiny_model_dir, tmp_path, monkeypatch):
    trainer = trainer_for(tiny_model_dir, tmp_path, schedule=FixedTemperature(1.0))
    folded = capture_advantages(monkeypatch)
    output = trainer._generate_and_score_completions([{"prompt": prompt} for prompt in PROMPTS])
    weights = output["advantages"] / folded[-1][:, None]
    valid = output["completion_mask"].bool() & (folded[-1][:, None] != 0)
    assert valid.sum() > 20
    assert float((weights[valid] - 1).abs().max()) < 1e-5


def capture_advantages(monkeypatch) -> list[torch.Tensor]:
    """The advantages TRL computed, before EADGRPOTrainer folds the TIS weights into them."""
    captured = []
    stock = GRPOTrainer._generate_and_score_completions

    def recording(self, inputs):
        output = stock(self, inputs)
        captured.append(output["advantages"].clone())
        return output

    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", recording)
    return captured


@pytest.mark.parametrize("iterations", [1, 2])  # pi_old from the sampler's pass (1), from TRL's own forward (2)
def test_tis_weights_are_the_capped_ratio_of_the_policy_at_sampling_time_to_the_sampler(tiny_model_dir, tmp_path,
                                                                                      monkeypatch, iterations):
    from ead.rl.losses import tis_weights

    cap = 1.3
    trainer = trainer_for(tiny_model_dir, tmp_path, tis_cap=cap, num_iterations=iterations)
    folded = capture_advantages(monkeypatch)
    output = trainer._generate_and_score_completions([{"prompt": prompt} for prompt in PROMPTS])
    assert ("old_per_token_logps" in output) == (iterations > 1)
    mask = output["completion_mask"]
    old = torch.zeros(mask.shape, dtype=torch.float64)
    for row in range(mask.shape[0]):
        prompt = output["prompt_ids"][row][output["prompt_mask"][row].bool()].tolist()
        completion = output["completion_ids"][row][mask[row].bool()].tolist()
        old[row, :len(completion)] = plain_log_probs(trainer.model, prompt, completion, [1.0] * len(completion))
    behaviour = output["sampling_per_token_logps"].double()
    expected = torch.where(mask.bool(), torch.clamp(torch.exp(old - behaviour), max=cap), 1.0)
    advantages = folded[-1]
    rows = advantages != 0
    weights = output["advantages"][rows] / advantages[rows][:, None]
    assert float((weights - expected[rows]).abs().max()) < 1e-5
    assert float(weights.max()) == pytest.approx(cap) and float(weights[mask[rows].bool()].min()) < 0.9  # both sides
    verl = tis_weights(old.float(), behaviour.float(), mask, level="token", cap=cap).weights  # verl's own estimator
    valid = mask[rows].bool()
    assert float((weights[valid] - verl[rows][valid]).abs().max()) < 1e-5


@pytest.mark.parametrize("loss_type", grpo.SUPPORTED_LOSSES)
def test_the_loss_with_tis_equals_trls_own_importance_weighted_loss(tiny_model_dir, tmp_path, monkeypatch, loss_type):
    """TRL multiplies the per-token loss by its importance ratio on its vLLM path only; the folded advantages give the
    same loss (and gradient) on the transformers path, for every supported loss type."""
    trainer = trainer_for(tiny_model_dir, tmp_path, loss_type=loss_type, beta=0.04 if loss_type == "grpo" else 0.0)
    folded = capture_advantages(monkeypatch)
    ours = trainer._generate_and_score_completions([{"prompt": prompt} for prompt in PROMPTS])
    ours = {**ours, "num_items_in_batch": ours["num_items_in_batch"]}
    stock = {**ours, "advantages": folded[-1],
             "importance_sampling_ratio": ours["advantages"] / torch.where(folded[-1] == 0, 1.0, folded[-1])[:, None]}
    trainer.model.zero_grad()
    loss = trainer._compute_loss(trainer.model, ours)
    loss.backward()
    gradient = [p.grad.clone() for p in trainer.model.parameters()]
    trainer.model.zero_grad()
    monkeypatch.setattr(trainer, "use_vllm", True)  # only _compute_loss reads it here
    monkeypatch.setattr(trainer, "vllm_importance_sampling_correction", True)
    reference = trainer._compute_loss(trainer.model, stock)
    reference.backward()
    assert float(loss.detach()) != 0.0
    assert float(loss.detach()) == pytest.approx(float(reference.detach()), rel=1e-6, abs=1e-9)
    scale = max(float(p.grad.abs().max()) for p in trainer.model.parameters())
    for ours_grad, p in zip(gradient, trainer.model.parameters()):  # float32 rounding of w * A vs (loss * w)
        torch.testing.assert_close(ours_grad, p.grad, rtol=1e-4, atol=1e-6 * scale)


def sampled_steps(monkeypatch) -> list[int]:
    steps = []
    real = grpo.sample

    def recording(*args, step, **kwargs):
        steps.append(step)
        return real(*args, step=step, **kwargs)

    monkeypatch.setattr(grpo, "sample", recording)
    return steps


@pytest.mark.parametrize("config, expected", [
    ({}, [0, 1, 2, 3]),  # one rollout per optimizer step
    ({"num_iterations": 2}, [0, 1]),  # two optimizer steps per rollout: the schedule follows the rollout
    ({"gradient_accumulation_steps": 2, "per_device_train_batch_size": 4}, [0, 1, 2, 3]),
    ({"steps_per_generation": 2, "per_device_train_batch_size": 4}, [0, 1]),
])
def test_the_schedule_follows_the_rollout_step(tiny_model_dir, tmp_path, monkeypatch, config, expected):
    steps = sampled_steps(monkeypatch)
    trainer = trainer_for(tiny_model_dir, tmp_path, max_steps=4, **config)
    trainer.train()
    assert steps == expected
    logged = [entry["ead/rollout_step"] for entry in trainer.state.log_history if "ead/rollout_step" in entry]
    assert logged == [float(step) for step in expected]


def test_a_run_trains_in_trls_default_precision_and_without_tis(tiny_model_dir, tmp_path):
    """bf16 autocast (TRL's default) through the KV-cached sampler, and tis_cap=None (EAD without TIS)."""
    trainer = trainer_for(tiny_model_dir, tmp_path, tis_cap=None, bf16=True)
    before = [p.detach().clone() for p in trainer.model.parameters()]
    trainer.train()
    history = [entry for entry in trainer.state.log_history if "loss" in entry]
    assert len(history) == 2 and all(math.isfinite(entry["loss"]) for entry in history)
    assert not any("ead/tis_weight_mean" in entry for entry in history)
    assert any(not torch.equal(a, b) for a, b in zip(before, trainer.model.parameters()))


@pytest.mark.parametrize("setting, value, named", [
    ("temperature", 0.7, "GRPOConfig.temperature=0.7"),
    ("top_k", 5, "GRPOConfig.top_k=5"),
    ("top_p", 0.9, "GRPOConfig.top_p=0.9"),
    ("min_p", 0.05, "GRPOConfig.min_p=0.05"),
    ("repetition_penalty", 1.1, "GRPOConfig.repetition_penalty=1.1"),
    ("generation_kwargs", {"top_k": 5}, "GRPOConfig.generation_kwargs={'top_k': 5}"),
    ("loss_type", "vespo", "GRPOConfig.loss_type='vespo'"),
    ("off_policy_mask_threshold", 0.5, "GRPOConfig.off_policy_mask_threshold=0.5"),
    ("use_transformers_continuous_batching", True, "GRPOConfig.use_transformers_continuous_batching=True"),
])
def test_settings_that_would_be_silently_wrong_are_refused_by_name(tiny_model_dir, tmp_path, setting, value, named):
    args = GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, bf16=False, **{setting: value})
    (problem,) = refused_settings(args)
    assert problem.startswith(named)
    with pytest.raises(ValueError, match="EADGRPOTrainer cannot honour GRPOConfig." + setting):
        EADGRPOTrainer(model=str(tiny_model_dir), reward_funcs=length_reward, args=args, schedule=SCHEDULE)


def test_on_the_vllm_paths_trls_own_correction_must_be_eads_token_level_tis_at_the_cap(tiny_model_dir, tmp_path):
    """TRL corrects the gap itself on its vLLM paths: its defaults (sequence_mask, clip 3.0) would mask almost every
    annealed sequence, so they are refused naming each setting and the value EAD's TIS needs; token_truncate at the
    cap passes; without TIS the correction must be off; the server's flat vllm_xargs carry EAD's numbers only."""
    from ead.schedule import FixedTemperature

    def config(**changes):
        return GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, bf16=False, use_vllm=True, **changes)

    problems = refused_settings(config(), SCHEDULE, tis_cap=2.0)
    assert [problem.split(" ")[0] for problem in problems] == [
        "GRPOConfig.vllm_importance_sampling_mode='sequence_mask'", "GRPOConfig.vllm_importance_sampling_clip_max=3.0"]
    assert "set vllm_importance_sampling_mode='token_truncate'" in problems[0]
    tis = dict(vllm_importance_sampling_mode="token_truncate", vllm_importance_sampling_clip_max=2.0)
    assert refused_settings(config(**tis), SCHEDULE, tis_cap=2.0) == []
    assert refused_settings(config(**tis, vllm_mode="server"), SCHEDULE, tis_cap=2.0) == []
    (masked,) = refused_settings(config(**{**tis, "vllm_importance_sampling_mode": "token_mask"}), SCHEDULE, 2.0)
    assert masked.startswith("GRPOConfig.vllm_importance_sampling_mode='token_mask'")
    (uncorrected,) = refused_settings(config(**tis), SCHEDULE, tis_cap=None)
    assert uncorrected.startswith("GRPOConfig.vllm_importance_sampling_correction=True with tis_cap=None")
    assert refused_settings(config(vllm_importance_sampling_correction=False), SCHEDULE, tis_cap=None) == []
    (server,) = refused_settings(config(**tis, vllm_mode="server"), FixedTemperature(0.6), tis_cap=2.0)
    assert server.startswith("vllm_mode='server' with a FixedTemperature")
    with pytest.raises(ValueError, match="EADGRPOTrainer cannot honour GRPOConfig.vllm_importance_sampling_mode"):
        EADGRPOTrainer(model=str(tiny_model_dir), reward_funcs=length_reward, args=config(), schedule=SCHEDULE)
    transformers_path = GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, bf16=False)
    with pytest.raises(ValueError, match=r"cannot honour vllm_engine_kwargs= \(they go to the colocated"):
        EADGRPOTrainer(model=str(tiny_model_dir), reward_funcs=length_reward, args=transformers_path,
                       schedule=SCHEDULE, vllm_engine_kwargs={"dtype": "float32"})


@pytest.mark.parametrize("argument", ["rollout_func", "tools", "environment_factory"])
def test_rollouts_that_bypass_the_schedules_sampler_are_refused(tiny_model_dir, tmp_path, argument):
    args = GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True, bf16=False)
    with pytest.raises(ValueError, match=f"EADGRPOTrainer cannot honour {argument}= "):
        EADGRPOTrainer(model=str(tiny_model_dir), reward_funcs=length_reward, args=args, schedule=SCHEDULE,
                       **{argument: [length_reward] if argument == "tools" else length_reward})


def test_the_default_config_is_accepted_and_bad_caps_are_refused(tiny_model_dir, tmp_path):
    assert refused_settings(GRPOConfig(output_dir=str(tmp_path), report_to=[], use_cpu=True)) == []
    for cap in (0.5, float("nan"), True, "2"):
        with pytest.raises(ValueError, match="tis_cap must be a number >= 1"):
            trainer_for(tiny_model_dir, tmp_path, tis_cap=cap)
    with pytest.raises(ValueError, match="schedule must be a Schedule"):
        trainer_for(tiny_model_dir, tmp_path, schedule={"name": "ead"})


def test_a_trl_release_outside_the_tested_range_or_with_other_private_methods_is_refused(monkeypatch):
    assert grpo.TESTED_TRL[0] <= trl.__version__ <= grpo.TESTED_TRL[1]
    check_trl_release()
    with pytest.raises(ImportError, match=r"tested with TRL 1\.16\.0 to 1\.16\.0; the installed TRL is 1\.15\.2 "):
        check_trl_release("1.15.2")
    with pytest.raises(ImportError, match="installed TRL is 1.17.0"):
        check_trl_release("1.17.0")

    def moved(self, prompt_ids, images, num_generations):  # a release that dropped a parameter
        raise AssertionError

    monkeypatch.setattr(GRPOTrainer, "_generate_single_turn", moved)
    with pytest.raises(ImportError, match=r"GRPOTrainer._generate_single_turn takes \('self', 'prompt_ids', 'images', "
                                          r"'num_generations'\)"):
        check_trl_release()
