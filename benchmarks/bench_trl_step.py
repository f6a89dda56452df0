"""What EAD costs in TRL's GRPOTrainer: seconds per GRPO step, stock trainer against EADGRPOTrainer (target <= 1.05x).

Same model (a Llama of ``--layers`` and ``--hidden``, the test suite's character tokenizer, random init), same
prompts, same batch (16 completions of up to 16 tokens: 4 prompts x 4 generations), float32 on CPU with one torch
thread, measured in one run with the variants interleaved over ``--repeats``: TRL 1.16.0's stock ``GRPOTrainer``
(``generate``, no sampler log-probs), ``EADGRPOTrainer`` under tau = 1 without TIS (the sampler swapped for
``ead.samplers.hf.sample``, nothing else), and EAD with TIS (the schedule and the weights; pi_old comes from the
sampler's own pass, so no forward is added). Each repeat trains ``--steps`` steps; a step's time is from TRL's
``on_step_begin`` to ``on_step_end`` (generation, scoring and the update), the first step of each run left out
(warm-up). Completions stop at EOS, so their mean length is reported beside the time (a variant that samples longer
completions does more work).

Run:
    python benchmarks/bench_trl_step.py --steps 11 --repeats 5 --out benchmarks/results/trl_step.md
    python benchmarks/bench_trl_step.py --steps 6 --repeats 3 --hidden 256 --layers 8 \
        --out benchmarks/results/trl_step_larger.md
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import trl
from datasets import Dataset
from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

from ead.io import atomic_path
from ead.rl.trl.grpo import EADGRPOTrainer
from ead.schedule import AnnealedSchedule, FixedTemperature

PROMPTS = ["12+7=", "9-3=", "2*4=", "10/5="]
VARIANTS = {
    "stock GRPOTrainer (generate)": None,
    "EADGRPOTrainer, tau = 1, no TIS": (FixedTemperature(1.0), None),
    "EADGRPOTrainer, EAD + TIS (cap 2)": (AnnealedSchedule(tau_max=1.2, tau_min=0.6, d0=4, warmup=2), 2.0),
}


class StepTimer(TrainerCallback):
    def __init__(self):
        self.seconds, self.started = [], None

    def on_step_begin(self, args, state, control, **kwargs):
        self.started = time.perf_counter()

    def on_step_end(self, args, state, control, **kwargs):
        self.seconds.append(time.perf_counter() - self.started)


def tiny_model(directory: Path, hidden: int, layers: int) -> Path:
    """The test suite's tiny Llama (tests.conftest.make_tiny_llama) and character tokenizer, of the given size."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.conftest import build_tokenizer, make_tiny_llama

    tokenizer = build_tokenizer(alphabet="0123456789+-*/=()\\{}[] :.,abcdefghijklmnopqrstuvwxyz\n")
    model = make_tiny_llama(vocab_size=len(tokenizer), hidden_size=hidden, layers=layers, initializer_range=0.2)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(directory, safe_serialization=True)
    tokenizer.save_pretrained(directory)
    return directory


def length_reward(completions, **kwargs):
    return [len(completion) / 16 for completion in completions]


def run(variant, model_dir: Path, workdir: Path, steps: int, seed: int) -> tuple[list[float], float]:
    """Step seconds (the first left out) and the mean completion length of one training run."""
    model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    args = GRPOConfig(output_dir=str(workdir), per_device_train_batch_size=16, num_generations=4,
                      max_completion_length=16, max_steps=steps, logging_steps=1, report_to=[], use_cpu=True,
                      bf16=False, save_strategy="no", seed=seed, disable_tqdm=True)
    timer = StepTimer()
    common = dict(model=model, reward_funcs=length_reward, args=args, processing_class=tokenizer,
                  train_dataset=Dataset.from_dict({"prompt": PROMPTS * 4 * steps}), callbacks=[timer])
    if variant is None:
        trainer = GRPOTrainer(**common)
    else:
        schedule, cap = variant
        trainer = EADGRPOTrainer(**common, schedule=schedule, tis_cap=cap)
    trainer.train()
    lengths = [entry["completions/mean_length"] for entry in trainer.state.log_history
               if "completions/mean_length" in entry]
    return timer.seconds[1:], statistics.fmean(lengths)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=6, help="GRPO steps per run (the first is warm-up)")
    parser.add_argument("--repeats", type=int, default=3, help="runs per variant, interleaved")
    parser.add_argument("--hidden", type=int, default=64, help="the Llama's hidden size")
    parser.add_argument("--layers", type=int, default=2, help="the Llama's layers")
    parser.add_argument("--out", type=Path, required=True, help="markdown report")
    args = parser.parse_args()
    if args.steps < 2 or args.repeats < 1:
        parser.error("--steps must be >= 2 (the first is warm-up) and --repeats >= 1")
    torch.set_num_threads(1)
    seconds = {name: [] for name in VARIANTS}
    lengths = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as scratch:
        model_dir = tiny_model(Path(scratch) / "model", args.hidden, args.layers)
        for repeat in range(args.repeats):
            for name, variant in VARIANTS.items():
                steps, length = run(variant, model_dir, Path(scratch) / "out", args.steps, seed=repeat)
                seconds[name].extend(steps)
                lengths[name].append(length)
                print(f"repeat {repeat}: {name}: median step {statistics.median(steps):.4f} s, "
                      f"mean length {length:.1f}", flush=True)
    baseline = statistics.median(seconds["stock GRPOTrainer (generate)"])
    rows = [f"| {name} | {statistics.median(values):.4f} | {statistics.median(values) / baseline:.3f} | "
            f"{statistics.fmean(lengths[name]):.1f} |" for name, values in seconds.items()]
    command = "python benchmarks/bench_trl_step.py " + " ".join(sys.argv[1:])
    report = "\n".join([
        "# EAD in TRL's GRPOTrainer: seconds per GRPO step", "",
        f"Command: `{command}` ({dt.date.today()}, TRL {trl.__version__}, torch {torch.__version__}, 1 thread; "
        f"{args.repeats} runs x {args.steps - 1} timed steps per variant, interleaved; Llama of {args.layers} layers, "
        f"hidden {args.hidden}).", "",
        "| variant | median s / step | vs stock | mean completion length |", "|---|---|---|---|", *rows, ""])
    with atomic_path(args.out) as tmp:
        Path(tmp).write_text(report)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
