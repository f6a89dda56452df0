"""Sample N completions per prompt under a named schedule, with HF (CPU) or vLLM, into a tidy table (the command line
of :mod:`ead.samplers.engines`, which documents the table's columns).

Run (HF on CPU):
    python -m ead.samplers.sample --model results/models/smollm2-135m-instruct --prompts prompts.parquet \
        --schedule '{"name": "ead", "tau_max": 1.2, "tau_min": 0.1, "d0": 25}' --n 4 --max-new-tokens 128 \
        --out samples.parquet
Run with vLLM (inside an environment that has vLLM, e.g. .venv-vllm): add ``--engine vllm``.
The prompts table needs an id column and a prompt column (names set by --id-column / --prompt-column).
"""

from __future__ import annotations

import argparse
import json

from ead.io import read_table, setup_logging, write_table
from ead.samplers.engines import ENGINES, open_engine
from ead.schedule import build_schedule


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="local HF model directory (safetensors)")
    parser.add_argument("--prompts", required=True, help="table (.csv/.parquet) with id and prompt columns")
    parser.add_argument("--id-column", default="id")
    parser.add_argument("--prompt-column", default="prompt")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N prompts")
    parser.add_argument("--schedule", required=True, help='JSON, e.g. {"name": "fixed", "tau": 0.6}')
    parser.add_argument("--step", type=int, default=0, help="RL global step (feeds d_s of the EAD schedule)")
    parser.add_argument("--n", type=int, required=True, help="completions per prompt")
    parser.add_argument("--max-new-tokens", type=int, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine", choices=ENGINES, default="hf")
    parser.add_argument("--dtype", default="float32", help="model weights dtype (both engines)")
    parser.add_argument("--batch-size", type=int, default=32, help="sequences per HF batch")
    parser.add_argument("--chat-template", action="store_true", help="wrap each prompt as a user turn")
    parser.add_argument("--greedy", action="store_true")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    log = setup_logging("sample")

    schedule = build_schedule(json.loads(args.schedule))
    table = read_table(args.prompts)
    for column in (args.id_column, args.prompt_column):
        if column not in table.columns:
            raise SystemExit(f"{args.prompts}: no column {column!r}; columns are {list(table.columns)}")
    table = table.head(args.limit) if args.limit else table
    ids, prompts = table[args.id_column].tolist(), table[args.prompt_column].tolist()
    options = dict(n=args.n, max_new_tokens=args.max_new_tokens, seed=args.seed, step=args.step,
                   chat_template=args.chat_template, greedy=args.greedy)
    engine = open_engine(args.engine, args.model, dtype=args.dtype, batch_size=args.batch_size,
                         vllm_options={"enforce_eager": True})
    samples = engine.sample(ids, prompts, schedule, **options)
    engine.close()
    write_table(samples.assign(model=str(args.model)), args.out)
    log.info("wrote %d samples (%d prompts x %d) to %s", len(samples), len(prompts), args.n, args.out)


if __name__ == "__main__":
    main()
