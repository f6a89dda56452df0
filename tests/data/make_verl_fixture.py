"""Builds tests/data/verl_run/: a CONSTRUCTED sample of a verl 0.9.1 run's outputs (not recorded on a GPU).

    python tests/data/make_verl_fixture.py

Metric names and line layout are verl 0.9.1's (see tests/data/README.md for the source of each); the values are
made up but plausible for Qwen2.5-Math-1.5B early in training (n = 8 rollouts, TIS on, validation every 2 steps
with n = 16 samples). The validation dumps hold 3 problems x 16 samples with known correct counts, so the tests
can check the unbiased Pass@k / Worst@k exactly.
"""

import json
from pathlib import Path

OUT = Path(__file__).parent / "verl_run"
N_VAL = 16
# (prompt, reference, correct samples out of 16) per validation step
VAL_PROBLEMS = {
    0: [("What is 1+1? Let's think step by step.", "2", 12), ("Solve x^2=4, x>0.", "2", 3),
        ("Compute 7*6.", "42", 0)],
    2: [("What is 1+1? Let's think step by step.", "2", 15), ("Solve x^2=4, x>0.", "2", 6),
        ("Compute 7*6.", "42", 1)],
}


def val_metrics(step):
    """The validation metrics verl logs: process_validation_metrics + _val_metrics_update naming."""
    problems = VAL_PROBLEMS[step]
    accs = [c / N_VAL for _, _, c in problems]
    mean = sum(accs) / len(accs)
    data = {}
    for var in ("acc", "score", "acc_success_only"):
        core = var == "acc"
        data[f"{'val-core' if core else 'val-aux'}/math/{var}/mean@16"] = mean
        data[f"val-aux/math/{var}/std@16"] = 0.31
        for k, best, worst in ((2, 0.52, 0.31), (4, 0.61, 0.22), (8, 0.66, 0.15), (16, 0.6667, 0.08)):
            section = "val-core" if core and k == 16 else "val-aux"
            data[f"{section}/math/{var}/best@{k}/mean"] = best + 0.01 * step
            data[f"val-aux/math/{var}/best@{k}/std"] = 0.05
            data[f"val-aux/math/{var}/worst@{k}/mean"] = worst
            data[f"val-aux/math/{var}/worst@{k}/std"] = 0.04
            if var == "acc":
                data[f"{section}/math/{var}/maj@{k}/mean"] = 0.45 + 0.01 * k
                data[f"val-aux/math/{var}/maj@{k}/std"] = 0.03
    data.update({"val-aux/num_turns/min": 2, "val-aux/num_turns/max": 2, "val-aux/num_turns/mean": 2.0})
    return data


def train_metrics(step):
    return {
        "training/global_step": step, "training/epoch": 0,
        "critic/score/mean": 0.30 + 0.05 * step, "critic/score/max": 1.0, "critic/score/min": 0.0,
        "critic/rewards/mean": 0.30 + 0.05 * step, "critic/advantages/mean": 0.0, "critic/advantages/max": 2.47,
        "critic/advantages/min": -2.47, "critic/returns/mean": 0.0,
        "response_length/mean": 612.4 - 10 * step, "response_length/max": 3072, "response_length/min": 41,
        "response_length/clip_ratio": 0.021, "prompt_length/mean": 118.2, "prompt_length/max": 871,
        "actor/entropy": 0.412 - 0.01 * step, "actor/pg_loss": -0.0031, "actor/pg_clipfrac": 0.0012 * step,
        "actor/ppo_kl": 0.0004 * step, "actor/pg_clipfrac_lower": 0.0, "actor/grad_norm": 0.21 + 0.01 * step,
        "actor/lr": 2e-6, "actor/loss": -0.0031, "perf/mfu/actor": 0.31,
        "rollout_corr/rollout_is_mean": 0.987, "rollout_corr/rollout_is_max": 2.0,
        "rollout_corr/rollout_is_min": 0.0021, "rollout_corr/rollout_is_std": 0.12,
        "rollout_corr/rollout_is_ratio_fraction_high": 0.0041 + 0.001 * step,
        "rollout_corr/rollout_is_ratio_fraction_low": 0.012, "rollout_corr/rollout_is_eff_sample_size": 0.97,
        "rollout_corr/training_ppl": 1.41, "rollout_corr/rollout_ppl": 1.47, "rollout_corr/kl": 0.031,
        "timing_s/gen": 201.3, "timing_s/reward": 3.1, "timing_s/old_log_prob": 40.2, "timing_s/update_actor": 150.7,
        "timing_s/step": 401.9 + step, "timing_per_token_ms/gen": 0.04, "perf/total_num_tokens": 5.1e6,
        "perf/time_per_step": 401.9 + step, "perf/throughput": 1586.0,
    }


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [{"step": 0, "data": val_metrics(0)}]
    for step in (1, 2, 3):
        data = train_metrics(step)
        if step in VAL_PROBLEMS:
            data.update(val_metrics(step))
        lines.append({"step": step, "data": data})
    (OUT / "metrics.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    for step, problems in VAL_PROBLEMS.items():
        dump = []
        for prompt, answer, correct in problems:
            for i in range(N_VAL):
                ok = i < correct
                dump.append({"input": f"user\n{prompt}\nassistant\n",
                             "output": f"... so the answer is \\boxed{{{answer if ok else 'wrong'}}}",
                             "gts": answer, "score": float(ok), "step": step, "acc": float(ok),
                             "pred": answer if ok else "", "uid": f"uid-{prompt[:4]}_{i}"})
        (OUT / "validation").mkdir(exist_ok=True)
        (OUT / "validation" / f"{step}.jsonl").write_text("".join(json.dumps(row) + "\n" for row in dump))


if __name__ == "__main__":
    main()
