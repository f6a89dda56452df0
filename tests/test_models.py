"""Model directories with their digest (ead.models): written at save, checked at load, damaged files named, and
the modes of saved models."""

import os
import stat

import pytest

from ead.models import DIGEST_FILE, ModelIntegrityError, check_model_digest, load_hf_model, save_hf_model
from ead.models.tiny_policy import build_tokenizer

from .conftest import make_tiny_llama


@pytest.fixture
def saved_model(tmp_path):
    tokenizer = build_tokenizer()
    model = make_tiny_llama(vocab_size=len(tokenizer), hidden_size=32)
    save_hf_model(tmp_path / "policy", model, tokenizer)
    return tmp_path / "policy"


def damage(path, offset=4096, size=4096):
    """Overwrite ``size`` bytes at ``offset`` with a pattern (by default 4 KB just after the safetensors header)."""
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(bytes(range(256)) * (size // 256))


def test_a_saved_model_records_and_passes_its_digest(saved_model):
    assert (saved_model / DIGEST_FILE).exists()
    assert check_model_digest(saved_model, required=True)
    model, tokenizer = load_hf_model(saved_model)
    assert model.config.hidden_size == 32 and len(tokenizer) > 0


def test_damaged_weights_fail_at_load_naming_the_file(saved_model):
    """Overwriting 4 KB of the weights used to load silently and sample garbage."""
    weights = saved_model / "model.safetensors"
    assert weights.stat().st_size > 8192
    damage(weights)
    with pytest.raises(ModelIntegrityError, match=rf"{weights}: damaged .* delete {saved_model} and rerun snakemake"):
        load_hf_model(saved_model)


def test_a_missing_or_damaged_tokenizer_file_fails_naming_it(saved_model):
    (saved_model / "tokenizer.json").write_text("{}")
    with pytest.raises(ModelIntegrityError, match=r"tokenizer\.json: damaged"):
        load_hf_model(saved_model)
    (saved_model / "tokenizer.json").unlink()
    with pytest.raises(ModelIntegrityError, match=r"tokenizer\.json: missing"):
        check_model_digest(saved_model)


def test_a_model_without_digest_that_cannot_load_names_its_directory(saved_model):
    (saved_model / DIGEST_FILE).unlink()
    assert not check_model_digest(saved_model)
    with pytest.raises(ModelIntegrityError, match=rf"{saved_model / DIGEST_FILE}: missing"):
        check_model_digest(saved_model, required=True)
    (saved_model / "model.safetensors").write_bytes(b"\xff" * 64)  # a damaged header
    with pytest.raises(ModelIntegrityError, match=rf"{saved_model}: cannot be loaded"):
        load_hf_model(saved_model)


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_saved_models_honour_the_umask(tmp_path, umask):
    """transformers writes model.safetensors 0600; every other output follows the umask (set in this process for the
    save, and restored: pytest runs tests one at a time in one thread)."""
    out = tmp_path / f"policy_{umask:o}"
    tokenizer = build_tokenizer()
    model = make_tiny_llama(vocab_size=len(tokenizer))
    previous = os.umask(umask)
    try:
        save_hf_model(out, model, tokenizer)
    finally:
        os.umask(previous)
    modes = {path.name: stat.S_IMODE(path.stat().st_mode) for path in out.iterdir()}
    assert "model.safetensors" in modes and DIGEST_FILE in modes
    assert modes == {name: 0o666 & ~umask for name in modes}
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
