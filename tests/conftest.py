"""Shared fixtures: tiny randomly initialised HF models (no hub, no download)."""

import importlib.util

import pytest
import torch
from transformers import LlamaConfig, LlamaForCausalLM

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


def make_char_tokenizer():
    """A character-level fast tokenizer built offline (pad=0, bos=1, eos=2), like the tiny policy's."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    alphabet = list("0123456789+-*/=()\\{}[] :.,abcdefghijklmnopqrstuvwxyz\n")
    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, **{ch: i + 3 for i, ch in enumerate(alphabet)}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    core.decoder = decoders.Fuse()
    core.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory):
    """A saved (safetensors) tiny Llama with a character tokenizer, loadable with local_files_only."""
    path = tmp_path_factory.mktemp("tiny_model")
    tokenizer = make_char_tokenizer()
    model = make_tiny_llama(vocab_size=len(tokenizer), hidden_size=32, initializer_range=0.2)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.save_pretrained(path, safe_serialization=True)
    tokenizer.save_pretrained(path)
    return path
