"""Models: the SmolLM2-135M-Instruct conversion, the tiny from-scratch policy, and its SFT job; and the one place a
model directory is saved (:func:`save_hf_model`) and loaded (:func:`load_hf_model`).

Every model directory the pipeline saves carries :data:`DIGEST_FILE`, the sha256 of each of its files, written at save
time and checked at load (:func:`check_model_digest`), so damaged weights fail with the file's path instead of
sampling garbage. Recovery: delete the directory and rerun ``snakemake`` (it is a final target, so it is rebuilt).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ead.io import atomic_directory, file_sha256

#: The digest file of a saved model directory: {"algorithm": "sha256", "files": {relative path: hex digest}}.
DIGEST_FILE = "ead_digest.json"

log = logging.getLogger(__name__)


class ModelIntegrityError(ValueError):
    """A saved model directory does not match the digest written when it was saved; the message names the file."""


def write_model_digest(directory: str | Path) -> None:
    """Record the sha256 of every file under ``directory`` (except the digest file) in :data:`DIGEST_FILE`."""
    directory = Path(directory)
    files = {path.relative_to(directory).as_posix(): file_sha256(path)
             for path in sorted(directory.rglob("*")) if path.is_file() and path.name != DIGEST_FILE}
    (directory / DIGEST_FILE).write_text(json.dumps({"algorithm": "sha256", "files": files}, indent=1) + "\n")


def check_model_digest(directory: str | Path, *, required: bool = False) -> bool:
    """Raise :class:`ModelIntegrityError` naming the first file under ``directory`` that is missing or differs from
    its recorded digest. A directory without :data:`DIGEST_FILE` (a hub download, or a model saved before digests
    existed) passes with a warning unless ``required``. Returns whether a digest was checked."""
    directory = Path(directory)
    digest_path = directory / DIGEST_FILE
    if not digest_path.exists():
        if required:
            raise ModelIntegrityError(f"{digest_path}: missing; the model in {directory} cannot be verified "
                                      f"(delete {directory} and rerun snakemake to rebuild it)")
        log.warning("%s has no %s: its files are not verified", directory, DIGEST_FILE)
        return False
    try:
        recorded = json.loads(digest_path.read_text())["files"]
    except (ValueError, KeyError, TypeError) as error:
        raise ModelIntegrityError(f"{digest_path}: unreadable digest ({error!r}); delete {directory} and rerun "
                                  "snakemake to rebuild the model") from None
    for name, expected in recorded.items():
        path = directory / name
        if not path.is_file():
            raise ModelIntegrityError(f"{path}: missing from the saved model (listed in {digest_path}); delete "
                                      f"{directory} and rerun snakemake to rebuild it")
        if file_sha256(path) != expected:
            raise ModelIntegrityError(f"{path}: damaged (its sha256 differs from the one recorded in {digest_path} "
                                      f"when it was saved); delete {directory} and rerun snakemake to rebuild it")
    return True


def save_hf_model(directory: str | Path, model, tokenizer) -> None:
    """Save model (safetensors), tokenizer and their digest to ``directory``, replacing it whole or not at all."""
    with atomic_directory(directory) as staging:
        model.save_pretrained(staging, safe_serialization=True)
        tokenizer.save_pretrained(staging)
        write_model_digest(staging)


def load_hf_model(model_dir: str | Path, dtype=None, device: str = "cpu"):
    """Load a local HF model + tokenizer (safetensors only, no remote code, no hub access) onto ``device``, after
    checking its digest (:func:`check_model_digest`). ``dtype``: a torch dtype, default float32."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model_dir = Path(model_dir)
    if not (model_dir / "config.json").exists():
        raise FileNotFoundError(f"{model_dir} is not a saved HF model directory (no config.json)")
    check_model_digest(model_dir)
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True, use_safetensors=True,
                                                     dtype=dtype or torch.float32)
    except Exception as error:  # a damaged file of a directory without a digest: name the directory
        raise ModelIntegrityError(f"{model_dir}: cannot be loaded ({type(error).__name__}: {error}); delete it and "
                                  "rerun snakemake to rebuild it") from error
    return model.to(device).eval(), tokenizer
