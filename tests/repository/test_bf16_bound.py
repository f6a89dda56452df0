"""The bf16 log-prob bound of tests/conftest.py (bfloat16_log_prob_bounds) against real bf16 forward passes.

The verl two-rank run (tests/vllm/test_verl_two_ranks.py) checks vLLM's bf16 rollout and verl's bf16 actor with this
bound; here it meets the plainest bf16 computation, the HF model cast to bfloat16 (every weight and every op output
rounded), on peaked and flat tiny Llamas, under a schedule of temperatures down to 0.1.
"""

import numpy as np
import pytest
import torch

from tests.conftest import bfloat16_log_prob_bounds, make_tiny_llama

pytestmark = pytest.mark.slow  # ~15 s of CPU; the bound serves the slow verl tests only


def log_probs(model, prompt_ids, response_ids, tau) -> np.ndarray:
    sequence = torch.tensor([prompt_ids + response_ids])
    with torch.no_grad():
        logits = model(input_ids=sequence).logits[0, len(prompt_ids) - 1: -1].float()
    tau = torch.as_tensor(tau, dtype=torch.float32).reshape(-1, 1)
    scaled = torch.log_softmax(logits / tau, dim=-1)
    return scaled.gather(-1, torch.tensor([response_ids]).T).squeeze(-1).double().numpy()


@pytest.mark.parametrize("initializer_range", [0.02, 0.5])  # flat (a fresh policy) and peaked distributions
def test_a_bf16_pass_stays_within_the_bound_and_a_wrong_temperature_does_not(initializer_range):
    model = make_tiny_llama(vocab_size=40, hidden_size=64, heads=2, seed=1, initializer_range=initializer_range)
    in_bf16 = make_tiny_llama(vocab_size=40, hidden_size=64, heads=2, seed=1,
                              initializer_range=initializer_range).to(torch.bfloat16)
    generator = np.random.default_rng(0)
    outside_when_wrong = 0
    for _ in range(4):
        prompt = generator.integers(3, 40, size=12).tolist()
        response = generator.integers(3, 40, size=40).tolist()
        tau = 1.2 - 1.1 * np.minimum(np.arange(len(response)) / 30, 1.0)  # 1.2 down to 0.1, as EAD's schedule
        bound = bfloat16_log_prob_bounds(model, prompt, response, tau)
        exact = log_probs(model, prompt, response, tau)
        gap = np.abs(log_probs(in_bf16, prompt, response, tau) - exact)
        assert (gap <= bound).all(), (gap / bound).max()
        outside_when_wrong += int((np.abs(log_probs(in_bf16, prompt, response, tau * 1.1) - exact) > bound).sum())
    assert outside_when_wrong > 0  # a 10% temperature error is caught: the bound is not vacuous
