"""Shared fixtures: tiny randomly initialised HF models (no hub, no download)."""

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM


def make_tiny_llama(vocab_size=32, hidden_size=32, layers=2, heads=4, seed=0, initializer_range=0.5):
    """A float32 Llama small enough for exhaustive tests; a large init range makes distributions peaked."""
    torch.manual_seed(seed)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=hidden_size, intermediate_size=2 * hidden_size,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                         max_position_embeddings=256, initializer_range=initializer_range,
                         bos_token_id=1, eos_token_id=2, pad_token_id=0, tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval()


@pytest.fixture(scope="session")
def tiny_llama():
    return make_tiny_llama()
