"""How every synthetic task (countdown, arithmetic, strategy) draws its train / val / test table.

A problem's split is a hash of the task, the seed and the problem's identity (80 / 10 / 10 buckets of 100), so a
problem lands in the same split whatever else was drawn, and a problem is drawn into the table once. Each task gives
:func:`draw_table` one function that draws a problem from the random stream (its question, answer and own columns);
everything else, the splits, the de-duplication, the row ids and the give-up rule, is here.
"""

from __future__ import annotations

import hashlib
import random
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SPLIT_BUCKETS", "Draw", "draw_table", "split_of"]

SPLIT_BUCKETS = {"train": range(0, 80), "val": range(80, 90), "test": range(90, 100)}

#: A drawn problem: its identity (what makes two problems the same, hashed into its split) and its row's fields
#: (question, answer, then the task's own columns); None when the draw is rejected.
Draw = Callable[[random.Random], "tuple[str, dict] | None"]


def split_of(task: str, seed: int, identity: str) -> str:
    """The split of a problem: the sha256 bucket of ``task|seed|identity``."""
    bucket = int.from_bytes(hashlib.sha256(f"{task}|{seed}|{identity}".encode()).digest()[:8], "big") % 100
    return next(name for name, buckets in SPLIT_BUCKETS.items() if bucket in buckets)


def draw_table(task: str, seed: int, wanted: dict[str, int], draw: Draw) -> pd.DataFrame:
    """Rows ``id, question, answer, source, split, <the task's columns>`` of ``wanted[split]`` distinct problems per
    split, in split order, drawn by ``draw`` from ``random.Random(seed)``. Gives up (RuntimeError naming the counts)
    after 50 draws per wanted row plus 10000."""
    import pandas as pd

    if min(wanted.values()) < 0:
        raise ValueError(f"sizes must be >= 0, got {wanted}")
    rng = random.Random(seed)
    rows: dict[str, list[dict]] = {name: [] for name in wanted}
    seen: set[str] = set()
    attempts, max_attempts = 0, 50 * sum(wanted.values()) + 10000
    while any(len(rows[name]) < wanted[name] for name in wanted):
        attempts += 1
        if attempts > max_attempts:
            counts = {name: len(r) for name, r in rows.items()}
            raise RuntimeError(f"{task} generator gave up after {attempts} draws: have {counts}, want {wanted}")
        drawn = draw(rng)
        if drawn is None:
            continue
        identity, fields = drawn
        if identity in seen:
            continue
        seen.add(identity)
        split = split_of(task, seed, identity)
        if len(rows[split]) >= wanted[split]:
            continue
        question, answer, own = fields["question"], fields["answer"], {k: v for k, v in fields.items()
                                                                         if k not in ("question", "answer")}
        rows[split].append({"id": f"{task}/s{seed}/{split}/{len(rows[split])}", "question": question, "answer": answer,
                            "source": task, "split": split, **own})
    return pd.DataFrame([row for name in wanted for row in rows[name]])
