"""One cell's eval.csv from its per-problem counts (ead.rl.cell_eval), for any k up to n."""

import pandas as pd
import pytest


def test_cell_eval_summarises_the_counts_for_any_k_up_to_n():
    from ead.metrics import pass_worst_summary
    from ead.rl.cell_eval import cell_summary

    problems = pd.DataFrame({"step": [0, 0, 2, 2], "evaluated_with": "eval_tau", "problem_id": ["a", "b", "a", "b"],
                             "num_samples": [4] * 4,
                             "num_correct": [1, 0, 4, 2], "greedy_correct": [1.0, 0.0, 1.0, 1.0],
                             "policy": "tiny1m", "sampler": "ead"})
    for ks in ([1, 4], [2]):
        summary = cell_summary(problems, ks, seed=3)
        for step, group in problems.groupby("step"):
            expected = pass_worst_summary(group, ks, seed=3)
            got = summary[summary.step == step].reset_index(drop=True)
            pd.testing.assert_frame_equal(got[expected.columns], expected)
        assert set(summary.policy) == {"tiny1m"} and set(summary.sampler) == {"ead"}
    with pytest.raises(ValueError, match="k = 8 exceeds the 4 samples"):
        cell_summary(problems, [1, 8], seed=3)


def test_a_dropped_problem_row_is_refused_naming_the_file_and_nothing_is_written(tmp_path):
    """A cell's eval_problems.csv with one problem's row deleted at one step: eval.csv is not written from the
    problems left; the job names the file and the missing problem."""
    from ead.rl.cell_eval import main
    from tests.conftest import problems_table

    cell = problems_table().query("sampler == 'ead' and seed == 0")
    path = tmp_path / "eval_problems.csv"
    cell[~((cell["step"] == 16) & (cell["problem_id"] == "q2"))].to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"eval_problems\.csv.*problem_id.*q2"):
        main(["--eval-problems", str(path), "--k", "1", "--seed", "0", "--out", str(tmp_path / "eval.csv")])
    assert not (tmp_path / "eval.csv").exists()
    cell.to_csv(path, index=False)
    main(["--eval-problems", str(path), "--k", "1", "--seed", "0", "--out", str(tmp_path / "eval.csv")])
    assert (tmp_path / "eval.csv").exists()


def test_a_dropped_own_sampler_row_is_refused_as_a_dropped_eval_tau_row_is(tmp_path):
    """With the cell's extent given (--expect-steps, --eval-every, --own-sampler, as the rule passes them), the
    own-sampler evaluation at the last step is expected too: its rows deleted, eval.csv is not rewritten."""
    from ead.rl.cell_eval import main
    from tests.conftest import problems_table

    cell = problems_table().query("sampler == 'ead' and seed == 0")
    last = cell[cell["step"] == 16].assign(evaluated_with="own_sampler")
    path, out = tmp_path / "eval_problems.csv", tmp_path / "eval.csv"
    extent = ["--expect-steps", "16", "--eval-every", "16", "--own-sampler"]
    pd.concat([cell, last]).to_csv(path, index=False)
    main(["--eval-problems", str(path), "--k", "1", "--seed", "0", "--out", str(out), *extent])
    assert set(pd.read_csv(out)["evaluated_with"]) == {"eval_tau", "own_sampler"}
    out.unlink()
    cell.to_csv(path, index=False)  # the last step's own-sampler rows gone
    with pytest.raises(ValueError, match=r"eval_problems\.csv \(eval_problems table\): incomplete: .*own_sampler"):
        main(["--eval-problems", str(path), "--k", "1", "--seed", "0", "--out", str(out), *extent])
    assert not out.exists()
