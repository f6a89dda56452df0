"""A sharpened copy of a tiny policy (ead.models.sharpen) has every logit divided by the temperature."""

import pytest
import torch

from ead.models.tiny_policy import build_tokenizer, encode_strict


def test_sharpened_policy_has_every_logit_divided_by_the_temperature(tmp_path):
    from transformers import LlamaForCausalLM

    from ead.models import save_hf_model
    from ead.models.sharpen import main as sharpen_main
    from ead.models.sharpen import sharpen_
    from ead.models.tiny_policy import TinyPolicyShape, build_model

    tokenizer = build_tokenizer()
    model = build_model(tokenizer, TinyPolicyShape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                   intermediate_size=64), seed=0)
    save_hf_model(tmp_path / "policy", model, tokenizer)
    sharpen_main(["--model", str(tmp_path / "policy"), "--temperature", "0.3", "--out", str(tmp_path / "sharp")])
    sharp = LlamaForCausalLM.from_pretrained(tmp_path / "sharp", local_files_only=True, use_safetensors=True)
    ids = torch.tensor([encode_strict(tokenizer, "Numbers: 3 5 7\nTarget: 22\n7*3=21\n")])
    with torch.no_grad():
        logits, sharp_logits = model(ids).logits, sharp(ids).logits
    # one float32 multiply per hidden unit before the (linear) head: relative rounding only
    torch.testing.assert_close(sharp_logits, logits / 0.3, rtol=1e-5, atol=1e-5)
    assert not torch.allclose(sharp_logits, logits, atol=1e-2)  # the copy is really sharper
    with pytest.raises(ValueError, match="sharpening temperature must be a finite number > 0, got 0"):
        sharpen_(model, 0)
