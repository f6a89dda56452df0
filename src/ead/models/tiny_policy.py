"""The tiny from-scratch policy for CPU RL grids: a character tokenizer and a small standard Llama.

A standard HF architecture (LlamaForCausalLM) and a `tokenizers` fast tokenizer saved with save_pretrained, so
transformers, verl and vLLM all load the result like any other model. The alphabet covers the countdown task
(digits, + - * / =, "Numbers:", "Target:", \\boxed{}); a character outside it is an error, not a silent <unk>.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

PAD, BOS, EOS = "<pad>", "<s>", "</s>"
ALPHABET = "\n *+-/0123456789:=NT\\abdegmorstux{}()"


def build_tokenizer(alphabet: str = ALPHABET):
    """Character-level fast tokenizer: ids 0-2 are <pad>, <s>, </s>; <s> is prepended to every encoding."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    if len(set(alphabet)) != len(alphabet):
        raise ValueError(f"alphabet has repeated characters: {alphabet!r}")
    vocab = {PAD: 0, BOS: 1, EOS: 2, **{ch: i + 3 for i, ch in enumerate(alphabet)}}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=PAD))
    core.pre_tokenizer = pre_tokenizers.Split("", behavior="isolated")
    core.decoder = decoders.Fuse()
    core.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, 1)])
    return PreTrainedTokenizerFast(tokenizer_object=core, bos_token=BOS, eos_token=EOS, pad_token=PAD,
                                   clean_up_tokenization_spaces=False)


def encode_strict(tokenizer, text: str, add_special_tokens: bool = True) -> list[int]:
    """Encode ``text``, refusing characters the tokenizer does not know (they would become <pad>)."""
    unknown = sorted(set(text) - set(tokenizer.get_vocab()))
    if unknown:
        raise ValueError(f"characters {unknown} are not in the tiny policy's alphabet {ALPHABET!r}")
    return tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"]


@dataclass(frozen=True)
class TinyPolicyShape:
    """Architecture of the tiny policy (defaults: ~1M parameters, the tiny1m policy)."""

    hidden_size: int = 128
    num_hidden_layers: int = 4
    num_attention_heads: int = 4
    intermediate_size: int = 512
    max_position_embeddings: int = 128


def build_model(tokenizer, shape: TinyPolicyShape, seed: int):
    """A freshly initialised LlamaForCausalLM (tied embeddings) sized for ``tokenizer``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=len(tokenizer), num_key_value_heads=shape.num_attention_heads,
                         tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, **asdict(shape))
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model
