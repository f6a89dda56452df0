"""Shared fixtures: tiny randomly initialised HF models (no hub, no download), and killing a run mid-way."""

import importlib.util
import signal
import subprocess
import time

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from ead.models.tiny_policy import build_tokenizer

# tests/vllm runs inside .venv-vllm (vLLM pins another transformers); from the main environment it is run by
# tests/test_vllm_suite.py in that venv, so it is not collected here.
collect_ignore = [] if importlib.util.find_spec("vllm") else ["vllm"]


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


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A saved (safetensors) tiny Llama with a character tokenizer, loadable with local_files_only."""
    path = tmp_path_factory.mktemp("tiny_model")
    # the tiny policy's own tokenizer, over an alphabet that also covers free-form test prompts
    tokenizer = build_tokenizer(alphabet="0123456789+-*/=()\\{}[] :.,abcdefghijklmnopqrstuvwxyz\n")
    model = make_tiny_llama(vocab_size=len(tokenizer), hidden_size=32, initializer_range=0.2)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path


def kill_after_first_checkpoint(command, checkpoint_state, timeout_s=180):
    """Start ``command`` and SIGKILL it as soon as ``checkpoint_state`` (its first checkpoint) exists."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + timeout_s
    while not checkpoint_state.exists():
        assert process.poll() is None, "the run ended before its first checkpoint; nothing was interrupted"
        assert time.time() < deadline
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()


@pytest.fixture
def killed_after_first_checkpoint():
    """The function :func:`kill_after_first_checkpoint` (for the resume tests of SFT and RL training)."""
    return kill_after_first_checkpoint
