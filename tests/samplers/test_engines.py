"""The sampling engines (ead.samplers.engines): each batch has its own random stream."""



def test_each_batch_has_its_own_stream_so_other_batches_cannot_shift_its_draws(tiny_model_dir):
    """Common random numbers across schedules and cells: a batch's samples depend on the seed and its position only,
    not on how many decoding steps the batches before it ran."""
    from ead.models import load_hf_model
    from ead.samplers.engines import sample_hf
    from ead.schedule import FixedTemperature

    model, tokenizer = load_hf_model(tiny_model_dir)
    common = dict(n=1, max_new_tokens=20, seed=1, batch_size=1)
    first = sample_hf(model, tokenizer, ["x", "y"], ["abc", "12+3="], FixedTemperature(3.0), **common)
    other = sample_hf(model, tokenizer, ["z", "y"], ["a", "12+3="], FixedTemperature(3.0), **common)
    # the first batches ran for different numbers of steps (one shared stream would have drifted apart) ...
    assert first.loc[0, "num_tokens"] != other.loc[0, "num_tokens"]
    # ... and the second batch still drew the same random numbers, hence the same tokens
    assert list(other.loc[1, "token_ids"]) == list(first.loc[1, "token_ids"])
