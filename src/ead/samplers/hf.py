"""EAD (or any schedule) for torch/transformers models: a LogitsProcessor and a KV-cached sampling loop.

The sampling loop returns, for every response token, everything RL and the analyses need:

* ``token_ids``           the sampled token (pad after the row finished),
* ``behaviour_logprobs``  log pi_schedule(y_t) = log_softmax(logits / tau_t)[y_t], the sampler's own log-prob
                          (TIS divides by this),
* ``target_logprobs``     log_softmax(logits)[y_t] at tau = 1, the policy being trained,
* ``entropies``           full-vocabulary entropy of softmax(logits) at tau = 1,
* ``response_mask``       1 for real response tokens (the EOS token included), 0 after the row finished.

Prompts are left-padded; response position t counts from the first response token (0-based), so every row of
a batch is at the same t and a schedule gives one temperature per step. On CPU the loop is fast where a plain
padded batch is slow (benchmarks/bench_sampler_speed.py): each distinct prompt is encoded once and
unpadded, the KV cache is static (written in place), and grouped-query heads are not copied at every step (stock
SDPA copies them whenever there is a padding mask). Each row still attends to exactly its own tokens.

:func:`response_logits` scores given responses in one teacher-forced forward pass (the RL trainer's log-probs,
and the tau = 1 entropies of responses sampled elsewhere, e.g. by vLLM, via :func:`response_entropies`).
"""

from __future__ import annotations

import inspect
import numbers
import sys
from contextlib import contextmanager
from dataclasses import dataclass

import torch
from transformers import (
    AttentionInterface,
    DynamicCache,
    LogitsProcessor,
    LogitsProcessorList,
    StaticCache,
    TemperatureLogitsWarper,
)
from transformers.cache_utils import StaticLayer
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

from ead.metrics import entropy_from_log_probs
from ead.schedule import Schedule, checked_schedule, checked_step


class ScheduleLogitsProcessor(LogitsProcessor):
    """Divide logits by the schedule's tau_t, t = response position (for ``model.generate``).

    ``prompt_length`` is the padded prompt length of the batch (``input_ids.shape[1]`` before generation, at least 1);
    ``step`` the RL global step (an integer >= 0). Keep ``generate``'s ``temperature`` at 1.0 (its default), top-k
    off (``top_k=0``) and top-p 1.0: transformers applies its own warpers beside this processor, so
    ``temperature=0.7`` would sample at 0.7 x tau_t, and a truncation from another distribution than the schedule's;
    the processor refuses both at the first token. Bad arguments raise ValueError naming the parameter.
    """

    def __init__(self, schedule: Schedule, prompt_length: int, step: int = 0):
        checked_schedule(schedule)
        if isinstance(prompt_length, bool) or not isinstance(prompt_length, numbers.Integral) or prompt_length < 1:
            raise ValueError(f"prompt_length must be the prompt batch's length, an integer >= 1 "
                             f"(input_ids.shape[1] before generate), got {prompt_length!r}")
        self.schedule = schedule
        self.prompt_length = int(prompt_length)
        self.step = checked_step(step)
        self._generate_checked = False

    def _refuse_what_changes_the_distribution(self, caller, vocab_size: int) -> None:
        """Once per processor: refuse a ``generate`` whose own warpers would change the schedule's distribution.
        transformers puts them into the same LogitsProcessorList (``caller``, the frame that calls this processor): its
        TemperatureLogitsWarper would divide the scores a second time (tau_t x that temperature), and a truncation
        (top-k below the vocabulary, top-p, min-p, typical-p, epsilon, eta, top-h) would sample from another
        distribution than the one whose log-probs TIS divides by. The vLLM path refuses the same."""
        self._generate_checked = True
        processors = caller.f_locals.get("self") if caller is not None else None
        if not isinstance(processors, LogitsProcessorList):
            return
        for processor in processors:
            if isinstance(processor, TemperatureLogitsWarper) and processor.temperature != 1.0:
                raise ValueError(f"generate(temperature={processor.temperature}) beside ScheduleLogitsProcessor would "
                                 f"sample at {processor.temperature} x tau_t: keep generate's temperature at 1.0 (the "
                                 "processor applies the schedule)")
            truncation = _truncation(processor, vocab_size)
            if truncation:
                raise ValueError(f"generate({truncation}) beside ScheduleLogitsProcessor would sample from a truncated "
                                 "distribution, not the schedule's (whose log-probs TIS divides by): pass top_k=0, "
                                 "top_p=1.0 and no min_p, typical_p, epsilon_cutoff, eta_cutoff or top_h")

    def temperature(self, position: int) -> float:
        return float(self.schedule.temperatures(position, self.step))

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if not self._generate_checked:
            self._refuse_what_changes_the_distribution(sys._getframe(1), scores.shape[-1])
        position = input_ids.shape[1] - self.prompt_length
        if position < 0:  # else every response token would count as a prompt token and stay at tau = 1
            raise ValueError(f"prompt_length = {self.prompt_length} exceeds the input's length {input_ids.shape[1]} "
                             "at a generated token: pass the prompt batch's input_ids.shape[1]")
        if self.schedule.reads_logits:  # a temperature per row, from that row's own distribution
            log_probs = torch.log_softmax(_at_least_float32(scores), dim=-1)
            tau = self.schedule.token_temperatures(log_probs, position, self.step)
            return scores / tau.to(scores.dtype)[:, None]
        tau = self.temperature(position)
        return scores if tau == 1.0 else scores / tau


#: transformers' truncating warpers -> (generate's argument, the warper's attribute holding it)
_TRUNCATIONS = {
    "TopKLogitsWarper": ("top_k", "top_k"),
    "TopPLogitsWarper": ("top_p", "top_p"),
    "MinPLogitsWarper": ("min_p", "min_p"),
    "TypicalLogitsWarper": ("typical_p", "mass"),
    "EpsilonLogitsWarper": ("epsilon_cutoff", "epsilon"),
    "EtaLogitsWarper": ("eta_cutoff", "epsilon"),
    "TopHLogitsWarper": ("top_h", "top_h"),
}


def _truncation(processor, vocab_size: int) -> str | None:
    """``"top_p=0.9"`` if ``processor`` is one of transformers' truncating warpers that truncates here, else None (a
    top-k at or above the vocabulary keeps every token)."""
    named = _TRUNCATIONS.get(type(processor).__name__)
    if named is None:
        return None
    argument, attribute = named
    value = getattr(processor, attribute, "?")
    value = value.item() if isinstance(value, torch.Tensor) else value  # eta's cutoff is kept as a float32 tensor
    if argument == "top_k" and isinstance(value, int) and value >= vocab_size:
        return None
    return f"{argument}={value:.6g}" if isinstance(value, float) else f"{argument}={value}"


@dataclass
class SampledBatch:
    """Per-token outputs of :func:`sample`, each of shape (batch, response_length) unless noted."""

    token_ids: torch.LongTensor
    response_mask: torch.BoolTensor
    behaviour_logprobs: torch.FloatTensor
    target_logprobs: torch.FloatTensor
    entropies: torch.FloatTensor
    temperatures: torch.FloatTensor  # (response_length,): tau_t at each position (mean over the rows still active)
    finished: torch.BoolTensor  # (batch,): row ended with an EOS token (False = hit max_new_tokens)

    @property
    def lengths(self) -> torch.LongTensor:
        return self.response_mask.sum(-1)


def left_pad(sequences: list[list[int]], pad_id: int) -> tuple[torch.LongTensor, torch.LongTensor]:
    """Left-pad token lists into (input_ids, attention_mask)."""
    width = max(len(s) for s in sequences)
    input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, tokens in enumerate(sequences):
        if tokens:
            input_ids[row, width - len(tokens):] = torch.tensor(tokens, dtype=torch.long)
            attention_mask[row, width - len(tokens):] = 1
    return input_ids, attention_mask


def _at_least_float32(logits: torch.Tensor) -> torch.Tensor:
    """Softmax in float32 for half-precision models; keep float64 models exact."""
    return logits.to(torch.promote_types(logits.dtype, torch.float32))


def _sdpa_grouped_kv(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    """transformers' SDPA attention, but grouped-query heads are attended by SDPA itself (``enable_gqa``) also when a
    mask is given. Stock ``sdpa`` copies every key/value head ``num_key_value_groups`` times (``repeat_kv``) whenever
    there is a mask, i.e. at every step of a padded batch: for SmolLM2 (9 query / 3 key-value heads) that copy of the
    whole KV cache per layer and step was ~90% of a decode step on CPU. Same arithmetic, so the same outputs."""
    is_causal = query.shape[2] > 1 and attention_mask is None and (
        is_causal if is_causal is not None else getattr(module, "is_causal", True))
    output = torch.nn.functional.scaled_dot_product_attention(
        query, key, value, attn_mask=attention_mask, dropout_p=dropout, scale=scaling, is_causal=is_causal,
        enable_gqa=getattr(module, "num_key_value_groups", 1) > 1)
    return output.transpose(1, 2).contiguous(), None


GROUPED_SDPA = "ead_sdpa_grouped_kv"
AttentionInterface.register(GROUPED_SDPA, _sdpa_grouped_kv)
AttentionMaskInterface.register(GROUPED_SDPA, sdpa_mask)


@contextmanager
def _grouped_kv_attention(model):
    """Within the block, a CPU model on stock ``sdpa`` attends with :func:`_sdpa_grouped_kv` (restored after).

    CPU only: on CUDA, SDPA with both a mask and ``enable_gqa`` falls back to its math kernel, slower than the copy."""
    implementation = model.config._attn_implementation
    swap = implementation == "sdpa" and next(model.parameters()).device.type == "cpu"
    if swap:
        model.set_attn_implementation(GROUPED_SDPA)
    try:
        yield
    finally:
        if swap:
            model.set_attn_implementation(implementation)


def _cache_keyword(module) -> str:
    """The name under which ``module.forward`` takes and returns its KV cache: ``cache`` from the transformers release
    that renamed it (``past_key_values`` warns a FutureWarning there), ``past_key_values`` before."""
    return "cache" if "cache" in inspect.signature(module.forward).parameters else "past_key_values"


class _CastingStaticLayer(StaticLayer):
    """A static cache layer that stores what it is given in its own dtype. Under autocast (a trainer's mixed
    precision, e.g. TRL's bf16 on a float32 model) a layer's values come out in bf16 and its keys in float32 (the
    rotary tables promote them); transformers' dynamic cache, what ``generate`` uses, then holds both in the keys'
    dtype (its concatenation promotes), and so does this one, where the static layer's in-place copy would refuse."""

    def update(self, key_states, value_states, *args, **kwargs):
        return super().update(key_states.to(self.keys.dtype), value_states.to(self.values.dtype), *args, **kwargs)


def _prefilled_cache(model, prompts: list[list[int]], width: int, max_cache_len: int) -> StaticCache:
    """A static KV cache of ``len(prompts)`` rows holding each prompt but its last token, left-aligned to end at slot
    ``width - 1`` (row ``i`` occupies slots ``width - len(prompts[i])`` to ``width - 2``; earlier slots stay zero and
    are masked).

    Each distinct prompt is encoded once, unpadded (prompts of one length in one batch), so a prompt sampled n times
    costs one prefill and no pad token is ever computed; a static cache writes each step's keys in place instead of
    concatenating the whole cache every step (transformers' ``DynamicCache``)."""
    device = next(model.parameters()).device
    cache = StaticCache(config=model.config, max_cache_len=max_cache_len)
    text = model.config.get_text_config(decoder=True)
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // text.num_attention_heads
    cache.early_initialization(batch_size=len(prompts), num_heads=text.num_key_value_heads, head_dim=head_dim,
                               dtype=model.dtype, device=device)
    if torch.is_autocast_enabled(device.type):
        for layer in cache.layers:
            layer.__class__ = _CastingStaticLayer
    rows_of = {}
    for row, tokens in enumerate(prompts):
        rows_of.setdefault(tuple(tokens[:-1]), []).append(row)
    by_length = {}
    for prefix in rows_of:
        if prefix:
            by_length.setdefault(len(prefix), []).append(prefix)
    for length, prefixes in sorted(by_length.items()):
        keyword = _cache_keyword(model.base_model)
        encoded = getattr(model.base_model(input_ids=torch.tensor(prefixes, dtype=torch.long, device=device),
                                           **{keyword: DynamicCache(config=model.config)}, use_cache=True), keyword)
        for static, dynamic in zip(cache.layers, encoded.layers):
            for index, prefix in enumerate(prefixes):
                rows = torch.tensor(rows_of[prefix], device=device)
                static.keys[rows, :, width - 1 - length:width - 1] = dynamic.keys[index].to(static.keys.dtype)
                static.values[rows, :, width - 1 - length:width - 1] = dynamic.values[index].to(static.values.dtype)
    for layer in cache.layers:
        layer.cumulative_length.fill_(width - 1)  # the next write (every row's last prompt token) goes to width - 1
    return cache


@torch.no_grad()
def sample(
    model,
    input_ids: torch.LongTensor,
    attention_mask: torch.LongTensor,
    schedule: Schedule,
    *,
    max_new_tokens: int,
    eos_token_ids,
    pad_token_id: int,
    step: int = 0,
    greedy: bool = False,
    generator: torch.Generator | None = None,
    on_position=None,
) -> SampledBatch:
    """Sample one response per (left-padded) prompt row under ``schedule`` at RL step ``step``.

    ``greedy`` takes the argmax (the schedule is then irrelevant and behaviour log-probs are 0, a point mass).
    ``on_position`` (optional) is called after every response position, e.g. to advance a progress bar.

    Uses a static KV cache (:func:`_prefilled_cache`): each distinct prompt but its last token is encoded once, then
    one batched forward pass per position, the first feeding every row's last prompt token; rows that ended are
    dropped from the forward passes once they are a quarter of them. Row ``i`` attends to exactly its own prompt and
    response, as a padded batch does, so the distributions are the same (up to float rounding of a different batch
    layout), and the random numbers are drawn for the whole batch at every position, as before.
    """
    checked_schedule(schedule)
    if isinstance(max_new_tokens, bool) or not isinstance(max_new_tokens, numbers.Integral) or max_new_tokens < 1:
        raise ValueError(f"max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
    checked_step(step)
    eos = torch.as_tensor(sorted(set([eos_token_ids] if isinstance(eos_token_ids, int) else eos_token_ids)))
    batch, width = input_ids.shape
    attention_mask = attention_mask.to(torch.bool)
    prompts = [input_ids[row][attention_mask[row]].tolist() for row in range(batch)]
    if any(len(tokens) == 0 for tokens in prompts):
        raise ValueError(f"every prompt row needs at least one token; empty rows: "
                         f"{[row for row, tokens in enumerate(prompts) if not tokens]}")
    lengths = attention_mask.sum(-1)
    device = input_ids.device
    max_cache_len = width + max_new_tokens - 1  # the last sampled token is never fed back
    # 2D mask over the cache slots: each row's left padding off; response slots on for every row (a finished row is
    # computed, unrecorded, until it is dropped). Future slots are excluded by causality.
    cache_mask = torch.cat([attention_mask, torch.ones((batch, max_new_tokens - 1), dtype=torch.bool,
                                                       device=device)], dim=-1).to(torch.long)
    with _grouped_kv_attention(model):
        cache = _prefilled_cache(model, prompts, width, max_cache_len)
        last = input_ids[:, -1:]
        position = (lengths - 1)[:, None]
        keyword = _cache_keyword(model)
        output = model(input_ids=last, attention_mask=cache_mask, position_ids=position, **{keyword: cache},
                       use_cache=True)
        logits = _at_least_float32(output.logits[:, -1, :])
        computed = torch.arange(batch, device=device)  # the rows the model still runs (the cache's rows, in order)

        finished = torch.zeros(batch, dtype=torch.bool)
        columns = {name: [] for name in ("token_ids", "response_mask", "behaviour", "target", "entropy")}
        temperatures = []
        for t in range(max_new_tokens):
            target = torch.log_softmax(logits, dim=-1)
            tau = schedule.token_temperatures(target, t, step)  # (batch,): position-only schedules broadcast
            if greedy:
                token = logits.argmax(-1)
                behaviour_logprob = torch.zeros(batch, dtype=logits.dtype)
            else:
                behaviour = (target if bool((tau == 1.0).all())
                             else torch.log_softmax(logits / tau.to(logits.dtype)[:, None], dim=-1))
                token = torch.multinomial(behaviour.exp(), 1, generator=generator).squeeze(-1)
                behaviour_logprob = behaviour.gather(-1, token[:, None]).squeeze(-1)
            active = ~finished
            token = torch.where(active, token, torch.full_like(token, pad_token_id))
            columns["token_ids"].append(token)
            columns["response_mask"].append(active)
            columns["behaviour"].append(torch.where(active, behaviour_logprob, 0.0))
            columns["target"].append(torch.where(active, target.gather(-1, token[:, None]).squeeze(-1), 0.0))
            columns["entropy"].append(torch.where(active, entropy_from_log_probs(target), 0.0))
            temperatures.append(float(tau[active].mean()) if bool(active.any()) else float(tau.mean()))
            finished = finished | (active & torch.isin(token, eos))
            if on_position is not None:
                on_position()
            if bool(finished.all()) or t == max_new_tokens - 1:
                break
            idle = finished[computed]
            if 4 * int(idle.sum()) >= len(computed):
                # Drop finished rows from the computation once they are a quarter of it (each drop copies the cache,
                # so not at every EOS). Their draws are discarded anyway, and a row's draw depends only on its own
                # probabilities and its own slice of the random numbers, so every other row draws as before.
                keep = (~idle).nonzero().squeeze(-1)
                computed, cache_mask, position = computed[keep], cache_mask[keep], position[keep]
                for layer in cache.layers:
                    layer.keys, layer.values = layer.keys[keep], layer.values[keep]
            position = position + 1
            output = model(input_ids=token[computed, None], attention_mask=cache_mask, position_ids=position,
                           **{keyword: cache}, use_cache=True)
            # Dropped rows get uniform logits: the full batch is drawn from, as when every row was computed.
            step_logits = _at_least_float32(output.logits[:, -1, :])
            logits = step_logits.new_zeros((batch, step_logits.shape[-1]))
            logits[computed] = step_logits

    stack = lambda name: torch.stack(columns[name], dim=1)  # noqa: E731
    return SampledBatch(
        token_ids=stack("token_ids"),
        response_mask=stack("response_mask"),
        behaviour_logprobs=stack("behaviour"),
        target_logprobs=stack("target"),
        entropies=stack("entropy"),
        temperatures=torch.tensor(temperatures, dtype=torch.float64),
        finished=finished,
    )


def response_logits(model, input_ids, attention_mask, response_ids, response_mask) -> torch.Tensor:
    """Logits (float32 or wider) predicting each response token, teacher-forced on left-padded prompts + responses.

    Row ``i``, column ``t`` holds the logits of the distribution that response token ``t`` was drawn from.
    """
    sequence = torch.cat([input_ids, response_ids], dim=1)
    mask = torch.cat([attention_mask, response_mask.to(attention_mask.dtype)], dim=1)
    position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
    logits = model(input_ids=sequence, attention_mask=mask, position_ids=position_ids).logits
    prompt_length, length = input_ids.shape[1], response_ids.shape[1]
    return _at_least_float32(logits[:, prompt_length - 1: prompt_length - 1 + length])


@torch.no_grad()
def response_entropies(model, prompt_token_ids: list[list[int]], response_token_ids: list[list[int]], *,
                       pad_token_id: int, batch_size: int = 8) -> list[list[float]]:
    """Full-vocabulary entropy at tau = 1 at every position of given responses (one list per response).

    The same quantity :func:`sample` records while sampling, computed afterwards from one forward pass, so
    responses drawn by another engine (vLLM) get exactly the entropies of the HF model.
    """
    if len(prompt_token_ids) != len(response_token_ids):
        raise ValueError(f"{len(prompt_token_ids)} prompts for {len(response_token_ids)} responses")
    from ead.io import progress

    device = next(model.parameters()).device
    entropies = []
    bar = progress(len(prompt_token_ids), "rescoring entropies", "seq")
    for start in range(0, len(prompt_token_ids), batch_size):
        prompts = prompt_token_ids[start:start + batch_size]
        responses = [list(r) for r in response_token_ids[start:start + batch_size]]
        input_ids, attention_mask = left_pad(prompts, pad_token_id)
        width = max(1, max(len(r) for r in responses))
        response_ids = torch.full((len(responses), width), pad_token_id, dtype=torch.long)
        response_mask = torch.zeros((len(responses), width), dtype=torch.bool)
        for row, tokens in enumerate(responses):  # responses are right-padded after their last token
            response_ids[row, :len(tokens)] = torch.tensor(tokens, dtype=torch.long)
            response_mask[row, :len(tokens)] = True
        logits = response_logits(model, input_ids.to(device), attention_mask.to(device), response_ids.to(device),
                                 response_mask.to(device))
        entropy = entropy_from_log_probs(torch.log_softmax(logits, dim=-1)).cpu()
        entropies.extend(entropy[row, :len(tokens)].tolist() for row, tokens in enumerate(responses))
        bar.update(len(responses))
    bar.close()
    return entropies
