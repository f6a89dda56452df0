"""Paper profile only: download the hub models (RL policies and the analyses' models) and datasets, and write the
datasets in verl's parquet format.

    python -m ead.operations.hub model --hub-id Qwen/Qwen2.5-Math-1.5B --revision main --out results/paper/models/X
    python -m ead.operations.hub data --spec '{"hub_id": ..., "revision": ..., "split": ..., "question": ...,
        "answer_from": ...}' --instruction "..." --role train --out results/paper/data/train.parquet

Nothing else in this repository touches a hub; the default and smoke profiles never run these rules.

verl's dataset (``utils/dataset/rl_dataset.py``, ``RLHFDataset``) reads ``prompt`` (chat messages; the model's chat
template is applied by verl), passes every other column to the agent loop and the reward, and takes
``extra_info.index`` as the prompt index. We write:

* ``data_source``: ``math`` (our grader task, see :mod:`ead.rl.verl.reward`),
* ``prompt``: ``[{"role": "user", "content": question + " " + instruction}]``,
* ``reward_model``: ``{"style": "rule", "ground_truth": answer}``,
* ``extra_info``: ``{"index": i, "task": "math", "source": hub id}``,
* ``agent_name`` (validation only): ``single_turn_agent``, so validation ignores the training sampler.

Training answers: NuminaMath-CoT has full solutions; the reference answer is the last ``\\boxed{}`` of the solution
(``answer_from: solution_boxed``) and problems without one are dropped (counted in the log).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from ead.io import atomic_directory, write_table
from ead.rewards import extract_boxed

__all__ = ["download_model", "verl_rows"]

#: Model files verl/vLLM need; everything else in a hub repo (other formats, READMEs, images) is skipped.
MODEL_FILE_PATTERNS = ["*.json", "*.safetensors", "*.model", "*.tiktoken", "*.txt", "*.jinja"]


def verl_rows(records, *, question: str, answer_from: str, instruction: str, source: str,
              agent_name: str | None, task: str = "math") -> tuple[pd.DataFrame, int]:
    """(verl-format table, number of records dropped for lacking a reference answer). ``task``: the grader task
    (data_source); an empty ``instruction`` leaves the question as it is."""
    rows, dropped = [], 0
    for record in records:
        if answer_from == "solution_boxed":
            answer = extract_boxed(str(record["solution"]))
        else:
            answer = record[answer_from]
        if answer is None or not str(answer).strip():
            dropped += 1
            continue
        row = {
            "data_source": task,
            "prompt": [{"role": "user", "content": " ".join(filter(None, [str(record[question]), instruction]))}],
            "ability": task,
            "reward_model": {"style": "rule", "ground_truth": str(answer)},
            "extra_info": {"index": len(rows), "task": task, "source": source},
        }
        if agent_name is not None:
            row["agent_name"] = agent_name
        rows.append(row)
    return pd.DataFrame(rows), dropped


def download_model(hub_id: str, revision: str, out: str) -> None:
    from huggingface_hub import snapshot_download

    with atomic_directory(out) as tmp:
        snapshot_download(repo_id=hub_id, revision=revision, local_dir=str(tmp), allow_patterns=MODEL_FILE_PATTERNS)
    print(f"{hub_id}@{revision} -> {out}")


def download_data(spec: dict, instruction: str, role: str, out: str) -> None:
    from datasets import load_dataset

    dataset = load_dataset(spec["hub_id"], revision=spec["revision"], split=spec["split"])
    table, dropped = verl_rows(dataset, question=spec["question"], answer_from=spec["answer_from"],
                               instruction=instruction, source=spec["hub_id"],
                               agent_name="single_turn_agent" if role == "val" else None)
    if table.empty:
        raise ValueError(f"{spec['hub_id']}: no record has a reference answer ({dropped} dropped)")
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    write_table(table, out)
    print(f"{spec['hub_id']}@{spec['revision']} {spec['split']}: {len(table)} prompts "
          f"({dropped} without answer dropped)"
          f" -> {out}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    model = commands.add_parser("model")
    model.add_argument("--hub-id", required=True)
    model.add_argument("--revision", required=True)
    model.add_argument("--out", required=True)
    data = commands.add_parser("data")
    data.add_argument("--spec", required=True, help="a paper_data entry as JSON")
    data.add_argument("--instruction", required=True)
    data.add_argument("--role", choices=["train", "val"], required=True)
    data.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    if args.command == "model":
        download_model(args.hub_id, args.revision, args.out)
    else:
        download_data(json.loads(args.spec), args.instruction, args.role, args.out)


if __name__ == "__main__":
    main()
