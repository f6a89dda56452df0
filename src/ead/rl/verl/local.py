"""The verl_cpu profile's offline assets: a tiny policy as a chat model, and task data in verl's parquet format.

    python -m ead.rl.verl.local model --policy results/models/tiny_arith --out results/paper/models/tiny_arith
    python -m ead.rl.verl.local data --data results/data/arithmetic.parquet --task arithmetic --role train \\
        --limit 64 --out results/paper/data/train.parquet

verl builds every prompt with the tokenizer's chat template (``utils/dataset/rl_dataset.py``, the agent loops'
``apply_chat_template``), which the tiny policies lack. Their chat template renders a user turn as ``<s>`` + its text,
exactly the token ids the CPU backend trains and samples on (``encode_strict(tokenizer, prompt)``), so the policy sees
what it was fine-tuned on. Rows follow the hub datasets' layout (:func:`ead.operations.hub.verl_rows`) with
``data_source`` = the grader task.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ead.io import write_table
from ead.operations.hub import verl_rows

__all__ = ["CHAT_TEMPLATE", "export_chat_policy", "task_rows", "write_tiny_arithmetic_assets"]

#: One user turn -> "<s>" + its content; the assistant's reply follows directly (the tiny policies have no roles).
CHAT_TEMPLATE = ("{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}"
                 "{{ message['content'] }}{% else %}{{ message['content'] }}{{ eos_token }}{% endif %}{% endfor %}")


def export_chat_policy(policy_dir: str, out: str) -> None:
    """Copy a tiny policy (safetensors, float32) with :data:`CHAT_TEMPLATE`; check the template reproduces the CPU
    backend's prompt ids."""
    from ead.models import save_hf_model
    from ead.models.tiny_policy import encode_strict
    from ead.samplers.engines import load_hf_model

    model, tokenizer = load_hf_model(policy_dir)
    tokenizer.chat_template = CHAT_TEMPLATE
    probe = "Numbers: 3 5 7\nTarget: 15\n"
    chat_ids = tokenizer.apply_chat_template([{"role": "user", "content": probe}], add_generation_prompt=True,
                                             tokenize=True, return_dict=False)
    if list(chat_ids) != encode_strict(tokenizer, probe):
        raise ValueError(f"{policy_dir}: the chat template gives {list(chat_ids)}, not the CPU backend's prompt ids "
                         f"{encode_strict(tokenizer, probe)}")
    save_hf_model(out, model, tokenizer)
    print(f"{policy_dir} -> {out} (chat template: <s> + user text)")


def task_rows(data: pd.DataFrame, task: str, role: str, limit: int) -> pd.DataFrame:
    """The first ``limit`` problems of the task's split for ``role`` (train: train; val: val) as verl rows."""
    split = data[data["split"] == role].head(limit)
    if split.empty:
        raise ValueError(f"no {role!r} rows in the {task} data (splits: {sorted(data['split'].unique())})")
    table, dropped = verl_rows(split.to_dict("records"), question="question", answer_from="answer", instruction="",
                               source=task, agent_name="single_turn_agent" if role == "val" else None, task=task)
    if dropped:
        raise ValueError(f"{dropped} {task} {role} rows have no answer")
    return table


def write_tiny_arithmetic_assets(root: Path) -> Path:
    """The inputs of the verl tests and benchmarks, in ``root``: a random tiny Llama (seed 0) exported as a chat model
    (``model/``, its HF policy in ``policy/``) and arithmetic prompts in verl's format (``train.parquet``: 32,
    ``val.parquet``: 4). Returns ``root``."""
    from ead.data.arithmetic import generate_arithmetic
    from ead.models import save_hf_model
    from ead.models.tiny_policy import TinyPolicyShape, build_model, build_tokenizer

    tokenizer = build_tokenizer()
    shape = TinyPolicyShape(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128)
    save_hf_model(root / "policy", build_model(tokenizer, shape, seed=0), tokenizer)
    export_chat_policy(str(root / "policy"), str(root / "model"))
    data = generate_arithmetic(seed=0, n_train=64, n_val=8, n_test=1)
    for role, limit in (("train", 32), ("val", 4)):
        write_table(task_rows(data, "arithmetic", role, limit), root / f"{role}.parquet")
    return root


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    model = commands.add_parser("model")
    model.add_argument("--policy", required=True, help="a tiny policy's model directory")
    model.add_argument("--out", required=True)
    data = commands.add_parser("data")
    data.add_argument("--data", required=True, help="the task's table (results/data/<task>.parquet)")
    data.add_argument("--task", required=True)
    data.add_argument("--role", choices=["train", "val"], required=True)
    data.add_argument("--limit", type=int, required=True)
    data.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "model":
        export_chat_policy(args.policy, args.out)
    else:
        table = task_rows(pd.read_parquet(args.data), args.task, args.role, args.limit)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_table(table, args.out)
        print(f"{args.task} {args.role}: {len(table)} prompts -> {args.out}")


if __name__ == "__main__":
    main()
