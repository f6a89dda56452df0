"""A sharpened copy of a tiny policy: the same network with every logit divided by ``temperature`` (< 1).

Why: a policy fresh out of SFT on randomly drawn reference chains is *calibrated* on the task's strategy choice (it
spreads its first move over the solutions it has seen), so heating it only adds invalid tokens; the paper's premise
is a model that is over-confident in its early, strategic tokens. Sharpening is the exact, transparent way to get
one: the sharpened policy at temperature tau samples exactly what the SFT policy samples at tau * temperature
(docs/testbed.md, "The CPU testbed"). It is what low-temperature self-distillation approximates, without its
sampling cost or its noise.

The logits of a Llama are ``lm_head(norm(h))`` and ``norm`` ends with an elementwise weight, so scaling that
weight by ``1 / temperature`` scales every logit by the same factor (also with tied embeddings, where ``lm_head``
cannot be scaled alone). The result is a standard HF model directory (safetensors + tokenizer).

Run:
    python -m ead.models.sharpen --model results/models/tiny1m --temperature 0.3 --out results/models/tiny1m_sharp
"""

from __future__ import annotations

import argparse
import math

import torch

from ead.io import setup_logging
from ead.models import load_hf_model, save_hf_model


def sharpen_(model, temperature: float):
    """Scale ``model``'s logits by ``1 / temperature`` in place (via the final norm's weight); returns the model."""
    if not (isinstance(temperature, (int, float)) and math.isfinite(temperature) and 0 < temperature):
        raise ValueError(f"sharpening temperature must be a finite number > 0, got {temperature!r}")
    norm = getattr(getattr(model, "model", None), "norm", None)
    if norm is None or not hasattr(norm, "weight"):
        raise ValueError(f"{type(model).__name__} has no final norm weight (model.model.norm.weight) to scale")
    with torch.no_grad():
        norm.weight.mul_(1.0 / temperature)
    return model


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="HF model directory of the policy to sharpen")
    parser.add_argument("--temperature", type=float, required=True, help="logits are divided by this (0 < T)")
    parser.add_argument("--out", required=True, help="output model directory")
    args = parser.parse_args(argv)
    log = setup_logging("sharpen")
    model, tokenizer = load_hf_model(args.model)  # safetensors only, float32, no remote code
    save_hf_model(args.out, sharpen_(model, args.temperature), tokenizer)
    log.info("saved %s with logits / %g to %s", args.model, args.temperature, args.out)


if __name__ == "__main__":
    main()
