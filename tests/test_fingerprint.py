"""ead.fingerprint: a table's digest is its content to the last bit, without where and how long its job ran; the
first stage where two runs part is named, in the DAG's order."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ead.fingerprint import REFERENCES, STAGES, digest_files, first_divergence, run_digest, table_digest
from ead.io import write_table
from ead.tables import CLAIMS, EVAL_PROBLEMS, FINGERPRINT, STEPS
from tests.tables.test_declarations import valid_rows


def steps_table():
    return pd.DataFrame({"step": [1, 2], "reward_mean": [0.25, 0.5], "wall_time_s": [3.1, 2.9],
                         "profile": ["smoke", "smoke"], "cpu_level": ["avx2", "avx2"]})


def test_a_digest_ignores_run_and_timing_columns_but_sees_one_ulp():
    table = steps_table()
    other_run = table.assign(wall_time_s=[9.0, 9.0], profile="default", cpu_level="default")
    assert table_digest(other_run) == table_digest(table)
    one_ulp = table.assign(reward_mean=[0.25, np.nextafter(0.5, 1.0)])
    assert table_digest(one_ulp) != table_digest(table)
    assert table_digest(table.rename(columns={"reward_mean": "reward"})) != table_digest(table)
    arrays = pd.DataFrame({"entropy": [np.array([0.1, 0.2]), np.array([0.3])]})
    assert table_digest(arrays) != table_digest(arrays.assign(entropy=[np.array([0.1, 0.2]), np.array([0.30001])]))



def test_the_claims_wording_is_left_out_and_their_numbers_and_verdicts_are_not():
    """A wording fix in a claim's scope or rule (or its statement) changes no number: the digest stays."""
    claims = pd.DataFrame({"claim": ["C7"], "effect": [0.1], "verdict": ["inconclusive"], "statement": ["s"],
                           "rule": ["one seed: ..."], "scope": ["one seed: the CI covers 1 evaluation problems"]})
    reworded = claims.assign(scope=["one seed: the CI covers one training-metric value"], rule=["r"], statement=["t"])
    assert table_digest(reworded) == table_digest(claims)
    assert table_digest(claims.assign(verdict=["supported"])) != table_digest(claims)
    assert table_digest(claims.assign(effect=[np.nextafter(0.1, 1.0)])) != table_digest(claims)


def test_a_column_empty_in_every_row_is_left_out_and_one_value_in_it_is_not():
    """An optional column a later version writes (empty where unused) holds no number: a run made before it existed
    keeps its digest; the first value written into it changes the digest."""
    claims = pd.DataFrame({"claim": ["C1", "C2"], "effect": [0.1, -0.2], "verdict": ["inconclusive", "negligible"]})
    widened = claims.assign(predicted_verdict=[np.nan, np.nan], best_of=["", ""])
    assert table_digest(widened) == table_digest(claims)
    assert table_digest(widened.assign(predicted_verdict=["supported", np.nan])) != table_digest(claims)
    assert table_digest(claims.iloc[:0]) != table_digest(claims)


def make_run(root, weights=b"weights", reward=0.5):
    model = root / "results" / "models" / "tiny1m"
    model.mkdir(parents=True)
    (model / "model.safetensors").write_bytes(weights)
    (model / "config.json").write_text("{}")
    cell = root / "results" / "rl" / "tiny1m" / "dapo" / "ead" / "n8" / "seed0"
    cell.mkdir(parents=True)
    # the tables as their writers write them (the fingerprint reads each through its contract)
    write_table(valid_rows(STEPS, 2).assign(reward_mean=[0.25, reward], profile="smoke"), cell / "steps.csv")
    write_table(valid_rows(EVAL_PROBLEMS, 1), cell / "eval_problems.csv")
    write_table(pd.DataFrame({"metric": ["pass@1"]}), cell / "eval.csv")
    (root / "results" / "data").mkdir()
    write_table(pd.DataFrame({"x": [1]}), root / "results" / "data" / "countdown.parquet")
    write_table(valid_rows(CLAIMS, 1).assign(effect=[0.1]), root / "results" / "claims.csv")
    return ["results/claims.csv", str(cell.relative_to(root) / "eval.csv"), "results/models/tiny1m",
            "results/data/countdown.parquet"]


def test_the_files_are_digested_in_the_dags_order_of_stages(tmp_path):
    inputs = make_run(tmp_path)
    fingerprint = digest_files(inputs, tmp_path)
    FINGERPRINT.validate(fingerprint)
    assert list(fingerprint["stage"]) == ["data", "policies", "rl_cells", "rl_cells", "claims"]
    assert list(fingerprint["path"])[1:4] == ["results/models/tiny1m/model.safetensors",
                                              "results/rl/tiny1m/dapo/ead/n8/seed0/eval_problems.csv",
                                              "results/rl/tiny1m/dapo/ead/n8/seed0/steps.csv"]
    assert [stage for stage, _ in STAGES][:2] == ["data", "policies"]
    assert len(run_digest(fingerprint)) == 12


def test_the_first_stage_that_diverged_is_named_with_both_digests(tmp_path):
    reference = digest_files(make_run(tmp_path / "a"), tmp_path / "a")
    assert first_divergence(reference, reference) is None
    later = digest_files(make_run(tmp_path / "b", reward=0.75), tmp_path / "b")
    message = first_divergence(reference, later)
    assert message.startswith("stage 'rl_cells' diverged first: results/rl/tiny1m/dapo/ead/n8/seed0/steps.csv")
    assert "every stage before it matches (data, policies)" in message
    earlier = digest_files(make_run(tmp_path / "c", weights=b"weightz", reward=0.75), tmp_path / "c")
    assert first_divergence(reference, earlier).startswith("stage 'policies' diverged first")
    assert run_digest(earlier) != run_digest(reference)
    missing = first_divergence(reference, reference[reference["stage"] != "claims"])
    assert missing == ("stage 'claims' diverged first: results/claims.csv is missing from this run; every stage "
                       "before it matches (data, policies, rl_cells)")


def test_a_file_outside_every_stage_or_missing_is_refused_by_name(tmp_path):
    make_run(tmp_path)
    write_table(pd.DataFrame({"x": [1]}), tmp_path / "results" / "other.csv")
    with pytest.raises(ValueError, match="results/other.csv: no stage of the fingerprint holds this file"):
        digest_files(["results/other.csv"], tmp_path)
    with pytest.raises(FileNotFoundError, match="premises/tiny1m.csv: missing"):
        digest_files(["results/premises/tiny1m.csv"], tmp_path)


def test_compare_names_the_first_divergence_of_two_written_fingerprints(tmp_path, capsys):
    from ead.fingerprint import main

    for name, reward in (("a", 0.5), ("b", 0.5), ("c", 0.75)):
        FINGERPRINT.write(digest_files(make_run(tmp_path / name, reward=reward), tmp_path / name),
                          tmp_path / f"{name}.csv")
    main(["--compare", str(tmp_path / "b.csv"), str(tmp_path / "a.csv")])  # equal: returns
    with pytest.raises(SystemExit, match=r"c\.csv differs from .*a\.csv: stage 'rl_cells' diverged first"):
        main(["--compare", str(tmp_path / "c.csv"), str(tmp_path / "a.csv")])
    with pytest.raises(SystemExit):
        main(["--out", str(tmp_path / "d.csv")])  # neither a run to digest nor two tables to compare


def test_a_table_that_fails_its_contract_is_refused_not_fingerprinted(tmp_path):
    """The fingerprint records a run that its readers accept: NaN in claims.csv (which the summary refuses) or a
    steps.csv without a column stops it, naming the file."""
    inputs = make_run(tmp_path)
    claims = tmp_path / "results" / "claims.csv"
    write_table(pd.read_csv(claims).assign(effect=[np.nan]), claims)
    with pytest.raises(ValueError, match=r"results/claims\.csv \(claims table\).*effect"):
        digest_files(inputs, tmp_path)
    make_run(tmp_path / "b")
    steps = tmp_path / "b" / "results" / "rl" / "tiny1m" / "dapo" / "ead" / "n8" / "seed0" / "steps.csv"
    write_table(pd.read_csv(steps).drop(columns=["reward_mean"]), steps)
    with pytest.raises(ValueError, match=r"steps\.csv \(steps table\): missing column\(s\) \['reward_mean'\]"):
        digest_files(inputs, tmp_path / "b")


def test_compare_says_first_that_two_runs_were_made_differently_and_names_missing_files(tmp_path):
    """A smoke run against the default reference is a different profile, said before any stage; a CPU level likewise;
    a missing run or reference is named with what it is and where one comes from."""
    from ead.fingerprint import main

    root = Path(__file__).resolve().parents[1]
    smoke, default = str(root / REFERENCES["smoke"]), str(root / REFERENCES["default"])
    with pytest.raises(SystemExit, match=r"differs from .*: a different profile: this run's is 'smoke', the "
                                         r"reference's 'default', so their numbers are not expected to match \(not a "
                                         r"reproducibility failure\); a smoke run's committed reference is "
                                         r"tests/fixtures/smoke_fingerprint\.csv$"):
        main(["--compare", smoke, default])
    other_level = tmp_path / "level.csv"
    FINGERPRINT.write(FINGERPRINT.read(smoke).assign(cpu_level="avx512"), other_level)
    with pytest.raises(SystemExit, match=r"a different CPU level: this run's is 'avx512', the reference's 'avx2'"):
        main(["--compare", str(other_level), smoke])
    with pytest.raises(SystemExit, match=r"nope\.csv: no such fingerprint; a run writes its own as "
                                         r"results/fingerprint\.csv"):
        main(["--compare", str(tmp_path / "nope.csv"), smoke])
    with pytest.raises(SystemExit, match=r"nope\.csv: no such reference fingerprint; the committed ones, by profile: "
                                         r"default: benchmarks/results/default_fingerprint\.csv; smoke: "):
        main(["--compare", smoke, str(tmp_path / "nope.csv")])
