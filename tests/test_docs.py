"""The docs stay true: every reference to a doc and its heading resolves, every module is on the architecture page,
and the README's generated tables (profiles, figures) and the docs' measured blocks match their sources.

A reference is `README, "Heading"` / `docs/page.md "Heading"` (a heading of that file starts with the quoted text,
any case, after the date a log's heading starts with), `docs/page.md#anchor`, a Markdown link
`[...](page.md#anchor)` / `(#anchor)` (GitHub's anchor of a heading), or a bare `docs/page.md` (the file exists).
They are read from src/, workflow/, configs/, tests/, benchmarks/, the Snakefile and every doc. Measured numbers
are written by programs into marked blocks (benchmarks/doc_blocks.py); docs/operations.md, "Runtime" says which
program writes which block.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

from ead.workflow import FIGURES

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


doc_blocks = _load("doc_blocks")
readme_tables = _load("readme_tables")
main_finding = _load("main_finding")

#: Docs whose headings can be referred to by name.
NAMED_DOCS = r"README(?:\.md)?|TESTBED\.md|BENCHMARKS\.md|docs/[\w-]+\.md|configs/README\.md|tests/data/README\.md"
#: `README, "X"`, `docs/page.md "X"` (also inside a Python string: \"X\"); the quote may wrap across comment lines.
QUOTED = re.compile(rf"(?<![\w/.])({NAMED_DOCS}),? \\?\"([^\"\\]+)\\?\"")
#: `docs/page.md#anchor`, `../TESTBED.md#anchor`, `(page.md#anchor)` in a doc, `(#anchor)` for the page itself.
ANCHORED = re.compile(r"(?<![\w/.-])((?:\.\./)?(?:docs/)?[\w-]+\.md)?#([\w-]+)(?=[)\s`,.;:]|$)")
BARE = re.compile(r"(?<![\w/.])(docs/[\w-]+\.md)(?![\w#-])")
#: Where references are looked for.
SOURCES = ("src", "workflow", "configs", "tests", "benchmarks", "docs")
SOURCE_SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".md", ".sh", ".rst"}
#: Each marked block and the program report it copies (benchmarks/results/), or None: generated and checked below.
BLOCK_SOURCES = {
    ("README.md", "profiles"): None,
    ("README.md", "figures"): None,
    ("docs/operations.md", "dag-runtime"): "dag_runtime.md",
    ("docs/operations.md", "smoke-runtime"): "smoke_runtime.md",
    ("docs/operations.md", "test-suite"): "test_suite.md",
    ("README.md", "test-command"): "test_suite.md",
    ("docs/operations.md", "fast-lane"): "fast_lane.md",
    ("BENCHMARKS.md", "verl-cpu-runtime"): "verl_cpu.md",
    ("BENCHMARKS.md", "verl-ranks"): "verl_ranks.md",
    ("README.md", "main-finding"): "main_finding.md",
}


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped (not - or _), each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(path: Path) -> list[str]:
    """The headings of a Markdown file, outside code fences, as written (without the #s)."""
    found, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^#{1,6} +(.+?)\s*$", line)):
            found.append(match.group(1))
    return found


def anchors(path: Path) -> set[str]:
    """Every anchor GitHub gives the file's headings (a repeated one gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    result = set()
    for heading in headings(path):
        anchor = github_anchor(heading)
        result.add(anchor if anchor not in seen else f"{anchor}-{seen[anchor]}")
        seen[anchor] = seen.get(anchor, 0) + 1
    return result


def _doc_path(root: Path, name: str, referrer: Path, link: bool) -> Path:
    """The file a reference names: a Markdown link in a doc is relative to the doc; a name in prose or code (README,
    TESTBED.md, docs/page.md) is relative to the repository."""
    if name in ("README", "README.md") and not link:
        return root / "README.md"
    if link and referrer.suffix == ".md" and not name.startswith("docs/"):
        return Path(*(referrer.parent / name).parts)
    return root / name


def _starts_with(heading: str, quoted: str) -> bool:
    """Whether a heading starts with the quoted words (any case; a log's heading also after its date)."""
    text = heading.replace("`", "").lower()
    return text.startswith(quoted) or re.sub(r"^\d{4}-\d\d-\d\d: ", "", text).startswith(quoted)


def _source_files(root: Path) -> list[Path]:
    files = [root / name for name in ("README.md", "TESTBED.md", "BENCHMARKS.md", "Snakefile")]
    for folder in SOURCES:
        files += [path for path in sorted((root / folder).rglob("*"))
                  if path.is_file() and path.suffix in SOURCE_SUFFIXES and "results" not in path.parts[-3:-1]]
    # this file's docstring shows the reference forms with made-up names
    return [path for path in files if path.exists() and path.name != "test_docs.py"]


def dangling_references(root: Path) -> list[str]:
    """Every reference in the tree under ``root`` that names a missing file, heading or anchor."""
    problems = []
    for path in _source_files(root):
        raw = path.read_text()
        # a quote wrapped onto the next line of a comment or docstring: join the lines, drop the comment marks
        text = re.sub(r"[ \t]*\n[ \t]*(?:#[ \t]*)?", " ", raw)
        where = path.relative_to(root)
        for match in QUOTED.finditer(text):
            target = _doc_path(root, match.group(1), path, link=False)
            quoted = " ".join(match.group(2).split()).lower()
            if not target.exists():
                problems.append(f"{where}: {match.group(0)!r}: no file {target.relative_to(root)}")
            elif not any(_starts_with(heading, quoted) for heading in headings(target)):
                problems.append(f"{where}: {match.group(0)!r}: no heading of {target.name} starts with it")
        if path.suffix not in {".md", ".py", ".smk", ".yaml", ".yml", ".sh", ""}:
            continue
        for line_number, line in enumerate(raw.splitlines(), 1):
            for match in ANCHORED.finditer(line):
                name, anchor = match.groups()
                if name is None and path.suffix != ".md":
                    continue  # '#1' in code or a comment is not a link
                if name is None and not line[:match.start()].endswith("("):
                    continue  # an issue number (#35), not a link to the page's own heading
                target = path if name is None else _doc_path(root, name, path, link=True)
                if not target.resolve().exists():
                    problems.append(f"{where}:{line_number}: {match.group(0)}: no file {name}")
                elif anchor not in anchors(target):
                    problems.append(f"{where}:{line_number}: {match.group(0)}: no heading of {target.name} "
                                    f"has the anchor #{anchor}")
            for match in BARE.finditer(line):
                if not (root / match.group(1)).exists():
                    problems.append(f"{where}:{line_number}: {match.group(1)}: no such file")
    return problems


def test_every_reference_to_a_doc_resolves():
    problems = dangling_references(ROOT)
    assert not problems, "\n".join(problems)


def _copy_of_the_docs(tmp_path: Path) -> Path:
    for name in ("README.md", "TESTBED.md", "BENCHMARKS.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ("docs", "configs", "src", "workflow", "benchmarks"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__", "results"))
    return tmp_path


def test_a_renamed_heading_breaks_its_references(tmp_path):
    root = _copy_of_the_docs(tmp_path)
    assert dangling_references(root) == []
    method = root / "docs" / "method.md"
    method.write_text(method.read_text().replace("\n## Grading\n", "\n## Scoring responses\n"))
    problems = dangling_references(root)
    # quoted references in code (src/ead/rewards/grader.py: docs/method.md, "Grading") and anchors in docs
    assert any("src/ead/rewards/grader.py" in problem and '"Grading"' in problem for problem in problems), problems
    assert any("#grading" in problem for problem in problems), problems
    readme = root / "README.md"
    readme.write_text(readme.read_text().replace("\n## Runtime\n", "\n## Run times\n"))
    assert any("README" in problem and '"Runtime"' in problem for problem in dangling_references(root))


def test_a_missing_page_is_named(tmp_path):
    root = _copy_of_the_docs(tmp_path)
    (root / "docs" / "analyses.md").unlink()
    problems = dangling_references(root)
    assert any("docs/analyses.md" in problem and "no file" in problem for problem in problems), problems


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Runtime", "runtime"),
    ("The paper's claims, tested paired (`results/claims.csv`)", "the-papers-claims-tested-paired-resultsclaimscsv"),
    ("verl_cpu profile end to end, and EAD's rollout cost inside verl (issue #27, target <= 15 min)",
     "verl_cpu-profile-end-to-end-and-eads-rollout-cost-inside-verl-issue-27-target--15-min"),
    ("2026-11-25: the revised overlays at full size (issue #29)",
     "2026-11-25-the-revised-overlays-at-full-size-issue-29"),
])
def test_anchors_follow_githubs_rule(heading, anchor):
    assert github_anchor(heading) == anchor


def test_repeated_headings_get_numbered_anchors(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# A\n\n## Reading\n\n```\n# not a heading\n```\n\n## Reading\n")
    assert anchors(page) == {"a", "reading", "reading-1"}


def _modules() -> list[str]:
    names = []
    for path in sorted((ROOT / "src" / "ead").rglob("*.py")):
        parts = path.relative_to(ROOT / "src").with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_and_rule_file_is_on_the_architecture_page():
    page = (ROOT / "docs" / "architecture.md").read_text()
    missing = [name for name in _modules()
               if not re.search(rf"(?<![\w.]){re.escape(name)}(?![\w]|\.\w)", page)]
    assert not missing, f"docs/architecture.md does not name these modules: {missing}"
    rule_files = [path.name for path in sorted((ROOT / "workflow" / "rules").glob("*.smk"))]
    missing_rules = [name for name in rule_files if f"`{name}`" not in page]
    assert not missing_rules, f"docs/architecture.md does not list these rule files: {missing_rules}"


def test_the_readme_starts_with_the_two_commands_and_ci_runs_the_test_command():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: put the depth in docs/"
    fence = lines.index("```bash")
    assert fence < 5, "the two commands come first"
    reproduce, test = (line.split("#")[0].strip() for line in lines[fence + 1:fence + 3])
    assert reproduce == "bash workflow/scripts/setup.sh && .venv/bin/snakemake --cores all"
    assert test == "bash workflow/scripts/setup.sh --tests && .venv/bin/python -m pytest"
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == test, ".ci/run must call exactly the README's test command"


def test_every_marked_block_has_a_source():
    found = set()
    for path in [ROOT / "README.md", ROOT / "BENCHMARKS.md", ROOT / "TESTBED.md", *(ROOT / "docs").glob("*.md")]:
        found |= {(str(path.relative_to(ROOT)), name) for name in doc_blocks.all_blocks(path.read_text())}
    assert found == set(BLOCK_SOURCES), f"blocks without a source here: {found - set(BLOCK_SOURCES)}; " \
                                        f"listed but missing: {set(BLOCK_SOURCES) - found}"


@pytest.mark.parametrize(("doc", "block"), [key for key, report in BLOCK_SOURCES.items() if report])
def test_a_measured_block_is_its_programs_report(doc, block):
    text = doc_blocks.read_block(ROOT / doc, block)
    report = ROOT / "benchmarks" / "results" / BLOCK_SOURCES[(doc, block)]
    assert text.strip(), f"{doc}: block {block} is empty: run the program its report names ({report})"
    assert text in report.read_text(), f"{doc}: block {block} differs from {report}: rerun its program"


def test_a_measured_total_is_quoted_nowhere_else():
    """A block's headline time ('**36.2 min**') is not typed anywhere in the docs or configs outside the blocks."""
    totals = set()
    for (doc, block), report in BLOCK_SOURCES.items():
        if report:
            totals |= set(re.findall(r"\*\*([\d.]+) min\*\*", doc_blocks.read_block(ROOT / doc, block)))
    texts = {path: doc_blocks.BLOCK.sub("", path.read_text())
             for path in [ROOT / "README.md", ROOT / "BENCHMARKS.md", *(ROOT / "docs").glob("*.md"),
                          *(ROOT / "configs").rglob("*.yaml")]}
    quoted = [f"{path.relative_to(ROOT)}: {total} min" for path, text in texts.items() for total in sorted(totals)
              if re.search(rf"(?<![\d.]){re.escape(total)} min", text)]
    assert not quoted, f"measured totals typed outside their blocks: {quoted}"


def test_the_profiles_table_is_what_its_program_renders():
    block = doc_blocks.read_block(ROOT / "README.md", "profiles")
    counts = readme_tables.counts_in(block)
    assert set(counts) == {profile.name for profile in readme_tables.PROFILES}
    assert block == readme_tables.render(counts), "rerun `python benchmarks/readme_tables.py`"


def test_the_figure_list_is_the_registry():
    block = doc_blocks.read_block(ROOT / "README.md", "figures")
    assert re.findall(r"`figures/(\w+)\.", block) == list(FIGURES)
    assert block == readme_tables.render_figures(), "rerun `python benchmarks/readme_tables.py --figures-only`"


@pytest.mark.slow
def test_the_profiles_job_counts_are_a_dry_runs():
    block = doc_blocks.read_block(ROOT / "README.md", "profiles")
    planned = {profile.name: readme_tables.planned_jobs(profile) for profile in readme_tables.PROFILES}
    assert readme_tables.counts_in(block) == planned, "rerun `python benchmarks/readme_tables.py`"


@pytest.mark.slow
def test_the_paper_pages_rule_counts_are_a_dry_runs():
    """docs/paper-scale.md, "What runs": every `rule` (N) is what the paper profile's dry run plans."""
    stated = dict(re.findall(r"`(\w+)` \((\d+)\)", (ROOT / "docs" / "paper-scale.md").read_text()))
    paper = next(profile for profile in readme_tables.PROFILES if profile.name == "paper")
    planned = readme_tables.planned_rule_counts(paper)
    assert {rule: int(count) for rule, count in stated.items()} == {rule: planned[rule] for rule in stated}


def test_the_main_finding_reads_g4_and_the_main_comparison_from_the_tables():
    """The README's numbers are the tables' (in points), primary metric first; a missing main-comparison row fails."""
    import pandas as pd

    from ead.tables import CLAIMS, RL_LEARNS

    learns = pd.DataFrame([dict(premise="G4", part="RL learns here", policy="tiny1m_sharp", algorithm="dapo", n=8,
                                sampler="tau1.0", metric="pass@1", step=16, effect=0.0123, ci_low=-0.0051,
                                ci_high=0.0302, standard_error=0.009, mde=0.0252, min_effect=0.08, min_ci_low=0.05,
                                num_seeds=6, num_problems=128, verdict="contradicted", rule="CI high < 0.08")])
    claim = dict(figure="fig04", statement="s", policy="tiny1m_sharp", algorithm="dapo", n=8, baseline="tau1.0",
                 evaluated_with="eval_tau", step=16, standard_error=0.01, num_seeds=6, num_units=128, rule="r",
                 scope="x", rl_learns="contradicted")
    claims = pd.DataFrame([{**claim, "claim": name, "sampler": "ead_tis", "metric": "pass@1", "effect": 0.004 * i,
                            "ci_low": -0.01, "ci_high": 0.02, "mde": 0.011, "verdict": "inconclusive",
                            "over": "curve" if name.endswith("curve") else "last"}
                           for i, name in enumerate(reversed(main_finding.MAIN_COMPARISON))])
    block = main_finding.render(RL_LEARNS.validate(learns, "rl_learns.csv"),
                                CLAIMS.validate(claims.assign(best_of="", selection="", threshold=float("nan"),
                                                              baseline_algorithm=""), "claims.csv"),
                                commit="abc1234", date="2026-11-26")
    assert "Premise G4, tau1.0's pass@1 at the last step minus step 0 (supported at >= 8 with the CI above 5" in block
    assert "| tiny1m_sharp / dapo / n 8, step 16 | 6 x 128 | +1.2 [-0.5, +3.0] | **contradicted** |" in block
    table = [line for line in block.splitlines() if line.startswith("| C")]
    assert [line.split(" | ")[0][2:] for line in table] == list(main_finding.MAIN_COMPARISON)
    assert table[0] == ("| C15-curve | ead_tis - tau1.0 (tiny1m_sharp) | pass@1 | curve mean | +3.6 [-1.0, +2.0] | "
                        "1.1 | 6 | **inconclusive** | contradicted |")
    assert "| C15 | ead_tis - tau1.0 (tiny1m_sharp) | pass@1 | step 16 |" in table[1]
    with pytest.raises(ValueError, match=r"lacks the main comparison's rows \['C15-curve'\]"):
        main_finding.render(learns, claims[claims["claim"] != "C15-curve"], commit="abc1234", date="2026-11-26")
