"""Models: the SmolLM2-135M-Instruct conversion, the tiny from-scratch policy, and its SFT job."""

from __future__ import annotations

from pathlib import Path

from ead.io import atomic_directory


def save_hf_model(directory: str | Path, model, tokenizer) -> None:
    """Save model (safetensors) and tokenizer to ``directory``, replacing it whole or not at all."""
    with atomic_directory(directory) as staging:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
