"""Paper-profile hub data (ead.operations.hub): rows in verl's dataset format, and verl's dataset reads our Parquet."""

from pathlib import Path

from ead.operations.hub import verl_rows
from ead.rl.verl import overrides
from ead.settings.rl import Cell
from ead.settings.rl import verl_cell_settings as cell_document
from tests.conftest import PAPER, PATHS

ROOT = Path(__file__).resolve().parents[2]


def test_verl_rows_follow_verls_dataset_format():
    records = [{"problem": "What is 1/2 + 1/2?", "solution": "It is \\boxed{1}."},
               {"problem": "No answer here", "solution": "none"}]
    table, dropped = verl_rows(records, question="problem", answer_from="solution_boxed", instruction="Box it.",
                               source="AI-MO/NuminaMath-CoT", agent_name=None)
    assert dropped == 1 and len(table) == 1
    row = table.iloc[0]
    assert row["prompt"] == [{"role": "user", "content": "What is 1/2 + 1/2? Box it."}]
    assert row["reward_model"] == {"style": "rule", "ground_truth": "1"} and row["data_source"] == "math"
    assert row["extra_info"]["index"] == 0 and "agent_name" not in table
    val, _ = verl_rows([{"problem": "2+2", "answer": "4"}], question="problem", answer_from="answer",
                       instruction="Box it.", source="HuggingFaceH4/MATH-500", agent_name="single_turn_agent")
    assert val.iloc[0]["agent_name"] == "single_turn_agent"  # validation never uses the training sampler


def test_verls_dataset_reads_our_parquet(tmp_path):
    """verl's RLHFDataset, configured by a composed cell config, loads the tables hub.py writes and hands the
    fields the agent loop and reward need (raw_prompt, agent_name, reward_model, extra_info.index)."""
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from ead.models.tiny_policy import build_tokenizer

    table, _ = verl_rows([{"problem": "1+2", "answer": "3"}, {"problem": "2+3", "answer": "5"}], question="problem",
                         answer_from="answer", instruction="(box it)", source="HuggingFaceH4/MATH-500",
                         agent_name="single_turn_agent")
    path = tmp_path / "val.parquet"
    table.to_parquet(path)
    cell = Cell("qwen2.5-math-1.5b", "dapo", "ead", 8, 0)
    paths = overrides.CellPaths(**{**PATHS.__dict__, "train_files": str(path), "val_files": str(path)})
    cfg = overrides.compose_verl_config(overrides.verl_overrides(cell_document(PAPER, cell), paths))
    tokenizer = build_tokenizer()
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    dataset = RLHFDataset(data_files=str(path), tokenizer=tokenizer, config=cfg.data, processor=None)
    assert len(dataset) == 2
    item = dataset[1]
    assert item["raw_prompt"] == [{"role": "user", "content": "2+3 (box it)"}]
    assert item["agent_name"] == "single_turn_agent" and item["index"] == 1
    assert item["reward_model"]["ground_truth"] == "5" and item["data_source"] == "math"
