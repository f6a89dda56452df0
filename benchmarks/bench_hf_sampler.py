"""EAD overhead in HF sampling: tokens/s with no processor, fixed tau, EAD, and a per-row Python-loop EAD.

Same model (SmolLM2-135M-Instruct shape: Llama, hidden 576, 30 layers, 9/3 heads, vocab 49152, random init,
float32), same prompts, same batch, measured in one run with the variants interleaved over repetitions, so the
ratios are comparable. Two engines: transformers' ``generate`` with a logits processor, and this package's
KV-cached sampling loop (:func:`ead.samplers.hf.sample`, which also returns log-probs and entropies).
Generation length is fixed (EOS disabled) so every variant does the same work.

Run:
    python benchmarks/bench_hf_sampler.py --batch 16 --new-tokens 64 --repeats 3 \
        --out benchmarks/results/hf_sampler.md
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM, LogitsProcessor, TemperatureLogitsWarper

from ead.samplers.hf import ScheduleLogitsProcessor, left_pad, sample
from ead.schedule import AnnealedSchedule, FixedTemperature

SMOLLM2_135M_SHAPE = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                          num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=2048,
                          tie_word_embeddings=True, rms_norm_eps=1e-5, rope_theta=10000.0)


class PerRowLoopEADProcessor(LogitsProcessor):
    """The reference code's pattern (one Python call per sequence per step); benchmark baseline only."""

    def __init__(self, schedule, prompt_length):
        self.schedule, self.prompt_length = schedule, prompt_length

    def __call__(self, input_ids, scores):
        position = input_ids.shape[1] - self.prompt_length
        for row in range(scores.shape[0]):
            scores[row] = scores[row] / self.schedule.temperatures(position)
        return scores


def time_generate(model, input_ids, attention_mask, processors, new_tokens):
    start = time.perf_counter()
    model.generate(input_ids=input_ids, attention_mask=attention_mask, do_sample=True, top_k=0, top_p=1.0,
                   temperature=1.0, max_new_tokens=new_tokens, min_new_tokens=new_tokens, logits_processor=processors,
                   pad_token_id=0, eos_token_id=None)
    return time.perf_counter() - start


def time_loop(model, input_ids, attention_mask, schedule, new_tokens):
    start = time.perf_counter()
    sample(model, input_ids, attention_mask, schedule, max_new_tokens=new_tokens, eos_token_ids=[], pad_token_id=0,
           generator=torch.Generator().manual_seed(0))
    return time.perf_counter() - start


def time_processor_alone(processor, batch, vocab, calls=200):
    """Median seconds of one processor call on float32 logits [batch, vocab] (engine-free, so no step noise)."""
    input_ids = torch.zeros((batch, 48), dtype=torch.long)  # response position 16 (past the warm-up)
    logits = torch.randn(batch, vocab)
    times = []
    for _ in range(calls):
        scores = logits.clone()
        start = time.perf_counter()
        processor(input_ids, scores)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--prompt-tokens", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None, help="write a markdown table here")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**SMOLLM2_135M_SHAPE)).eval()
    prompts = [torch.randint(3, 49152, (args.prompt_tokens - (i % 5),)).tolist() for i in range(args.batch)]
    input_ids, attention_mask = left_pad(prompts, pad_id=0)
    ead = AnnealedSchedule(tau_max=1.2, tau_min=0.1, d0=25, warmup=10)
    prompt_length = input_ids.shape[1]
    variants = {
        ("generate", "no processor"): lambda: time_generate(model, input_ids, attention_mask, [], args.new_tokens),
        ("generate", "fixed tau 0.6"): lambda: time_generate(
            model, input_ids, attention_mask, [TemperatureLogitsWarper(0.6)], args.new_tokens),
        ("generate", "EAD (vectorised)"): lambda: time_generate(
            model, input_ids, attention_mask, [ScheduleLogitsProcessor(ead, prompt_length)], args.new_tokens),
        ("generate", "EAD (per-row Python loop)"): lambda: time_generate(
            model, input_ids, attention_mask, [PerRowLoopEADProcessor(ead, prompt_length)], args.new_tokens),
        ("ead.samplers.hf.sample", "fixed tau 1.0"): lambda: time_loop(
            model, input_ids, attention_mask, FixedTemperature(1.0), args.new_tokens),
        ("ead.samplers.hf.sample", "fixed tau 0.6"): lambda: time_loop(
            model, input_ids, attention_mask, FixedTemperature(0.6), args.new_tokens),
        ("ead.samplers.hf.sample", "EAD"): lambda: time_loop(model, input_ids, attention_mask, ead, args.new_tokens),
    }
    with torch.no_grad():
        for run in variants.values():  # warm-up: allocator, kernels
            run()
        seconds = {key: [] for key in variants}
        for _ in range(args.repeats):
            for key, run in variants.items():  # interleaved, so drift hits every variant alike
                seconds[key].append(run())

    tokens = args.batch * args.new_tokens
    baselines = {"generate": ("generate", "no processor"),
                 "ead.samplers.hf.sample": ("ead.samplers.hf.sample", "fixed tau 1.0")}
    lines = [
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; batch {args.batch}, "
        f"prompt ~{args.prompt_tokens} "
        f"tokens, {args.new_tokens} new tokens, median of {args.repeats} interleaved repeats.",
        "",
        "| engine | variant | tokens/s | time vs engine baseline |",
        "|---|---|---|---|",
    ]
    for key in variants:
        median = statistics.median(seconds[key])
        ratio = median / statistics.median(seconds[baselines[key[0]]])
        lines.append(f"| {key[0]} | {key[1]} | {tokens / median:.1f} | {ratio:.3f} |")
    step_seconds = statistics.median(seconds[("generate", "no processor")]) / args.new_tokens
    lines += [
        "",
        f"Processor alone on float32 logits [{args.batch}, 49152], median of 200 calls, vs one decode step of the "
        f"engine without processors ({1000 * step_seconds:.1f} ms = no-processor time / new tokens; includes "
        "prefill, so an upper bound):",
        "",
        "| processor | ms per call | fraction of a decode step |",
        "|---|---|---|",
    ]
    for name, processor in (("TemperatureLogitsWarper(0.6)", TemperatureLogitsWarper(0.6)),
                            ("ScheduleLogitsProcessor (EAD)", ScheduleLogitsProcessor(ead, 32)),
                            ("per-row Python loop (EAD)", PerRowLoopEADProcessor(ead, 32))):
        alone = time_processor_alone(processor, args.batch, 49152)
        lines.append(f"| {name} | {1000 * alone:.3f} | {100 * alone / step_seconds:.2f}% |")
    report = "\n".join(lines)
    print(report)
    if args.out:
        with open(args.out, "w") as handle:
            handle.write(report + "\n")


if __name__ == "__main__":
    main()
