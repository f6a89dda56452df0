"""A copy of a tiny policy sharpened only at its first response tokens (the fork), by self-distillation.

Why: :mod:`ead.models.sharpen` divides *every* logit by T, which makes a policy over-confident at its first move (the
fork EAD's early heat is meant to open) but also nearly deterministic everywhere else, so GRPO's groups stop being
informative and RL does not learn (TESTBED.md). This job keeps the sharpening where the premise needs it:
the student is trained to match the teacher's distribution divided by ``temperature`` at the first ``positions``
response tokens and the teacher's own distribution after them,

    loss = mean over response tokens t of KL(q_t || p_student,t),
    q_t  = softmax(z_t / T) if t < positions else softmax(z_t),

with the teacher's logits ``z_t`` computed on the teacher's SFT contexts (the countdown train split's questions with
their table solutions, teacher-forced). The student starts as the teacher, so the loss after the fork starts at 0 and
keeps the rest of the sequence where SFT left it. Position-dependent sharpening cannot be written into a Llama's
weights exactly (its logits have no position-dependent scale), so it is learned; the job logs the KL at the fork and
after it on held-out val contexts, before and after training, to show how close it got.

Run:
    python -m ead.models.fork_sharpen --model results/models/tiny1m --data results/data/countdown.parquet \
        --temperature 0.2 --positions 8 --steps 300 --batch-size 128 --lr 1e-3 --seed 0 --threads 1 \
        --out results/models/tiny1m_fork
"""

from __future__ import annotations

import argparse
import math

import torch
import torch.nn.functional as F
from tqdm import tqdm

from ead.io import read_table, setup_logging
from ead.models import load_hf_model, save_hf_model
from ead.models.sft import IGNORE, encode_examples, learning_rate
from ead.numerics import pin_job


def response_positions(labels: torch.LongTensor) -> tuple[torch.BoolTensor, torch.LongTensor]:
    """For next-token logits ``logits[:, :-1]``: which of them predict a response token, and that token's index in
    the response (0 = the first response token)."""
    predicts = labels[:, 1:] != IGNORE
    index = predicts.long().cumsum(-1) - 1
    return predicts, index


def fork_targets(teacher_logits: torch.Tensor, index: torch.LongTensor, temperature: float,
                 positions: int) -> torch.Tensor:
    """Target log-distributions: the teacher's logits divided by ``temperature`` at response index < ``positions``,
    unchanged after."""
    scale = torch.where(index < positions, 1.0 / temperature, 1.0).unsqueeze(-1)
    return F.log_softmax(teacher_logits * scale, dim=-1)


def fork_kl(student, teacher, input_ids, labels, pad_token_id: int, temperature: float,
            positions: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-token KL(target || student) over response tokens: (mean over all, mean at the fork, mean after it)."""
    attention_mask = (input_ids != pad_token_id).long()
    predicts, index = response_positions(labels)
    with torch.no_grad():
        teacher_logits = teacher(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
    student_logp = F.log_softmax(student(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1], dim=-1)
    target_logp = fork_targets(teacher_logits, index, temperature, positions)
    kl = (target_logp.exp() * (target_logp - student_logp)).sum(-1)
    fork = predicts & (index < positions)
    after = predicts & (index >= positions)
    return kl[predicts].mean(), kl[fork].mean(), kl[after].mean()


def distill(model_dir: str, data: str, out: str, *, temperature: float, positions: int, steps: int, batch_size: int,
            lr: float, seed: int, eval_rows: int = 512) -> dict:
    """Train the fork-sharpened copy of ``model_dir`` and save it to ``out``; returns the held-out KLs before and
    after (``{"before": (all, fork, after), "after": ...}``)."""
    if not (math.isfinite(temperature) and 0 < temperature):
        raise ValueError(f"--temperature must be a finite number > 0, got {temperature!r}")
    if positions < 1:
        raise ValueError(f"--positions must be >= 1, got {positions!r}")
    log = setup_logging("fork_sharpen")
    teacher, tokenizer = load_hf_model(model_dir)
    student, _ = load_hf_model(model_dir)
    teacher.eval()
    for parameter in teacher.parameters():
        parameter.requires_grad_(False)
    table = read_table(data)
    contexts = {}
    for split in ("train", "val"):
        rows = table[table["split"] == split]
        if rows.empty:
            raise SystemExit(f"{data}: no rows with split == {split!r}")
        contexts[split] = encode_examples(tokenizer, rows["question"], list(rows["solution"]))
    held_ids, held_labels = (tensor[:eval_rows] for tensor in contexts["val"])

    def held_out() -> tuple[float, float, float]:
        student.eval()
        with torch.no_grad():
            values = fork_kl(student, teacher, held_ids, held_labels, tokenizer.pad_token_id, temperature, positions)
        student.train()
        return tuple(float(v) for v in values)

    before = held_out()
    log.info("held-out KL before (all / fork / after): %.4f / %.4f / %.4f", *before)
    input_ids, labels = contexts["train"]
    optimizer = torch.optim.AdamW(student.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.0)
    student.train()
    for step in tqdm(range(steps), desc="fork_sharpen", unit="step"):
        generator = torch.Generator().manual_seed(seed * 1_000_003 + step)
        index = torch.randint(len(input_ids), (batch_size,), generator=generator)
        batch_ids, batch_labels = input_ids[index], labels[index]
        width = int((batch_ids != tokenizer.pad_token_id).sum(-1).max())
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step, steps, lr, max(1, steps // 20))
        loss, fork, after = fork_kl(student, teacher, batch_ids[:, :width], batch_labels[:, :width],
                                    tokenizer.pad_token_id, temperature, positions)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        optimizer.step()
        if (step + 1) % 25 == 0 or step + 1 == steps:
            log.info("step %d KL %.4f (fork %.4f, after %.4f)", step + 1, loss.item(), fork.item(), after.item())
    after_training = held_out()
    log.info("held-out KL after (all / fork / after): %.4f / %.4f / %.4f", *after_training)
    save_hf_model(out, student, tokenizer)
    log.info("saved %s sharpened at its first %d response tokens (T = %g) to %s", model_dir, positions, temperature,
             out)
    return {"before": before, "after": after_training}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="HF model directory of the teacher (a tiny SFT policy)")
    parser.add_argument("--data", required=True, help="countdown table with question/solution/split columns")
    parser.add_argument("--temperature", type=float, required=True, help="logits at the fork are divided by this")
    parser.add_argument("--positions", type=int, required=True, help="the fork: this many first response tokens")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--threads", type=int, required=True, help="torch threads (fixed: float sums depend on it)")
    parser.add_argument("--out", required=True, help="output model directory")
    args = parser.parse_args(argv)
    pin_job(args.threads)
    distill(args.model, args.data, args.out, temperature=args.temperature, positions=args.positions,
            steps=args.steps, batch_size=args.batch_size, lr=args.lr, seed=args.seed)


if __name__ == "__main__":
    main()
