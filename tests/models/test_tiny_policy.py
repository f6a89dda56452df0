"""The tiny policy's character tokenizer (ead.models.tiny_policy) round-trips countdown text and rejects unknown
characters."""

import pytest

from ead.models.tiny_policy import build_tokenizer, encode_strict


def test_tokenizer_round_trips_countdown_text_and_rejects_unknown_characters():
    tokenizer = build_tokenizer()
    text = "Numbers: 3 5 7 12\nTarget: 41\n7*5=35\n35+12=47\n47-3=44\n\\boxed{41}"
    ids = encode_strict(tokenizer, text)
    assert ids[0] == tokenizer.bos_token_id and len(ids) == len(text) + 1
    assert tokenizer.decode(ids, skip_special_tokens=True) == text
    with pytest.raises(ValueError, match=r"characters \['%'\] are not in the tiny policy's alphabet"):
        encode_strict(tokenizer, "50%")
