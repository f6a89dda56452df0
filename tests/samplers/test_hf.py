"""HF sampler: exact behaviour log-probs, warm-up at tau = 1, EOS handling, and the sampled distribution."""

import math

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from ead.samplers.hf import (
    GROUPED_SDPA,
    ScheduleLogitsProcessor,
    _grouped_kv_attention,
    left_pad,
    response_entropies,
    sample,
)
from ead.schedule import AnnealedSchedule, EntropyAwareTemperature, FixedTemperature, Schedule
from tests.conftest import (
    FLOAT32_ROUNDING,
    LOGIT_ATOL,
    entropy_tolerance,
    log_prob_tolerance,
    make_tiny_llama,
    recorded_logits,
    sampled_logits,
)

EOS, PAD = 2, 0


def full_forward_logits(model, input_ids, attention_mask, response_ids, response_mask):
    """Logits predicting each response token, from one uncached forward pass over prompt + response."""
    ids = torch.cat([input_ids, response_ids], dim=1)
    mask = torch.cat([attention_mask, response_mask.long()], dim=1)
    position_ids = (mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=mask, position_ids=position_ids).logits.float()
    prompt_length = input_ids.shape[1]
    return logits[:, prompt_length - 1 : prompt_length - 1 + response_ids.shape[1]]


@pytest.fixture
def prompts():
    # Different lengths, so left padding and per-row position ids are exercised.
    return left_pad([[1, 5, 9, 4], [1, 7], [1, 3, 3, 8, 12, 6], [1, 20, 21]], pad_id=PAD)


@pytest.mark.parametrize("step, tau_min", [(0, 0.1), (40, 0.1), (0, 0.8)])
def test_behaviour_logprobs_are_exact_under_ead(prompts, step, tau_min):
    """The sampler records log pi_EAD (behaviour), log pi at tau 1 (target) and the tau-1 entropy of exactly the
    logits it drew each token from, and those logits are the model's: a KV-cached step equals one uncached pass."""
    model = make_tiny_llama(initializer_range=0.2)
    schedule = AnnealedSchedule(tau_max=1.2, tau_min=tau_min, d0=25, warmup=10, decay_scale=1)
    input_ids, attention_mask = prompts
    with recorded_logits(model) as calls:
        out = sample(model, input_ids, attention_mask, schedule, max_new_tokens=40, eos_token_ids=[EOS],
                     pad_token_id=PAD, step=step, generator=torch.Generator().manual_seed(0))
    seen = sampled_logits(calls, out.response_mask)
    length = out.token_ids.shape[1]
    taus = [float(schedule.temperatures(t, step)) for t in range(length)]
    torch.testing.assert_close(out.temperatures, torch.tensor(taus, dtype=torch.float64))
    mask = out.response_mask
    assert mask.sum() > 40  # the check covers many tokens
    tokens = out.token_ids[..., None]
    # 1. Log-probs and entropies of the logits the sampler drew from: the same float32 operations, so equal up to
    #    the rounding of log-softmax alone (whatever the CPU kernels).
    for t, tau in enumerate(taus):
        log_p = torch.log_softmax(seen[:, t], -1)
        expected = {"behaviour": torch.log_softmax(seen[:, t] / tau, -1).gather(-1, tokens[:, t]).squeeze(-1),
                    "target": log_p.gather(-1, tokens[:, t]).squeeze(-1), "entropy": -(log_p.exp() * log_p).sum(-1)}
        got = {"behaviour": out.behaviour_logprobs[:, t], "target": out.target_logprobs[:, t],
               "entropy": out.entropies[:, t]}
        for name in expected:
            torch.testing.assert_close(got[name][mask[:, t]], expected[name][mask[:, t]], atol=FLOAT32_ROUNDING, rtol=0,
                                       msg=lambda m, name=name, t=t: f"{name} at t = {t}: {m}")
    # 2. Those logits are the model's: one uncached forward over prompt + response gives the same logits up to float32
    #    rounding (a wrong cache, position or mask would be off by > 1e-1).
    full = full_forward_logits(model, input_ids, attention_mask, out.token_ids, out.response_mask)
    gap = (seen - full).abs().amax(-1)  # per token, max over the vocabulary
    assert gap[mask].max() < LOGIT_ATOL
    # 3. Hence the recorded log-probs are those of the model's logits, within the bound the logit gap implies: at
    #    tau_min = 0.1 the logits are divided by 0.1, so float32 rounding is amplified 10x (2 * gap / tau).
    tau_per_token = torch.tensor(taus)[None, :].expand_as(gap)
    expected_behaviour = torch.log_softmax(full / tau_per_token[..., None], -1).gather(-1, tokens).squeeze(-1)
    expected_target = torch.log_softmax(full, -1).gather(-1, tokens).squeeze(-1)
    assert ((out.behaviour_logprobs - expected_behaviour).abs() <= log_prob_tolerance(gap, tau_per_token))[mask].all()
    assert ((out.target_logprobs - expected_target).abs() <= log_prob_tolerance(gap, 1.0))[mask].all()
    # Warm-up: positions t < c are sampled at tau = 1, so behaviour and target coincide there.
    torch.testing.assert_close(out.behaviour_logprobs[:, :10], out.target_logprobs[:, :10], atol=0, rtol=0)
    # After warm-up the annealed temperatures differ from 1, so the two log-probs differ somewhere.
    assert (out.behaviour_logprobs[:, 10:] - out.target_logprobs[:, 10:])[mask[:, 10:]].abs().max() > 1e-2


@pytest.mark.parametrize("mode", ["gate", "edt"])
def test_entropy_aware_sampling_draws_each_token_at_its_own_rows_temperature(prompts, mode):
    """An entropy-aware schedule gives every row at every position the temperature of that row's own tau = 1
    entropy there; the recorded behaviour log-probs are those of exactly that temperature (TIS needs them)."""
    model = make_tiny_llama(initializer_range=0.2)
    input_ids, attention_mask = prompts
    probe = sample(model, input_ids, attention_mask, FixedTemperature(1.0), max_new_tokens=30, eos_token_ids=[EOS],
                   pad_token_id=PAD, generator=torch.Generator().manual_seed(0))
    # about half the tokens on each side, midway between two observed entropies (none sits on the gate)
    values = probe.entropies[probe.response_mask].sort().values
    gate = float(values[len(values) // 2: len(values) // 2 + 2].mean())
    schedule = EntropyAwareTemperature(mode=mode, tau_low=0.5, tau_high=1.5, gate=gate, base=0.5, theta=gate / 2)
    with recorded_logits(model) as calls:
        out = sample(model, input_ids, attention_mask, schedule, max_new_tokens=30, eos_token_ids=[EOS],
                     pad_token_id=PAD, generator=torch.Generator().manual_seed(0))
    seen = sampled_logits(calls, out.response_mask)
    mask, tokens = out.response_mask, out.token_ids[..., None]
    taus = []
    for t in range(out.token_ids.shape[1]):
        log_p = torch.log_softmax(seen[:, t], -1)
        tau = schedule.temperature_of_entropy(-(log_p.exp() * log_p).sum(-1).double()).float()
        taus.append(tau[mask[:, t]])
        expected = torch.log_softmax(seen[:, t] / tau[:, None], -1).gather(-1, tokens[:, t]).squeeze(-1)
        torch.testing.assert_close(out.behaviour_logprobs[:, t][mask[:, t]], expected[mask[:, t]],
                                   atol=FLOAT32_ROUNDING, rtol=0)
        torch.testing.assert_close(out.temperatures[t], tau[mask[:, t]].double().mean(), atol=1e-6, rtol=0)
    taus = torch.cat(taus)
    assert mask.sum() > 40 and (taus > 1.0).any() and (taus < 1.0).any()  # both sides of the gate were sampled


def test_eos_ends_a_row_and_everything_after_is_masked(tiny_llama, prompts):
    input_ids, attention_mask = prompts
    # tau 3 flattens the distribution so EOS (1 of 32 tokens) shows up within 60 tokens.
    out = sample(tiny_llama, input_ids, attention_mask, FixedTemperature(3.0), max_new_tokens=60,
                 eos_token_ids=[EOS], pad_token_id=PAD, generator=torch.Generator().manual_seed(1))
    assert out.finished.any()
    for row in range(out.token_ids.shape[0]):
        tokens, mask = out.token_ids[row], out.response_mask[row]
        hits = (tokens == EOS).nonzero().flatten()
        if out.finished[row]:
            end = int(hits[0])  # the EOS token belongs to the response; nothing real after it
            assert mask[: end + 1].all() and not mask[end + 1 :].any()
            assert (tokens[end + 1 :] == PAD).all() and out.lengths[row] == end + 1
            assert (out.behaviour_logprobs[row, end + 1 :] == 0).all()
        else:
            assert mask.all() and len(hits) == 0 and out.lengths[row] == 60


def test_greedy_takes_the_argmax(tiny_llama, prompts):
    input_ids, attention_mask = prompts
    out = sample(tiny_llama, input_ids, attention_mask, FixedTemperature(1.0), max_new_tokens=12,
                 eos_token_ids=[EOS], pad_token_id=PAD, greedy=True)
    logits = full_forward_logits(tiny_llama, input_ids, attention_mask, out.token_ids, out.response_mask)
    mask = out.response_mask
    assert torch.equal(out.token_ids[mask], logits.argmax(-1)[mask])
    assert (out.behaviour_logprobs == 0).all()


class FrozenPrefixThen(Schedule):
    """Near-greedy (tau = 1e-4) for t < k, so every row shares one prefix; then the wrapped schedule."""

    name = "frozen_prefix_test"

    def __init__(self, inner, k):
        self.inner, self.k = inner, k

    def temperatures(self, positions, step=0):
        return 1e-4 if positions < self.k else self.inner.temperatures(positions, step)


def chi_square_p_value(counts, probabilities):
    expected = probabilities * counts.sum()
    keep = expected >= 5  # pool sparse cells so the chi-square approximation holds
    observed = torch.cat([counts[keep], counts[~keep].sum(0, keepdim=True)])
    expected = torch.cat([expected[keep], expected[~keep].sum(0, keepdim=True)])
    if expected[-1] < 5:
        observed, expected = observed[:-1], expected[:-1]
    statistic = ((observed - expected) ** 2 / expected).sum()
    dof = len(observed) - 1
    return float(torch.special.gammaincc(torch.tensor(dof / 2.0), statistic / 2.0))


@pytest.mark.parametrize("position", [0, 3])
def test_sampled_tokens_follow_softmax_of_logits_over_tau(position, tiny_llama):
    # warmup 0 so position 0 is annealed too: tau_0 = tau_max = 1.5; tau_3 = 2.5 - e^(3/4) = 0.383
    ead = AnnealedSchedule(tau_max=1.5, tau_min=0.1, d0=4, warmup=0)
    schedule = FrozenPrefixThen(ead, k=position)
    rows = 20000
    input_ids, attention_mask = left_pad([[1, 5, 9, 4]] * rows, pad_id=PAD)
    out = sample(tiny_llama, input_ids, attention_mask, schedule, max_new_tokens=position + 1, eos_token_ids=[],
                 pad_token_id=PAD, generator=torch.Generator().manual_seed(2))
    if position:
        assert len(torch.unique(out.token_ids[:, :position], dim=0)) == 1  # one shared prefix
    logits = full_forward_logits(tiny_llama, input_ids[:1], attention_mask[:1], out.token_ids[:1],
                                 out.response_mask[:1])
    tau = ead.temperatures(position)
    assert tau == pytest.approx(1.5 if position == 0 else 2.5 - math.exp(0.75))
    probabilities = torch.softmax(logits[0, position].double() / tau, -1)
    counts = torch.bincount(out.token_ids[:, position], minlength=probabilities.numel()).double()
    assert chi_square_p_value(counts, probabilities) > 1e-3
    # The same counts are clearly inconsistent with tau = 1, so the test has power.
    assert chi_square_p_value(counts, torch.softmax(logits[0, position].double(), -1)) < 1e-6


def test_logits_processor_in_hf_generate(tiny_llama, prompts):
    input_ids, attention_mask = prompts
    schedule = AnnealedSchedule(tau_max=1.2, tau_min=0.1, d0=10, warmup=3)
    processor = ScheduleLogitsProcessor(schedule, prompt_length=input_ids.shape[1])
    torch.manual_seed(3)
    out = tiny_llama.generate(input_ids=input_ids, attention_mask=attention_mask, do_sample=True, top_k=0, top_p=1.0,
                              temperature=1.0, max_new_tokens=15, logits_processor=[processor],
                              output_scores=True, output_logits=True, return_dict_in_generate=True, pad_token_id=PAD)
    for t, (scores, raw) in enumerate(zip(out.scores, out.logits)):
        tau = schedule.temperatures(t)
        torch.testing.assert_close(scores, raw / tau, atol=1e-6, rtol=1e-6)



def test_generate_with_its_own_temperature_beside_the_processor_is_refused(tiny_llama, prompts):
    """transformers adds its temperature warper to the same list, which would sample at 0.7 x tau_t; the vLLM path
    refuses the same. generate's default (1.0) passes."""
    input_ids, attention_mask = prompts
    processor = ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=input_ids.shape[1])
    with pytest.raises(ValueError, match=r"generate\(temperature=0.7\) beside ScheduleLogitsProcessor would sample "
                                         r"at 0.7 x tau_t: keep generate's temperature at 1.0"):
        tiny_llama.generate(input_ids=input_ids, attention_mask=attention_mask, do_sample=True, top_k=0, top_p=1.0,
                            temperature=0.7, max_new_tokens=3, logits_processor=[processor], pad_token_id=PAD)
    processor = ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=input_ids.shape[1])
    out = tiny_llama.generate(input_ids=input_ids, attention_mask=attention_mask, do_sample=True, top_k=0, top_p=1.0,
                              max_new_tokens=3, logits_processor=[processor], pad_token_id=PAD)
    assert out.shape[1] == input_ids.shape[1] + 3

@pytest.mark.parametrize("truncation", [{"top_k": 5}, {"top_p": 0.9}, {"min_p": 0.1}, {"typical_p": 0.9},
                                        {"epsilon_cutoff": 0.01}, {"eta_cutoff": 0.01}])
def test_generate_that_truncates_beside_the_processor_is_refused(tiny_llama, prompts, truncation):
    """A truncated distribution is not the schedule's, whose log-probs TIS divides by; the vLLM path refuses the same.
    A top-k at or above the vocabulary keeps every token and passes."""
    input_ids, attention_mask = prompts
    (name, value), = truncation.items()
    arguments = {"top_k": 0, "top_p": 1.0, **truncation}
    processor = ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=input_ids.shape[1])
    with pytest.raises(ValueError, match=rf"generate\({name}={value}\) beside ScheduleLogitsProcessor would sample "
                                         r"from a truncated distribution.*pass top_k=0, top_p=1.0"):
        tiny_llama.generate(input_ids=input_ids, attention_mask=attention_mask, do_sample=True, max_new_tokens=3,
                            logits_processor=[processor], pad_token_id=PAD, **arguments)
    processor = ScheduleLogitsProcessor(AnnealedSchedule(), prompt_length=input_ids.shape[1])
    out = tiny_llama.generate(input_ids=input_ids, attention_mask=attention_mask, do_sample=True, max_new_tokens=3,
                              top_k=tiny_llama.config.vocab_size, top_p=1.0, logits_processor=[processor],
                              pad_token_id=PAD)
    assert out.shape[1] == input_ids.shape[1] + 3


def test_response_entropies_rescore_exactly_what_the_sampler_recorded(prompts):
    """Responses drawn elsewhere (vLLM) get their tau = 1 entropies from a teacher-forced pass; on responses the HF
    sampler drew, that pass must reproduce the entropies it recorded, whatever the batching and padding."""
    model = make_tiny_llama(initializer_range=0.2)
    input_ids, attention_mask = prompts
    out = sample(model, input_ids, attention_mask, FixedTemperature(1.3), max_new_tokens=30, eos_token_ids=[EOS],
                 pad_token_id=PAD, generator=torch.Generator().manual_seed(3))
    prompt_tokens = [ids[mask.bool()].tolist() for ids, mask in zip(input_ids, attention_mask)]
    responses = [ids[mask].tolist() for ids, mask in zip(out.token_ids, out.response_mask)]
    assert len({len(r) for r in responses}) > 1  # ragged: some rows ended with EOS
    # batch 3 regroups the 4 rows, so prompts and responses are padded differently than while sampling
    rescored = response_entropies(model, prompt_tokens, responses, pad_token_id=PAD, batch_size=3)
    assert [len(e) for e in rescored] == [len(r) for r in responses]
    for row, values in enumerate(rescored):
        recorded = out.entropies[row][out.response_mask[row]]
        # another padding and batch grouping rounds the logits apart by up to LOGIT_ATOL; H moves by at most that much
        assert ((torch.tensor(values) - recorded).abs() <= entropy_tolerance(recorded, LOGIT_ATOL)).all(), row
    with pytest.raises(ValueError, match="4 prompts for 3 responses"):
        response_entropies(model, prompt_tokens, responses[:3], pad_token_id=PAD)


def padded_reference_sample(model, input_ids, attention_mask, schedule, *, max_new_tokens, eos_token_ids,
                            generator):
    """The padded path the sampler replaced, as the reference: every position one uncached forward pass over the
    left-padded prompts + responses so far with stock SDPA (which expands the grouped KV heads), then the sampler's
    draw over the whole batch; a row that drew EOS is padded (and masked) after it. Returns the tokens, the response
    mask, the tau = 1 log-probs of the tokens and the tau = 1 entropies."""
    assert model.config._attn_implementation == "sdpa"
    tokens, target, entropy, mask_columns = [], [], [], []
    responses = torch.empty((input_ids.shape[0], 0), dtype=torch.long)
    finished = torch.zeros(input_ids.shape[0], dtype=torch.bool)
    for t in range(max_new_tokens):
        ids = torch.cat([input_ids, responses], dim=1)
        mask = torch.cat([attention_mask, torch.ones_like(responses)], dim=1)
        with torch.no_grad():
            step_logits = model(input_ids=ids, attention_mask=mask,
                                position_ids=(mask.cumsum(-1) - 1).clamp(min=0)).logits[:, -1]
        log_p = torch.log_softmax(step_logits, -1)
        tau = float(schedule.temperatures(t))
        behaviour = log_p if tau == 1.0 else torch.log_softmax(step_logits / tau, -1)
        token = torch.multinomial(behaviour.exp(), 1, generator=generator).squeeze(-1)
        token = torch.where(finished, PAD, token)
        mask_columns.append(~finished)
        tokens.append(token)
        target.append(log_p.gather(-1, token[:, None]).squeeze(-1))
        entropy.append(-(log_p.exp() * log_p).sum(-1))
        finished = finished | torch.isin(token, torch.tensor(eos_token_ids, dtype=torch.long))
        responses = torch.cat([responses, token[:, None]], dim=1)
    return (torch.stack(tokens, 1), torch.stack(mask_columns, 1), torch.stack(target, 1),
            torch.stack(entropy, 1))


def grouped_query_llama():
    """A float64 Llama with grouped-query attention (4 query heads share 2 key/value heads), like SmolLM2's 9 / 3,
    so the sampler's grouped SDPA path is exercised; float64 makes two exact computations agree to ~1e-12."""
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         initializer_range=0.2, bos_token_id=1, eos_token_id=2, pad_token_id=0,
                         tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval().double()


@pytest.mark.parametrize("eos_token_ids", [[], [EOS]])
def test_sampler_equals_the_padded_path_token_for_token(eos_token_ids):
    """The static-cache, prefill-once, grouped-KV sampler that drops finished rows draws the same tokens from the
    same distributions as the padded, uncached, stock-SDPA path for one seed: the per-token log-probs and entropies
    agree to float64 rounding, so with the same random numbers every token is the same (prompts of 4 lengths, one
    prompt in 3 rows, a 1-token prompt: padding, shared prefill and an empty prefix are all exercised; with EOS, rows
    end at different positions and are dropped from the forward passes)."""
    model = grouped_query_llama()
    rows = [[1, 5, 9, 4], [1, 7], [1, 3, 3, 8, 12, 6], [1, 5, 9, 4], [1], [1, 5, 9, 4], [1, 20, 21]]
    input_ids, attention_mask = left_pad(rows, pad_id=PAD)
    schedule = AnnealedSchedule(tau_max=2.0, tau_min=0.8, d0=8, warmup=3)
    with recorded_logits(model) as calls:
        out = sample(model, input_ids, attention_mask, schedule, max_new_tokens=30, eos_token_ids=eos_token_ids,
                     pad_token_id=PAD, generator=torch.Generator().manual_seed(5))
    tokens, mask, target, entropy = padded_reference_sample(
        model, input_ids, attention_mask, schedule, max_new_tokens=out.token_ids.shape[1],
        eos_token_ids=eos_token_ids, generator=torch.Generator().manual_seed(5))
    assert torch.equal(out.token_ids, tokens) and torch.equal(out.response_mask, mask)
    torch.testing.assert_close(out.target_logprobs[mask], target[mask], atol=1e-10, rtol=0)
    torch.testing.assert_close(out.entropies[mask], entropy[mask], atol=1e-10, rtol=0)
    rows_computed = [call.shape[0] for call in calls]
    if eos_token_ids:  # the case has power: rows ended at different times and were dropped
        assert 1 <= int(out.finished.sum()) < len(rows) and len(set(out.lengths.tolist())) > 2
        assert min(rows_computed) < len(rows)
    else:
        assert out.response_mask.all() and set(rows_computed) == {len(rows)}
    assert model.config._attn_implementation == "sdpa"  # the grouped attention is swapped in only while sampling


def test_grouped_kv_attention_equals_stock_sdpa_on_a_padded_float32_batch():
    """On float32 (the analyses' dtype), a padded batch: the grouped SDPA call and stock SDPA's copied heads give the
    same logits up to float32 rounding, in the prompt pass and when teacher-forcing a response."""
    model = grouped_query_llama().float()
    input_ids, attention_mask = left_pad([[1, 5, 9, 4, 7, 7, 3], [1, 7], [1, 3, 3, 8], [1, 20, 21]], pad_id=PAD)
    position_ids = (attention_mask.cumsum(-1) - 1).clamp(min=0)
    with torch.no_grad():
        stock = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).logits
        with _grouped_kv_attention(model):
            assert model.config._attn_implementation == GROUPED_SDPA
            grouped = model(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids).logits
    real = attention_mask.bool()
    torch.testing.assert_close(grouped[real], stock[real], atol=FLOAT32_ROUNDING, rtol=0)


def test_sampler_rejects_an_empty_prompt_row():
    model = grouped_query_llama()
    input_ids, attention_mask = left_pad([[1, 5], []], pad_id=PAD)
    with pytest.raises(ValueError, match=r"empty rows: \[1\]"):
        sample(model, input_ids, attention_mask, FixedTemperature(1.0), max_new_tokens=2, eos_token_ids=[EOS],
               pad_token_id=PAD)
