"""Fork sharpening (ead.models.fork_sharpen): the targets are the teacher's logits / T at the first response tokens
only, and distillation moves the student there while leaving the rest of the sequence where the teacher has it."""

import pandas as pd
import torch
import torch.nn.functional as F

from ead.data.countdown import generate_countdown
from ead.io import write_table
from ead.models import load_hf_model, save_hf_model
from ead.models.fork_sharpen import distill, fork_targets, response_positions
from ead.models.sft import IGNORE, encode_examples
from ead.models.sharpen import sharpen_
from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer

SHAPE = TinyPolicyShape(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=128)


def test_response_positions_index_the_logit_that_predicts_each_response_token():
    tokenizer = build_tokenizer()
    input_ids, labels = encode_examples(tokenizer, ["12", "1234"], ["5+6", "7"])
    predicts, index = response_positions(labels)
    # row 0: BOS 1 2 | 5 + 6 EOS -> logits at positions 2..5 predict 5, +, 6, EOS (response indices 0..3)
    assert predicts[0].nonzero().flatten().tolist() == [2, 3, 4, 5]
    assert index[0][predicts[0]].tolist() == [0, 1, 2, 3]
    assert labels[0, 3].item() == tokenizer.convert_tokens_to_ids("5") and labels[0, 2].item() == IGNORE
    # row 1: BOS 1 2 3 4 | 7 EOS -> logits at positions 4 and 5
    assert predicts[1].nonzero().flatten().tolist() == [4, 5]
    assert index[1][predicts[1]].tolist() == [0, 1]


def test_fork_targets_divide_the_logits_by_t_before_the_switch_only():
    logits = torch.randn(2, 6, 11)
    index = torch.tensor([[-1, 0, 1, 2, 3, 4], [-1, -1, 0, 1, 2, 3]])
    target = fork_targets(logits, index, temperature=0.25, positions=2)
    sharp, plain = F.log_softmax(logits * 4.0, dim=-1), F.log_softmax(logits, dim=-1)
    fork = index < 2
    torch.testing.assert_close(target[fork], sharp[fork])
    torch.testing.assert_close(target[~fork], plain[~fork])
    # sharper where divided: lower entropy at every fork position than the teacher's own distribution
    entropy = lambda logp: -(logp.exp() * logp).sum(-1)  # noqa: E731
    assert bool((entropy(target[fork]) < entropy(plain[fork])).all())


def test_distillation_sharpens_the_fork_and_keeps_the_rest(tmp_path):
    data = tmp_path / "countdown.parquet"
    write_table(generate_countdown(seed=1, n_train=200, n_val=32, n_test=2), data)
    tokenizer = build_tokenizer()
    teacher_dir, student_dir = tmp_path / "teacher", tmp_path / "student"
    # a random init is near uniform over the alphabet, where logits / T barely change anything: scale its logits so
    # that the teacher has preferences to sharpen
    save_hf_model(teacher_dir, sharpen_(build_model(tokenizer, SHAPE, seed=0), 0.1), tokenizer)
    kls = distill(str(teacher_dir), str(data), str(student_dir), temperature=0.3, positions=4, steps=60,
                  batch_size=16, lr=3e-3, seed=0, eval_rows=32)
    (_, fork_before, after_before), (_, fork_after, after_after) = kls["before"], kls["after"]
    assert after_before == 0.0  # the student starts as the teacher
    assert fork_before > 0.05  # a random-init teacher is far from its own logits / 0.3
    assert fork_after < 0.5 * fork_before  # held-out contexts: the fork moved towards the sharpened target
    assert after_after < 0.5 * fork_after  # and the rest of the sequence stayed much closer to the teacher

    # the saved student's fork is sharper than the teacher's on held-out contexts, its tail about as sharp
    teacher, _ = load_hf_model(teacher_dir)
    student, _ = load_hf_model(student_dir)
    rows = pd.read_parquet(data).query("split == 'val'")
    input_ids, labels = encode_examples(tokenizer, rows["question"], list(rows["solution"]))
    predicts, index = response_positions(labels)
    mask = (input_ids != tokenizer.pad_token_id).long()
    with torch.no_grad():
        entropies = {}
        for name, model in (("teacher", teacher), ("student", student)):
            logp = F.log_softmax(model(input_ids=input_ids, attention_mask=mask).logits[:, :-1], dim=-1)
            entropy = -(logp.exp() * logp).sum(-1)
            entropies[name] = (entropy[predicts & (index < 4)].mean(), entropy[predicts & (index >= 4)].mean())
    assert entropies["student"][0] < 0.8 * entropies["teacher"][0]
    assert abs(entropies["student"][1] - entropies["teacher"][1]) < 0.1 * entropies["teacher"][1]
