"""How every synthetic task draws its table (ead.data.splits): a problem's split is its hash's bucket whatever else was
drawn, each problem is drawn once, row ids follow the split, and a generator that cannot fill a split gives up by
name instead of looping."""

import random

import pytest

from ead.data.splits import SPLIT_BUCKETS, draw_table, split_of


def draw_digits(rng: random.Random):
    number = str(rng.randrange(1000))
    return number, {"question": number + "\n", "answer": number, "digits": len(number)}


def test_the_buckets_split_a_hundred_into_80_10_10_and_a_split_is_the_identitys_hash():
    assert [len(buckets) for buckets in SPLIT_BUCKETS.values()] == [80, 10, 10]
    assert sorted(b for buckets in SPLIT_BUCKETS.values() for b in buckets) == list(range(100))
    splits = [split_of("t", 0, str(i)) for i in range(5000)]
    assert 0.77 < splits.count("train") / 5000 < 0.83 and 0.08 < splits.count("test") / 5000 < 0.12
    assert split_of("t", 0, "42") == split_of("t", 0, "42")
    # another task or seed hashes apart: the same identity is not tied to one split across tasks
    assert {split_of(task, seed, "42") for task in "abcdefgh" for seed in range(4)} == set(SPLIT_BUCKETS)


def test_draw_table_draws_each_problem_once_into_its_own_split_with_ids_in_split_order():
    table = draw_table("digits", 3, {"train": 40, "val": 5, "test": 5}, draw_digits)
    assert table.groupby("split", sort=False).size().to_dict() == {"train": 40, "val": 5, "test": 5}
    assert table["answer"].is_unique and set(table["source"]) == {"digits"}
    assert all(split_of("digits", 3, answer) == split for answer, split in zip(table["answer"], table["split"]))
    assert list(table[table.split == "val"]["id"]) == [f"digits/s3/val/{i}" for i in range(5)]
    assert list(table.columns) == ["id", "question", "answer", "source", "split", "digits"]
    # the test split does not depend on how many training problems were asked for
    bigger = draw_table("digits", 3, {"train": 200, "val": 5, "test": 5}, draw_digits)
    assert list(bigger[bigger.split == "test"]["answer"]) == list(table[table.split == "test"]["answer"])


def test_rejected_draws_are_skipped_and_an_impossible_table_gives_up_naming_the_counts():
    def only_even(rng):
        drawn = draw_digits(rng)
        return drawn if int(drawn[0]) % 2 == 0 else None

    assert (draw_table("even", 0, {"train": 20, "val": 2, "test": 2}, only_even)["answer"].astype(int) % 2 == 0).all()
    with pytest.raises(RuntimeError, match=r"tiny generator gave up after \d+ draws: have .*want"):
        draw_table("tiny", 0, {"train": 5, "val": 0, "test": 0}, lambda rng: (str(rng.randrange(2)), {
            "question": "q", "answer": "a"}))
    with pytest.raises(ValueError, match="sizes must be >= 0"):
        draw_table("t", 0, {"train": -1}, draw_digits)
