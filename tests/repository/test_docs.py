"""The docs stay true: every reference to a doc and its heading resolves, every module is on the architecture page,
and the README's generated tables (profiles, figures) and the docs' measured blocks match their sources.

A reference is `README, "Heading"` / `docs/page.md "Heading"` (a heading of that file starts with the quoted text,
any case, after the date a log's heading starts with), `docs/page.md#anchor`, a Markdown link
`[...](page.md#anchor)` / `(#anchor)` (GitHub's anchor of a heading), or a bare `docs/page.md` (the file exists).
They are read from src/, workflow/, configs/, tests/, benchmarks/, tools/, the Snakefile and every doc. Measured
numbers are written by programs into marked blocks (tools/doc_blocks.py); docs/operations.md, "Runtime" says which
program writes which block.

The reference pages (README.md, docs/*.md, configs/README.md) say what is true now: no issue number, work stop or path
outside the repository; no duration or size typed outside a block (a setting is listed in NOT_MEASURED with its
reason); and what they state about a profile (grid table, seed, cell and problem counts, `key` = value, the `ead` keys
of the paper profile, figure names, profile commands, which overlay validates over which profile) is what the config
loader gives. TESTBED.md and BENCHMARKS.md are dated logs and exempt.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from ead.workflow import FIGURES
from tests.conftest import load_tool

ROOT = Path(__file__).resolve().parents[2]


doc_blocks = load_tool("doc_blocks")
readme_tables = load_tool("readme_tables")
main_finding = load_tool("main_finding")
positive_control = load_tool("positive_control")
mechanism_map = load_tool("mechanism_map")
machine_spread = load_tool("machine_spread")

#: Docs whose headings can be referred to by name.
NAMED_DOCS = r"README(?:\.md)?|TESTBED\.md|BENCHMARKS\.md|docs/[\w-]+\.md|configs/README\.md|tests/fixtures/README\.md"
#: `README, "X"`, `docs/page.md "X"` (also inside a Python string: \"X\"); the quote may wrap across comment lines.
QUOTED = re.compile(rf"(?<![\w/.])({NAMED_DOCS}),? \\?\"([^\"\\]+)\\?\"")
#: `docs/page.md#anchor`, `../TESTBED.md#anchor`, `(page.md#anchor)` in a doc, `(#anchor)` for the page itself.
ANCHORED = re.compile(r"(?<![\w/.-])((?:\.\./)?(?:docs/)?[\w-]+\.md)?#([\w-]+)(?=[)\s`,.;:]|$)")
BARE = re.compile(r"(?<![\w/.])(docs/[\w-]+\.md)(?![\w#-])")
#: Where references are looked for.
SOURCES = ("src", "workflow", "configs", "tests", "benchmarks", "tools", "docs")
SOURCE_SUFFIXES = {".py", ".smk", ".yaml", ".yml", ".md", ".sh", ".rst"}
#: Each marked block and the program report it copies (benchmarks/results/), or None: generated and checked below.
BLOCK_SOURCES = {
    ("README.md", "profiles"): None,
    ("README.md", "figures"): None,
    ("docs/operations.md", "dag-runtime"): "dag_runtime.md",
    ("docs/operations.md", "smoke-runtime"): "smoke_runtime.md",
    ("docs/operations.md", "positive-control-runtime"): "positive_control_runtime.md",
    ("docs/operations.md", "mechanism-map-runtime"): "mechanism_map_runtime.md",
    ("docs/operations.md", "test-suite"): "test_suite.md",
    ("README.md", "test-command"): "test_suite.md",
    ("docs/operations.md", "fast-lane"): "fast_lane.md",
    ("BENCHMARKS.md", "verl-cpu-runtime"): "verl_cpu.md",
    ("BENCHMARKS.md", "verl-ranks"): "verl_ranks.md",
    ("docs/findings.md", "main-finding"): "main_finding.md",
    ("docs/findings.md", "findings"): None,  # tools/findings.py; tests/repository/test_findings.py
    ("README.md", "findings-summary"): None,
    ("docs/findings.md", "positive-control"): "positive_control.md",
    ("docs/rl-learns.md", "mechanism-map"): "mechanism_map.md",
    ("docs/operations.md", "machine-spread"): "machine_spread.md",
    ("docs/rl-learns.md", "mechanism-map-tis"): "mechanism_map_tis.md",
    ("docs/rl-learns.md", "mechanism-map-chain"): "mechanism_map_chain.md",
    ("docs/rl-learns.md", "mechanism-map-replication"): "mechanism_map_replication.md",
    ("docs/rl-learns.md", "mechanism-map-trl"): "mechanism_map_trl.md",
    ("docs/use-ead.md", "tested-releases"): "tested_releases.md",
}


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped (not - or _), each space a hyphen."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def headings(path: Path, lowest: int = 1) -> list[str]:
    """The headings of a Markdown file, outside code fences, as written (without the #s); from level ``lowest`` on
    (2: the sections, without the page's title)."""
    found, fenced = [], False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"^(#{1,6}) +(.+?)\s*$", line)) and len(match.group(1)) >= lowest:
            found.append(match.group(2))
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


def _is_title(heading: str, quoted: str) -> bool:
    """Whether the quoted words are the whole heading (any case; a log's heading also without its date)."""
    text = heading.replace("`", "").lower()
    return quoted in (text, re.sub(r"^\d{4}-\d\d-\d\d: ", "", text))


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
                continue
            if not any(_starts_with(heading, quoted) for heading in headings(target)):
                problems.append(f"{where}: {match.group(0)!r}: no heading of {target.name} starts with it")
                continue
            # a reader must land on one section (TESTBED.md has entries of one title: a pre-registration and its
            # result): the whole title, or words only one section starts with (the page's own title aside)
            starting = [heading for heading in headings(target, lowest=2) if _starts_with(heading, quoted)]
            if len(starting) > 1 and sum(_is_title(heading, quoted) for heading in starting) != 1:
                problems.append(f"{where}: {match.group(0)!r}: {len(starting)} sections of {target.name} start with "
                                "it; quote the whole title")
        if path.suffix not in {".md", ".py", ".smk", ".yaml", ".yml", ".sh", ""}:
            continue
        for line_number, line in enumerate(raw.splitlines(), 1):
            for match in ANCHORED.finditer(line):
                name, anchor = match.groups()
                if name is None and path.suffix != ".md":
                    continue  # '#1' in code or a comment is not a link
                if name is None and not line[:match.start()].endswith("("):
                    continue  # a '#' and a number in prose, not a link to the page's own heading
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


#: A path into the repository's own folders, as the reference pages and config comments name them.
REPOSITORY_PATH = re.compile(r"(?<![\w/.${}-])((?:src|tests|workflow|configs|benchmarks|tools|docs)/[\w./-]*[\w/])")
#: Paths the pages write as examples of a form, not as files.
EXAMPLE_PATHS = {"tests/X/test_Y.py", "configs/ablations/x.yaml", "configs/ablations/my_question.yaml"}


def missing_repository_paths(root: Path) -> list[str]:
    """``file:line: path`` for every repository path that README.md, docs/*.md, configs/README.md or a comment of a
    config file names and that does not exist (a path followed by a placeholder, ``<``, ``*`` or ``{``, is a
    pattern, not a file)."""
    problems = []
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "configs" / "README.md"]
    for path in [*pages, *sorted((root / "configs").rglob("*.yaml"))]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if path.suffix == ".yaml":
                line = line[line.index("#"):] if "#" in line else ""
            for match in REPOSITORY_PATH.finditer(line):
                named = match.group(1).rstrip(".")
                if line[match.end():match.end() + 1] in ("<", "*", "{") or named in EXAMPLE_PATHS:
                    continue
                if not (root / named).exists():
                    problems.append(f"{path.relative_to(root)}:{number}: {named}")
    return problems


def test_every_repository_path_the_pages_and_config_comments_name_exists(tmp_path):
    problems = missing_repository_paths(ROOT)
    assert not problems, "moved or missing files:\n" + "\n".join(problems)
    for folder in ("docs", "configs", "tools"):
        (tmp_path / folder).mkdir()
    (tmp_path / "tools" / "a.py").write_text("")
    (tmp_path / "README.md").write_text("Run `tools/a.py`, then `benchmarks/<name>.py`.\n")
    (tmp_path / "configs" / "README.md").write_text("Moved: see `tests/data/README.md`.\n")
    (tmp_path / "configs" / "x.yaml").write_text("key: 1  # written by tools/b.py, read by tools/a.py\n")
    assert missing_repository_paths(tmp_path) == ["configs/README.md:1: tests/data/README.md",
                                                  "configs/x.yaml:1: tools/b.py"]


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


def test_a_quote_that_starts_several_headings_is_named(tmp_path):
    """TESTBED.md has entries of one title (a pre-registration and its result): a quote must land on one of them."""
    root = _copy_of_the_docs(tmp_path)
    page = root / "docs" / "findings.md"
    whole = '"the main comparison on the fixed pool (after its pre-registration)"'
    assert whole in page.read_text()
    page.write_text(page.read_text().replace(whole, '"the main comparison on the fixed pool"'))
    (problem,) = dangling_references(root)
    assert problem.startswith("docs/findings.md: "), problem
    assert problem.endswith("2 sections of TESTBED.md start with it; quote the whole title"), problem


def test_a_missing_page_is_named(tmp_path):
    root = _copy_of_the_docs(tmp_path)
    (root / "docs" / "analyses.md").unlink()
    problems = dangling_references(root)
    assert any("docs/analyses.md" in problem and "no file" in problem for problem in problems), problems


@pytest.mark.parametrize(("heading", "anchor"), [
    ("Runtime", "runtime"),
    ("The paper's claims, tested paired (`results/claims.csv`)", "the-papers-claims-tested-paired-resultsclaimscsv"),
    ("verl_cpu profile end to end, and EAD's rollout cost inside verl (target <= 15 min)",
     "verl_cpu-profile-end-to-end-and-eads-rollout-cost-inside-verl-target--15-min"),
    ("2026-11-25: the revised overlays at full size (1 of 2)",
     "2026-11-25-the-revised-overlays-at-full-size-1-of-2"),
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
    assert block == readme_tables.render(counts), "rerun `python tools/readme_tables.py`"


def test_the_figure_list_is_the_registry():
    block = doc_blocks.read_block(ROOT / "README.md", "figures")
    assert re.findall(r"`figures/(\w+)\.", block) == list(FIGURES)
    assert block == readme_tables.render_figures(), "rerun `python tools/readme_tables.py --figures-only`"


@pytest.mark.slow
def test_the_profiles_job_counts_are_a_dry_runs():
    block = doc_blocks.read_block(ROOT / "README.md", "profiles")
    planned = {profile.name: readme_tables.planned_jobs(profile) for profile in readme_tables.PROFILES}
    assert readme_tables.counts_in(block) == planned, "rerun `python tools/readme_tables.py`"


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
                 scope="x", rl_learns="contradicted", smallest_effect=0.02)
    claims = pd.DataFrame([{**claim, "claim": name, "sampler": "ead_tis", "metric": "pass@1", "effect": 0.004 * i,
                            "ci_low": -0.01, "ci_high": 0.02, "mde": 0.011, "verdict": "inconclusive",
                            "over": "curve" if name.endswith("curve") else "last"}
                           for i, name in enumerate(reversed(main_finding.MAIN_COMPARISON))])
    block = main_finding.render(RL_LEARNS.validate(learns, "rl_learns.csv"),
                                CLAIMS.validate(claims.assign(best_of="", selection="", threshold=float("nan"),
                                                              baseline_algorithm=""), "claims.csv"),
                                commit="abc1234", date="2026-11-26", fingerprint="Fingerprint `0123abcd4567`.")
    assert "MDE at 80% power). Fingerprint `0123abcd4567`." in block
    assert ("Premise G4, tau1.0's pass@1 at the last step minus step 0 (supported where the gain is at least 8 points "
            "with its CI's lower end above 5; contradicted where the CI's upper end is below 8, which rules out a gain "
            "of that size, not all movement; a single seed is inconclusive by rule)") in block
    assert "| tiny1m_sharp / dapo / n 8, step 16 | 6 x 128 | +1.2 [-0.5, +3.0] | **contradicted** |" in block
    table = [line for line in block.splitlines() if line.startswith("| C")]
    assert [line.split(" | ")[0][2:] for line in table] == list(main_finding.MAIN_COMPARISON)
    assert table[0] == ("| C15-curve | ead_tis - tau1.0 (tiny1m_sharp) | pass@1 | curve mean | +3.6 [-1.0, +2.0] | "
                        "1.1 | 2.0 | 6 | **inconclusive** | contradicted |")
    assert "| C15 | ead_tis - tau1.0 (tiny1m_sharp) | pass@1 | step 16 |" in table[1]
    with pytest.raises(ValueError, match=r"lacks the main comparison's rows \['C15-curve'\]"):
        main_finding.render(learns, claims[claims["claim"] != "C15-curve"], commit="abc1234", date="2026-11-26",
                            fingerprint="")


def test_the_mechanism_map_block_sets_each_comparison_beside_its_prediction():
    """Per policy G4 and the three comparisons in points, each verdict with the prediction it missed (or "as
    predicted"), the count of predictions met and the primary; a claim without its prediction fails."""
    import pandas as pd

    from ead.tables import CLAIMS, RL_LEARNS

    base = dict(figure="mechanism_map", statement="s", algorithm="dapo", n=8, sampler="ead", baseline="tau1.0",
                metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.005, mde=0.014, num_seeds=4,
                num_units=384, smallest_effect=0.02, rule="r", scope="x", over="curve", rl_learns="supported")
    rows = []
    for policy in ("map_p05_exact", "map_p05_fragile"):
        for key, (effect, verdict, predicted) in {"a": (0.001, "negligible", "negligible"),
                                                  "b": (0.031, "supported", "supported"),
                                                  "c": (-0.004, "inconclusive", "contradicted")}.items():
            rows.append({**base, "claim": f"M-{policy[4:].replace('_', '-')}-{key}", "policy": policy,
                         "effect": effect, "ci_low": effect - 0.01, "ci_high": effect + 0.01, "verdict": verdict,
                         "predicted_verdict": predicted, "predicted_effect": -0.03 if key == "c" else 0.0,
                         "statement": "s (primary)" if (policy, key) == ("map_p05_fragile", "b") else "s"})
    claims = CLAIMS.validate(pd.DataFrame(rows))
    learns = RL_LEARNS.validate(pd.DataFrame([dict(premise="G4", part="RL learns here", policy="map_p05_exact",
                                                   algorithm="dapo", n=8, sampler="tau1.0", metric="pass@1", step=16,
                                                   effect=0.242, ci_low=0.168, ci_high=0.314, standard_error=0.03,
                                                   mde=0.1, min_effect=0.08, min_ci_low=0.05, num_seeds=4,
                                                   num_problems=96, verdict="supported", rule="r")]))
    block = mechanism_map.render(claims, learns, commit="6c05904", date="2026-11-28", fingerprint="Fingerprint `ab`.")
    table = [line for line in block.splitlines() if line.startswith("| map_")]
    assert table[0] == ("| map_p05_exact | +24.2 [+16.8, +31.4] **supported** | +0.1 [-0.9, +1.1] **negligible** "
                        "(as predicted) | +3.1 [+2.1, +4.1] **supported** (as predicted) | -0.4 [-1.4, +0.6] "
                        "**inconclusive** (predicted contradicted -3.0) |")
    assert table[1].startswith("| map_p05_fragile | untested |")
    assert "4 of 6 verdicts as pre-registered (2 supported, 2 negligible, 2 inconclusive)." in block
    assert ("Primary, M-p05-fragile-b (EAD - tau 1.2 on map_p05_fragile): +3.1 [+2.1, +4.1], MDE 1.4 points, 4 seeds: "
            "**supported** (predicted supported +0.0).") in block
    with pytest.raises(ValueError, match=r"carries its prediction; \['M-p05-exact-a'\] do not"):
        mechanism_map.render(claims.assign(predicted_verdict=lambda t: t["predicted_verdict"].where(
            t["claim"] != "M-p05-exact-a")), learns, commit="c", date="d", fingerprint="")


def test_the_exploratory_map_block_sets_each_tis_comparison_beside_its_prediction_and_its_groups():
    """The exploratory block (X-* claims): the comparison in points beside the prediction written before its cells,
    the informative groups by phase of the sampler and of its baseline, the count met; a claim whose statement does
    not say it is exploratory, or without its prediction, fails."""
    import pandas as pd

    from ead.tables import CLAIMS, SIGNAL_BY_PHASE

    base = dict(figure="mechanism_map", algorithm="dapo", n=8, sampler="ead_hot_tis", baseline="ead_hot",
                metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.01, mde=0.031, num_seeds=4,
                num_units=384, smallest_effect=0.02, rule="r", scope="x", over="curve", rl_learns="")
    claims = CLAIMS.validate(pd.DataFrame([
        {**base, "claim": "X-p05-exact-tis", "policy": "map_p05_exact", "statement": "Exploratory: TIS raises it",
         "effect": 0.025, "ci_low": 0.005, "ci_high": 0.045, "verdict": "supported",
         "predicted_verdict": "inconclusive", "predicted_effect": 0.015},
        {**base, "claim": "X-p15-fragile-tis", "policy": "map_p15_fragile", "statement": "Exploratory: TIS raises it",
         "effect": 0.0, "ci_low": -0.01, "ci_high": 0.01, "verdict": "negligible", "predicted_verdict": "negligible",
         "predicted_effect": 0.02}]))
    signal = SIGNAL_BY_PHASE.validate(pd.DataFrame([
        dict(policy="map_p05_exact", algorithm="dapo", sampler=sampler, n=8, metric="informative_group_fraction",
             phase=phase, first_step=4 * phase - 3, last_step=4 * phase, value=value + 0.01 * phase, ci_low=0.0,
             ci_high=1.0, num_seeds=4)
        for sampler, value in (("ead_hot_tis", 0.40), ("ead_hot", 0.30)) for phase in (1, 2, 3, 4)]))
    block = mechanism_map.render_exploratory(claims, signal, commit="768cc83", date="2026-11-29",
                                             fingerprint="Fingerprint `ab`.")
    table = [line for line in block.splitlines() if line.startswith("| map_")]
    assert table[0] == ("| map_p05_exact | hot EAD + TIS - hot EAD | +2.5 [+0.5, +4.5] **supported** (predicted "
                        "inconclusive +1.5) | 3.1 | 41 / 42 / 43 / 44 | 31 / 32 / 33 / 34 |")
    assert table[1] == ("| map_p15_fragile | hot EAD + TIS - hot EAD | +0.0 [-1.0, +1.0] **negligible** (as "
                        "predicted) | 3.1 |  |  |")
    assert "1 of 2 exploratory verdicts as predicted (1 supported, 1 negligible); 4 seeds per claim." in block
    assert "Exploratory cells, added after the map's pre-registration" in block
    with pytest.raises(ValueError, match=r"statement begins 'Exploratory'; \['X-p05-exact-tis'\] do not"):
        mechanism_map.render_exploratory(claims.assign(statement=lambda t: t["statement"].where(
            t["claim"] != "X-p05-exact-tis", "TIS raises it")), signal, commit="c", date="d", fingerprint="")
    with pytest.raises(ValueError, match=r"prediction written before its cells ran; \['X-p15-fragile-tis'\]"):
        mechanism_map.render_exploratory(claims.assign(predicted_verdict=lambda t: t["predicted_verdict"].where(
            t["claim"] != "X-p15-fragile-tis")), signal, commit="c", date="d", fingerprint="")


def test_the_replication_block_sets_each_claim_beside_its_prediction_with_its_seeds():
    import pandas as pd

    from ead.tables import CLAIMS

    base = dict(figure="mechanism_map_replication", policy="map_p05_fragile", algorithm="dapo", n=8, sampler="ead",
                baseline="tau1.2", metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.007,
                num_units=768, smallest_effect=0.02, rule="r", scope="x", over="curve", rl_learns="", statement="s")
    claims = CLAIMS.validate(pd.DataFrame([
        {**base, "claim": "R-p05-fragile-b-fresh", "num_seeds": 8, "effect": 0.011, "ci_low": -0.004,
         "ci_high": 0.027, "mde": 0.021, "verdict": "inconclusive", "predicted_verdict": "inconclusive",
         "predicted_effect": 0.012},
        {**base, "claim": "R-p05-fragile-b-16", "num_seeds": 16, "effect": 0.013, "ci_low": 0.003, "ci_high": 0.024,
         "mde": 0.015, "verdict": "supported", "predicted_verdict": "negligible", "predicted_effect": 0.0},
        {**base, "claim": "M-p05-fragile-b", "figure": "mechanism_map", "num_seeds": 8, "effect": 0.0, "ci_low": 0.0,
         "ci_high": 0.0, "mde": 0.0, "verdict": "supported"}]))
    block = mechanism_map.render_replication(claims, commit="abc1234", date="2026-11-29", fingerprint="F.",
                                             shared="S.")
    assert block.splitlines()[0].endswith("F. S.")
    table = [line for line in block.splitlines() if line.startswith("| R-")]
    assert table == ["| R-p05-fragile-b-fresh | 8 | +1.1 [-0.4, +2.7] **inconclusive** (as predicted) | 2.1 |",
                     "| R-p05-fragile-b-16 | 16 | +1.3 [+0.3, +2.4] **supported** (predicted negligible +0.0) | 1.5 |"]
    assert "1 of 2 verdicts as pre-registered (1 supported, 1 inconclusive)." in block
    with pytest.raises(ValueError, match=r"prediction written before its cells ran; \['R-p05-fragile-b-16'\]"):
        mechanism_map.render_replication(claims.assign(predicted_verdict=lambda t: t["predicted_verdict"].where(
            t["claim"] != "R-p05-fragile-b-16")), commit="c", date="d", fingerprint="", shared="")
    with pytest.raises(ValueError, match="no claim R-"):
        mechanism_map.render_replication(claims[claims["claim"].str.startswith("M-")], commit="c", date="d",
                                         fingerprint="", shared="")


def test_the_trl_rerun_block_sets_its_claim_beside_its_prediction_and_refuses_one_without():
    import pandas as pd

    from ead.tables import CLAIMS

    base = dict(figure="mechanism_map_trl", policy="map_p05_fragile", algorithm="dapo", n=8, sampler="ead",
                baseline="tau1.2", metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.005,
                num_units=3072, smallest_effect=0.02, rule="r", scope="x", over="curve", rl_learns="", statement="s")
    claims = CLAIMS.validate(pd.DataFrame([
        {**base, "claim": "T-p05-fragile-b", "num_seeds": 16, "effect": 0.012, "ci_low": 0.003, "ci_high": 0.021,
         "mde": 0.013, "verdict": "negligible", "predicted_verdict": "negligible", "predicted_effect": 0.010},
        {**base, "claim": "R-p05-fragile-b-16", "figure": "mechanism_map_replication", "num_seeds": 16,
         "effect": 0.0, "ci_low": 0.0, "ci_high": 0.0, "mde": 0.0, "verdict": "supported"}]))
    block = mechanism_map.render_trl(claims, commit="abc1234", date="2026-12-07", fingerprint="F.")
    assert "TRL 1.16.0's advantages and loss, 192 evaluation problems" in block.splitlines()[0]
    assert [line for line in block.splitlines() if line.startswith("| T-")] == [
        "| T-p05-fragile-b | 16 | +1.2 [+0.3, +2.1] **negligible** (as predicted) | 1.3 |"]
    assert "1 of 1 verdicts as pre-registered (1 negligible)." in block and "R-p05" not in block
    with pytest.raises(ValueError, match=r"prediction written before its cells ran; \['T-p05-fragile-b'\]"):
        mechanism_map.render_trl(claims.assign(predicted_verdict=None), commit="c", date="d", fingerprint="")


def test_the_replication_says_whether_its_cells_of_the_maps_seeds_are_the_maps():
    """The files two fingerprints share, digest against digest: all equal, one differing (named), none shared."""
    import pandas as pd

    from ead.tables import FINGERPRINT

    def fingerprint(rows):
        return FINGERPRINT.validate(pd.DataFrame([
            {"stage": stage, "path": path, "digest": digest, "rows": 1, "profile": "mechanism_map",
             "config_files": "c.yaml", "cpu_level": "avx2"} for stage, path, digest in rows]))

    cell = "results/rl/map_p05_fragile/dapo/ead/n8/seed{}/steps.csv"
    policy = ("policies", "results/models/p/model.safetensors", "aa")
    reference = fingerprint([policy, ("rl_cells", cell.format(0), "b0"), ("rl_cells", cell.format(1), "b1"),
                             ("claims", "results/claims.csv", "cc")])
    run = fingerprint([policy, ("rl_cells", cell.format(0), "b0"), ("rl_cells", cell.format(1), "b1"),
                       ("rl_cells", cell.format(8), "b8"), ("claims", "results/claims.csv", "dd")])
    same = mechanism_map.shared_files_sentence(run, reference, "`map.csv`")  # the claims differ, and are left out
    assert same.startswith("The 3 files it shares with `map.csv` (2 of them the map's cells' tables) have the map's")
    moved = run.assign(digest=run["digest"].where(run["path"] != cell.format(1), "xx"))
    assert mechanism_map.shared_files_sentence(moved, reference, "`map.csv`").startswith(
        f"1 of the 3 files it shares with `map.csv` differ from the map's (first `{cell.format(1)}`)")
    with pytest.raises(ValueError, match="shares no file with `map.csv`"):
        mechanism_map.shared_files_sentence(run[run["stage"] == "rl_cells"].assign(path="elsewhere"), reference,
                                            "`map.csv`")


def test_the_mechanism_map_chain_block_reads_each_cells_failure_shares_by_key_and_step():
    """The chain block: per policy and sampler the wrong-strategy share of each key and the wrong-execution share of
    all keys (each key weighted by its problems) at every evaluated step, in percent, beside the informative groups;
    a breakdown without failure shares is refused."""
    import pandas as pd

    from ead.tables import EVAL_BY_GROUP, SIGNAL_BY_PHASE

    def row(key, step, metric, value, problems):
        return dict(policy="map_p05_exact", algorithm="dapo", sampler="ead", n=8, step=step, group_by="key",
                    group=key, metric=metric, value=value, ci_low=0.0, ci_high=1.0, num_seeds=4,
                    num_problems=problems)

    groups = EVAL_BY_GROUP.validate(pd.DataFrame(
        [row(key, step, "failure:strategy", value, 10) for key, values in (("*", (0.95, 0.40)), ("/", (0.97, 0.90)))
         for step, value in zip((0, 16), values)]
        + [row("*", 0, "failure:execution", 0.01, 10), row("/", 0, "failure:execution", 0.04, 30),
           row("*", 16, "failure:execution", 0.10, 10), row("/", 16, "failure:execution", 0.02, 30),
           row("(all)", 0, "failure:execution", 0.0325, 40), row("(all)", 16, "failure:execution", 0.04, 40),
           row("(all)", 16, "failure:strategy", 0.5, 40), row("(all)", 0, "failure:format", 0.0, 40),
           row("(all)", 16, "failure:format", 0.125, 40), row("*", 16, "pass@1", 0.5, 10)]))
    signal = SIGNAL_BY_PHASE.validate(pd.DataFrame([
        dict(policy="map_p05_exact", algorithm="dapo", sampler="ead", n=8, metric="informative_group_fraction",
             phase=phase, first_step=4 * phase - 3, last_step=4 * phase, value=0.1 * phase, ci_low=0.0, ci_high=1.0,
             num_seeds=4) for phase in (1, 2, 3, 4)]))
    block = mechanism_map.render_chain(groups, signal, commit="abc1234", date="2026-11-29", fingerprint="F.")
    table = [line for line in block.splitlines() if line.startswith("| map_")]
    # wrong execution: over all keys (the breakdown's "(all)" rows), 3.25% at step 0 and 4% at 16; wrong strategy by
    # key only
    assert table == ["| map_p05_exact | ead | 4 | 95 / 40 | 97 / 90 | 3 / 4 | 0 / 12 | 10 / 20 / 30 / 40 |"]
    assert "| policy | sampler | seeds | wrong strategy, key `*` | wrong strategy, key `/` |" in block
    assert "at steps 0 / 16" in block
    with pytest.raises(ValueError, match=r"no failure:strategy / failure:execution rows by key"):
        mechanism_map.render_chain(groups[groups["metric"] == "pass@1"], signal, commit="c", date="d",
                                   fingerprint="")


def test_the_positive_control_block_reads_its_premises_g4_and_claims_from_the_tables():
    """The README's positive-control numbers are the tables' (in points), the premise parts that have an effect, G4,
    then P1-P5; a missing claim fails."""
    import pandas as pd

    from ead.tables import CLAIMS, PREMISE_VERDICTS, RL_LEARNS

    probe = dict(model="results/models/tiny_strategy", num_problems=256, n=16, baseline="tau1.0", seed=0,
                 threshold=0.0, rule="r")
    verdicts = pd.DataFrame([
        dict(probe, premise="G1", part="heat early raises coverage", effect=0.0859, ci_low=0.0469, ci_high=0.1212,
             mde=0.056, verdict="supported"),
        dict(probe, premise="G1", part="a trade-off exists (both parts)", effect=float("nan"), ci_low=float("nan"),
             ci_high=float("nan"), mde=float("nan"), verdict="inconclusive"),
        dict(probe, premise="G2", part="strategy errors are a large share of failures", effect=0.9698, ci_low=0.9615,
             ci_high=0.9766, mde=float("nan"), verdict="supported")])
    learns = pd.DataFrame([dict(premise="G4", part="RL learns here", policy="tiny_strategy", algorithm="dapo", n=8,
                                sampler="tau1.0", metric="pass@1", step=16, effect=0.205, ci_low=0.1451,
                                ci_high=0.2717, standard_error=0.03, mde=0.0918, min_effect=0.08, min_ci_low=0.05,
                                num_seeds=6, num_problems=96, verdict="supported", rule="r"),
                           dict(premise="G4", part="RL learns here", policy="other", algorithm="dapo", n=8,
                                sampler="tau1.0", metric="pass@1", step=16, effect=0.0, ci_low=0.0, ci_high=0.0,
                                standard_error=0.0, mde=0.0, min_effect=0.08, min_ci_low=0.05, num_seeds=6,
                                num_problems=96, verdict="contradicted", rule="r")])
    claim = dict(figure="none", policy="tiny_strategy", algorithm="dapo", n=8, sampler="ead", baseline="tau1.0",
                 metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.003, num_seeds=6, num_units=576,
                 rule="r", scope="x", rl_learns="supported", over="curve", best_of="", selection="",
                 threshold=float("nan"), baseline_algorithm="", smallest_effect=0.02)
    claims = pd.DataFrame([{**claim, "claim": name, "statement": f"statement {name}", "effect": -0.0012 * i,
                            "ci_low": -0.0079, "ci_high": 0.0047, "mde": 0.0094, "verdict": "inconclusive"}
                           for i, name in enumerate(reversed(positive_control.CLAIM_IDS))])
    block = positive_control.render(PREMISE_VERDICTS.validate(verdicts, "v.csv"), RL_LEARNS.validate(learns, "l.csv"),
                                    CLAIMS.validate(claims, "claims.csv"), commit="855c172", date="2026-11-27",
                                    fingerprint="Fingerprint `89ab`.")
    assert "MDE at 80% power). Fingerprint `89ab`." in block
    rows = [line.split(" | ")[0][2:] for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows == ["", "G1", "G2", "G4", "P1", "P2", "P3", "P4", "P5"]  # the header, then no row without an effect
    assert "| G1 | heat early raises coverage | +8.6 [+4.7, +12.1] | 5.6 | | 1 x 256 | **supported** |" in block
    assert "| G2 | strategy errors are a large share of failures | +97.0 [+96.2, +97.7] |  | | 1 x 256 |" in block
    assert ("| G4 | tau1.0's pass@1, step 16 - step 0 | +20.5 [+14.5, +27.2] | 9.2 | | 6 x 96 | **supported** |"
            in block)
    assert "| P1 | statement P1 | -0.5 [-0.8, +0.5] | 0.9 | 2.0 | 6 x 96 | **inconclusive** |" in block
    assert "commit `855c172`, run 2026-11-27" in block
    with pytest.raises(ValueError, match=r"lacks the positive control's rows \['P3'\]"):
        positive_control.render(verdicts, learns, claims[claims["claim"] != "P3"], commit="c", date="d", fingerprint="")
    # across CPU levels: a verdict that differs at another level is marked not robust, one that holds is not
    from ead.claims.machine_spread import machine_spread as spread_of
    from ead.tables import MACHINE_SPREAD

    claims = CLAIMS.validate(claims, "claims.csv")
    other = claims.assign(verdict=claims["verdict"].where(claims["claim"] != "P3", "supported"))
    spread = MACHINE_SPREAD.validate(spread_of({"avx2": claims, "default": other}))
    marked = positive_control.render(PREMISE_VERDICTS.validate(verdicts, "v.csv"), RL_LEARNS.validate(learns, "l.csv"),
                                     claims, commit="c", date="d", fingerprint="", spread=spread)
    assert "| 6 x 96 | **inconclusive**, not robust (at cpu_level=default: supported) |" in marked
    assert [line.split(" | ")[0][2:] for line in marked.splitlines() if "not robust" in line] == ["P3"]
    swapped = MACHINE_SPREAD.validate(spread_of({"default": other, "avx2": claims}))
    with pytest.raises(ValueError, match=r"the spread table's first run \(default\) is not this run: claim P3"):
        positive_control.render(PREMISE_VERDICTS.validate(verdicts, "v.csv"), RL_LEARNS.validate(learns, "l.csv"),
                                claims, commit="c", date="d", fingerprint="", spread=swapped)


def test_the_machine_spread_block_reads_each_runs_effect_the_spread_and_the_flips_from_the_table():
    """The docs' machine-spread numbers are the spread table's (in points), each run's effect and verdict in the table's
    run order, and the closing sentence names the largest spread and the verdicts that flip; one fingerprint per run."""
    import pandas as pd

    from ead.claims.machine_spread import machine_spread as spread_of
    from ead.tables import CLAIMS, MACHINE_SPREAD

    claim = dict(figure="none", statement="s", policy="tiny_strategy", algorithm="dapo", n=8, sampler="ead",
                 baseline="tau1.0", metric="pass@1", evaluated_with="eval_tau", step=16, standard_error=0.003,
                 mde=0.01, num_seeds=6, num_units=576, smallest_effect=0.02, rule="r", scope="x")

    def claims(rows):
        return CLAIMS.validate(pd.DataFrame([{**claim, "claim": name, "effect": effect, "ci_low": low,
                                              "ci_high": high, "verdict": verdict}
                                             for name, (effect, low, high, verdict) in rows.items()]))

    avx2 = claims({"P1": (-0.009, -0.023, 0.004, "inconclusive"), "P3": (0.007, 0.0004, 0.013, "negligible")})
    default = claims({"P1": (-0.005, -0.02, 0.01, "inconclusive"), "P3": (0.012, 0.004, 0.021, "supported")})
    table = MACHINE_SPREAD.validate(spread_of({"avx2": avx2, "default": default}))
    block = machine_spread.render(table, digests=["aaaa", "bbbb"], commit="abc1234", date="2026-11-28",
                                  what="The positive-control overlay")
    assert "at CPU levels `avx2` (fingerprint `aaaa`), `default` (fingerprint `bbbb`)" in block
    assert "| claim | effect at avx2 | effect at default | spread |" in block
    assert "| P1 | -0.9 | -0.5 | 0.4 | 1.4 | 0.30 | inconclusive / inconclusive | yes |" in block
    assert "| P3 | +0.7 | +1.2 | 0.5 | 0.6 | 0.79 | negligible / supported | no |" in block
    assert "differ between the levels: P3 (of 2)." in block
    with pytest.raises(ValueError, match=r"compares 2 runs \['avx2', 'default'\], but 1 fingerprints"):
        machine_spread.render(table, digests=["aaaa"], commit="c", date="d", what="w")
    assert "Largest spread: 0.5 points (P3), 0.79 of its CI half-width;" in block
    point = claims({"P1": (0.01, 0.01, 0.01, "supported")})  # a CI of zero width has no share
    flat = machine_spread.render(MACHINE_SPREAD.validate(spread_of({"avx2": point, "default": point})),
                                 digests=["a", "b"], commit="c", date="d", what="w")
    assert "| P1 | +1.0 | +1.0 | 0.0 | 0.0 |  | supported / supported | yes |" in flat
    assert "Largest spread: 0.0 points (P1), its CI has zero width; verdicts that differ between the levels: none" \
        in flat
    with pytest.raises(ValueError, match="the spread table has no claim rows"):
        machine_spread.render(table.iloc[:0], digests=[], commit="c", date="d", what="w")


# --- The reference pages say what is true now ------------------------------------------------------------------------

#: The pages that say what is true now and how to use it. TESTBED.md and BENCHMARKS.md are dated logs: an entry records
#: what was measured then (BENCHMARKS.md says so at its top) and is exempt from the checks below.
def reference_pages(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md")), root / "configs" / "README.md"]


#: How the work was organised is no part of a reference page: an issue number ("#15", "issue #28", "(#37)"), a work
#: stop ("stop 41"), a path outside the repository (`../shared/...`). A page's own anchors, `(#runtime)`, do not match.
WORK_ORGANISATION = re.compile(r"#[0-9]{2}\b|\bstop [0-9]+|\.\./shared|[Ii]ssue")


def organisation_words(root: Path) -> list[str]:
    """``file:line: word: the line`` for every issue number, stop or outside path in the reference pages."""
    problems = []
    for path in reference_pages(root):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for match in WORK_ORGANISATION.finditer(line):
                problems.append(f"{path.relative_to(root)}:{number}: {match.group()!r}: {line.strip()[:120]}")
    return problems


def test_the_reference_pages_name_no_issue_stop_or_outside_path():
    problems = organisation_words(ROOT)
    assert not problems, ("history and work organisation belong in TESTBED.md, not in a reference page:\n"
                          + "\n".join(problems))


def test_a_planted_issue_number_is_named_with_file_and_line(tmp_path):
    for page in reference_pages(ROOT):
        target = tmp_path / page.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.read_text())
    clean = set(organisation_words(tmp_path))
    page = tmp_path / "docs" / "method.md"
    lines = page.read_text().splitlines()
    page.write_text("\n".join([*lines, "", "Fixed in stop 41 (issue #12); notes in `../shared/notes.md`.", ""]))
    planted = [problem for problem in organisation_words(tmp_path) if problem not in clean]
    assert [problem.split(": ")[1] for problem in planted] == ["'stop 41'", "'issue'", "'#12'", "'../shared'"]
    assert all(problem.startswith(f"docs/method.md:{len(lines) + 2}: ") for problem in planted), planted


#: A duration or a size. Typed by hand into a reference page it goes stale; a measured one belongs in a marked block
#: written by the program that measured it (BLOCK_SOURCES).
#: A duration or size a reader could take for a measurement, its unit after a space or a hyphen ("40 min",
#: "40-minute", "60-s"): on the pages and in config and script comments.
DURATION_OR_SIZE = re.compile(r"\b\d+(?:\.\d+)?(?:\s*|-)"
                              r"(?:min|minutes?|s|sec|seconds?|h|hours?|GB|GiB|MB|MiB|KB|KiB|kB)\b")
#: On the pages also a share or an effect: a percentage (but the CI level and the power every estimate declares) or
#: a number of points.
SHARE_OR_EFFECT = re.compile(r"\b(?!95%|80%)\d+(?:\.\d+)?\s?%|[+-]?\b\d+(?:\.\d+)?\s?points?\b")
#: Durations and sizes that are settings, not measurements: (page, phrase around the number, why it may be typed).
#: "*" is every reference page. The phrase is matched in the line as written (inline code included).
NOT_MEASURED = [
    ("*", "aims at 55 minutes", "the default profile's time budget, an aim the project states, not a measurement"),
    ("docs/operations.md", "aims at 30 minutes", "the positive-control overlay's time budget, an aim"),
    ("docs/operations.md", "aims at 45 minutes", "the mechanism map overlay's time budget, an aim"),
    ("*", "within 55 minutes", "the title of TESTBED.md's entry on that budget, quoted as a reference"),
    ("*", "24 GiB", "the memory of the machine the project runs on, a fact of its hardware"),
    ("docs/cluster.md", "480 GB", "rl_cell_verl's mem_mb in workflow/profiles/slurm/config.yaml"),
    ("docs/cluster.md", "SIGKILL after 60 s", "the grace period of `slurm_local.sh stop` (workflow/scripts)"),
    ("docs/cluster.md", "`squeue` 300 s", "MinJobAge in the local cluster's slurm.conf (slurm_local.sh)"),
    ("docs/cluster.md", "first poll delay (5 s)", "slurm-init-seconds-before-status-checks of the local profile"),
    ("docs/cluster.md", "the plugin's default, 40 s, adds ~40 s",
     "the SLURM plugin's default setting, and what it adds to each job by its definition"),
    ("docs/cluster.md", "1 CPU and 3 GB per job", "resources of workflow/profiles/slurm_local/config.yaml"),
    ("docs/cluster.md", "2 CPUs / 12 GB", "resources of workflow/profiles/slurm_local/config.yaml"),
    ("docs/cluster.md", "every 0.05 s", "the SLURM test's polling interval (tests/end_to_end/test_slurm_local.py)"),
    ("docs/method.md", "(`grader.timeout_s`, 3 s)", "the config's grader.timeout_s"),
    ("docs/operations.md", "one line every 20 s", "ead.io.LOG_PROGRESS_INTERVAL_S"),
    ("docs/paper-scale.md", "16 GB, 2 h", "paper_model's resources in workflow/profiles/slurm/config.yaml"),
    ("docs/paper-scale.md", "32 GB, 2 h", "paper_data's resources in workflow/profiles/slurm/config.yaml"),
    ("docs/paper-scale.md", "480 GB, 3 days", "rl_cell_verl's resources in workflow/profiles/slurm/config.yaml"),
    ("docs/paper-scale.md", "64 GB, 4-12 h", "the analyses' resources in workflow/profiles/slurm/config.yaml"),
    ("docs/paper-scale.md", "its 60 s reconnect timeout", "Ray's setting for a lost head node"),
    ("docs/paper-scale.md", "30 s after vLLM's first fatal line", "ead.rl.verl.run.Watchdog.fatal_grace_s"),
    ("docs/paper-scale.md", "max(15 min, 5 x its longest gap", "ead.rl.verl.run.Watchdog's stall bound"),
    ("configs/ablations/beyond_the_paper.yaml", "25 + 5 s", "the step-aware decay's formula: 5 times the RL step s"),
    ("configs/config.yaml", "d0 + 5 s", "the step-aware decay's formula: 5 times the RL step s"),
    ("configs/config.yaml", "fit 55 minutes", "the default profile's time budget, an aim"),
    ("workflow/scripts/slurm_local.sh", "after 60 s", "the grace period of `slurm_local.sh stop`, set in the script"),
    ("docs/cluster.md", "10-s timeout", "the SLURM plugin's `scontrol show config` timeout, its setting"),
    ("docs/cluster.md", "90% of its memory", "the local cluster's slurm.conf RealMemory, set by slurm_local.sh"),
    ("docs/operations.md", "40-minute budget", "the test command's budget, an aim"),
    ("docs/operations.md", "60-s reconnect timeout", "Ray's setting for a lost head node"),
    ("docs/operations.md", "at most 2 points", "the main comparison's pre-registered MDE aim"),
    ("docs/operations.md", "same 12% of the response", "the schedule's compression: where tau reaches its floor"),
    ("docs/rl-learns.md", "+8 and +5 points", "G4's declared thresholds (rl_learns.min_effect, min_ci_low)"),
    ("docs/rl-learns.md", "gain of +8 points", "G4's declared threshold"),
    ("docs/rl-learns.md", "at most 2 points", "the comparison's pre-registered MDE aim"),
    ("docs/testbed.md", "gives 2 points", "the claims' declared smallest effect (claims.smallest_effect 0.02)"),
    ("docs/testbed.md", "1-3 points of Pass@16", "the paper's reported gaps, quoted"),
    ("docs/analyses.md", "than 10% are", "the forking analysis's declared threshold for a forking token"),
    ("docs/revisions.md", "fewer than 1% of sequences", "the revised paper's claim, quoted"),
    ("docs/revisions.md", "Fewer than 1% of sequences", "the revised paper's claim, quoted"),
    ("docs/testbed.md", "fewer than 1% of sequences", "the revised paper's claim, quoted"),
    ("configs/ablations/mechanism_map.yaml", "45-minute aim", "the map overlay's time budget, an aim"),
    ("configs/full.yaml", "55-minute aim", "the default profile's time budget, an aim"),
    ("workflow/scripts/slurm_local.sh", "5-s first poll delay", "the local SLURM profile's first poll delay"),
]


def _without_blocks_and_code(text: str) -> list[str]:
    """The lines of a Markdown text with marked blocks, fenced and indented code blocks and inline code blanked out
    (spaces of the same length, so line numbers and columns stay)."""
    text = doc_blocks.BLOCK.sub(lambda match: re.sub(r"[^\n]", " ", match.group()), text)
    lines, fenced, previous_blank, in_indented = [], False, True, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            lines.append("")
        elif fenced:
            lines.append("")
        elif (line.startswith("    ") or line.startswith("\t")) and (previous_blank or in_indented):
            in_indented = True  # an indented code block: starts after a blank line (list items indent by 2 or 3)
            lines.append("")
        else:
            in_indented = False
            lines.append(re.sub(r"`[^`]*`", lambda match: " " * len(match.group()), line))
        previous_blank = not line.strip()
    return lines


def _comments(text: str) -> list[str]:
    """Each line of a YAML file or shell script with everything but its comment blanked out (spaces of the same
    length), so line numbers and columns stay."""
    return [" " * line.index("#") + line[line.index("#"):] if "#" in line and not line.startswith("#!") else ""
            for line in text.splitlines()]


def typed_measurements(root: Path) -> list[str]:
    """``file:line: number: the line`` for every duration or size typed outside marked blocks and code in README.md
    and docs/*.md (and every share or effect there), or in a comment of configs/*.yaml, configs/ablations/*.yaml or
    workflow/scripts/*.sh, unless NOT_MEASURED explains it."""
    problems = []
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    commented = [*sorted((root / "configs").rglob("*.yaml")), *sorted((root / "workflow" / "scripts").glob("*.sh"))]
    for path in [*pages, *commented]:
        name = str(path.relative_to(root))
        raw = path.read_text().splitlines()
        read = _without_blocks_and_code if path in pages else _comments
        for number, (line, original) in enumerate(zip(read(path.read_text()), raw), 1):
            found = [*DURATION_OR_SIZE.finditer(line), *(SHARE_OR_EFFECT.finditer(line) if path in pages else ())]
            for match in sorted(found, key=lambda match: match.start()):
                allowed = any(
                    start <= match.start() and match.end() <= start + len(phrase)
                    for page, phrase, _ in NOT_MEASURED if page in ("*", name)
                    for start in (found.start() for found in re.finditer(re.escape(phrase), original)))
                if not allowed:
                    problems.append(f"{name}:{number}: {match.group()!r}: {original.strip()[:120]}")
    return problems


def test_no_measured_duration_or_size_is_typed_outside_its_block():
    problems = typed_measurements(ROOT)
    assert not problems, ("a measured number belongs in a block its program writes (docs/operations.md, \"Where each "
                          "measured number lives\"), or is reworded without the number; a setting goes into "
                          "NOT_MEASURED with its reason:\n" + "\n".join(problems))


def test_a_planted_measurement_is_found_but_not_inside_a_block_or_code(tmp_path):
    (tmp_path / "docs").mkdir()
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    for page in (ROOT / "docs").glob("*.md"):
        shutil.copy(page, tmp_path / "docs" / page.name)
    clean = set(typed_measurements(tmp_path))
    page = tmp_path / "docs" / "operations.md"
    lines = page.read_text().splitlines()
    page.write_text("\n".join([*lines, "", "The default profile took 31 min; one cell takes 159 s and 2.5 GB; a "
                               "33-minute run, 12% of it waits, +1.4 points.",
                               "", "<!-- planted:begin -->", "Measured: 77 min.", "<!-- planted:end -->", "",
                               "Set `--timeout 95 s` or run:", "", "    sleep 47 s", "", "```", "48 min", "```", ""]))
    planted = [problem for problem in typed_measurements(tmp_path) if problem not in clean]
    assert [problem.split(": ")[1] for problem in planted] == ["'31 min'", "'159 s'", "'2.5 GB'", "'33-minute'",
                                                               "'12%'", "'+1.4 points'"], planted
    assert all(problem.startswith(f"docs/operations.md:{len(lines) + 2}: ") for problem in planted), planted


def test_every_allowed_duration_or_size_is_still_on_its_page():
    """An entry of NOT_MEASURED that no page uses any more is removed, so the list stays short and true."""
    pages = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "configs").rglob("*.yaml"),
             *(ROOT / "workflow" / "scripts").glob("*.sh")]
    texts = {str(path.relative_to(ROOT)): path.read_text() for path in pages}
    unused = [(page, phrase) for page, phrase, _ in NOT_MEASURED
              if not any(phrase in text for name, text in texts.items() if page in ("*", name))]
    assert not unused, f"NOT_MEASURED entries no page uses: {unused}"


# --- What a page says about a profile is the profile's config ---------------------------------------------------------

from ead.settings import ConfigError, load_layered_config, validate_config  # noqa: E402
from ead.settings.rl import expand_grid  # noqa: E402

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
#: The profiles a page may speak of, by the name the docs use, and the files layered over configs/config.yaml.
PROFILE_FILES = {"default": (), "smoke": ("smoke.yaml",), "full": ("full.yaml",), "paper": ("paper.yaml",),
                 "verl_cpu": ("verl_cpu.yaml",), "gpu_smoke": ("gpu_smoke.yaml",)}


def profile_config(profile: str, *overlays: str) -> dict:
    files = [ROOT / "configs" / name for name in ("config.yaml", *PROFILE_FILES[profile], *overlays)]
    return load_layered_config(*files)


def _seeds(text: str) -> list[int]:
    """'0-2' -> [0, 1, 2]; '0, 1' -> [0, 1]; '4' -> [4]."""
    seeds = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds += list(range(int(low), int(high or low) + 1))
    return seeds


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_the_testbed_pages_grid_table_is_the_default_config():
    """docs/testbed.md, "RL training grids on CPU": one row per experiment, with its policies, n and seeds."""
    experiments = profile_config("default")["rl"]["experiments"]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \| [^|]+ \| [^|]+ \| ([\d, ]+) \| ([\d,\- ]+) \|",
                      (ROOT / "docs" / "testbed.md").read_text(), re.MULTILINE)
    assert [name for name, *_ in rows] == list(experiments)
    for name, policies, n, seeds in rows:
        assert [policy.strip() for policy in policies.split(",")] == experiments[name]["policies"], name
        assert [int(value) for value in n.split(",")] == experiments[name]["n"], name
        assert _seeds(seeds) == experiments[name]["seeds"], f"docs/testbed.md: `{name}` seeds {seeds}"


def _seed_counts(profile: str, *overlays: str) -> dict[str, int]:
    return {name: len(spec["seeds"]) for name, spec in profile_config(profile, *overlays)["rl"]["experiments"].items()}


def _all_but(counts: dict[str, int], *names: str) -> int:
    others = {count for experiment, count in counts.items() if experiment not in names}
    assert len(others) == 1, f"the experiments other than {names} differ in seeds: {counts}"
    return others.pop()


def _same(counts: dict[str, int], *names: str) -> int:
    """The one seed count the experiments ``names`` share."""
    shared = {counts[name] for name in names}
    assert len(shared) == 1, f"the experiments {names} differ in seeds: {counts}"
    return shared.pop()


def _new_cells(overlay: str, experiment: str) -> int:
    """Cells the overlay's ``experiment`` adds to the default grid and the overlay's other experiments."""
    rl = profile_config("default", overlay)["rl"]
    return len(expand_grid(rl)) - len(expand_grid(rl, [name for name in rl["experiments"] if name != experiment]))


def _paper_cells() -> tuple[int, int]:
    rl = profile_config("paper")["rl"]
    figures = [name for name in rl["experiments"] if name not in ("decomposition", "primary")]
    return len(expand_grid(rl)), len(expand_grid(rl, figures))


#: Every statement of a seed, cell or problem count a page makes about a profile or overlay: (page, pattern, the
#: numbers the configs give, in the pattern's groups). A statement reworded is updated here too.
COUNT_STATEMENTS = [
    ("docs/operations.md",
     r"`configs/full\.yaml` \((\d+) seeds in every experiment but `primary` and `decomposition`, which have (\d+)",
     lambda: (_all_but(_seed_counts("full"), "primary", "decomposition"),
              _same(_seed_counts("full"), "primary", "decomposition"))),
    ("docs/operations.md",
     r"the CPU grid with (\d+) seeds in every experiment but `primary` and `decomposition`, which have (\d+)",
     lambda: (_all_but(_seed_counts("full"), "primary", "decomposition"),
              _same(_seed_counts("full"), "primary", "decomposition"))),
    ("docs/rl-learns.md", r"`primary`'s (\d+) seeds x (\d+) problems",
     lambda: (_seed_counts("default")["primary"], profile_config("default")["rl"]["eval"]["limit"])),
    ("docs/rl-learns.md", r"`configs/full\.yaml` runs (\d+) seeds in `primary` and (\d+) problems",
     lambda: (_seed_counts("full")["primary"], profile_config("full")["rl"]["eval"]["limit"])),
    ("docs/testbed.md", r"`rl\.eval\.limit` = (\d+) countdown val problems; (\d+) in `configs/full\.yaml`",
     lambda: (profile_config("default")["rl"]["eval"]["limit"], profile_config("full")["rl"]["eval"]["limit"])),
    ("docs/testbed.md", r"the sharpened policy, n = 8, seeds (\d+)-(\d+)\)",
     lambda: (lambda seeds: (seeds[0], seeds[-1]))(
         profile_config("default", "ablations/beyond_the_paper.yaml")["rl"]["experiments"]["beyond"]["seeds"])),
    ("docs/testbed.md", r"tau 1\.0, all on seeds (\d+)-(\d+)",
     lambda: (lambda seeds: (seeds[0], seeds[-1]))(
         profile_config("default", "ablations/d_max_sweep.yaml")["rl"]["experiments"]["d_max_sweep"]["seeds"])),
    ("docs/testbed.md", r"experiment `measured`: (\d+) seeds",
     lambda: (_seed_counts("default", "ablations/measured_schedule.yaml")["measured"],)),
    ("docs/revisions.md", r"already run, on (\d+) seeds; the beyond overlay runs (\d+)",
     lambda: (_seed_counts("default", "ablations/d_max_sweep.yaml")["d_max_sweep"],
              _seed_counts("default", "ablations/beyond_the_paper.yaml")["beyond"])),
    ("docs/revisions.md", r"are the default's cells, so it adds (\d+) cells",
     lambda: (_new_cells("ablations/d_max_sweep.yaml", "d_max_fixed"),)),
    ("docs/paper-scale.md", r"(\d+) cells \((\d+) drawn by the paper's figures",
     _paper_cells),
]


@pytest.mark.parametrize(("page", "pattern", "expected"), COUNT_STATEMENTS,
                         ids=[f"{page}:{pattern[:40]}" for page, pattern, _ in COUNT_STATEMENTS])
def test_a_count_a_page_states_is_the_configs(page, pattern, expected):
    match = re.search(pattern, _one_line((ROOT / page).read_text()))
    assert match, f"{page} no longer says /{pattern}/: update COUNT_STATEMENTS with the new wording"
    assert tuple(int(group) for group in match.groups()) == tuple(expected()), f"{page}: {match.group()}"


def test_the_paper_profile_is_one_seed_per_cell_as_its_page_says():
    assert "one seed each" in _one_line((ROOT / "docs" / "paper-scale.md").read_text())
    assert set(_seed_counts("paper").values()) == {1}


#: Pages whose "`key` = value" statements are about one profile's config.
CONFIG_VALUE_PAGES = {"docs/testbed.md": "default", "docs/rl-learns.md": "default", "docs/analyses.md": "default",
                      "docs/method.md": "default", "docs/operations.md": "default", "docs/results.md": "default",
                      "docs/paper-scale.md": "paper"}


def _config_value(config: dict, dotted: str):
    value = config
    for key in dotted.split("."):
        value = value[key]
    return value


@pytest.mark.parametrize("page", sorted(CONFIG_VALUE_PAGES))
def test_a_config_value_a_page_states_is_the_profiles(page):
    config = profile_config(CONFIG_VALUE_PAGES[page])
    stated = re.findall(r"`([a-z_]+(?:\.[a-z_0-9]+)+)` = (-?[\d.]+(?:e-?\d+)?)\b", (ROOT / page).read_text())
    wrong = []
    for key, value in stated:
        try:
            actual = _config_value(config, key)
        except (KeyError, TypeError):
            wrong.append(f"{key} = {value}: no such key in the {CONFIG_VALUE_PAGES[page]} profile")
            continue
        if float(value.rstrip(".")) != float(actual):
            wrong.append(f"{key} = {value}: the {CONFIG_VALUE_PAGES[page]} profile has {actual}")
    assert not wrong, f"{page}: " + "; ".join(wrong)


def test_the_paper_pages_ead_block_is_paper_yamls():
    """docs/paper-scale.md, "The grid": the `ead` keys the paper profile sets itself, and their values."""
    import yaml

    own = yaml.safe_load((ROOT / "configs" / "paper.yaml").read_text())["ead"]
    match = re.search(r"the `ead` block sets only (.+?); the rest is config\.yaml's",
                      _one_line((ROOT / "docs" / "paper-scale.md").read_text()))
    assert match, "docs/paper-scale.md no longer says which keys the paper profile's `ead` block sets"
    stated = dict(re.findall(r"`(\w+): ([\d.]+)`", match.group(1)))
    assert {key: float(value) for key, value in stated.items()} == {key: float(value) for key, value in own.items()}


def test_every_figure_a_page_names_is_in_the_registry():
    named = {}
    for path in reference_pages(ROOT):
        for name in re.findall(r"figures/(\w+)\.", path.read_text()):
            named.setdefault(name, str(path.relative_to(ROOT)))
    unknown = {name: page for name, page in named.items() if name not in FIGURES}
    assert not unknown, f"figures not in ead.workflow.FIGURES: {unknown}"
    listed = re.findall(r"^\| `figures/(\w+)\.", (ROOT / "docs" / "results.md").read_text(), re.MULTILINE)
    listed += [name for row in re.findall(r"^\| `figures/\w+\.\{png,pdf\}`, (.+?) \|", (ROOT / "docs" / "results.md")
                                          .read_text(), re.MULTILINE) for name in re.findall(r"figures/(\w+)\.", row)]
    assert sorted(listed) == sorted(FIGURES), "docs/results.md's table lists each registry figure once"


def test_a_profiles_command_on_a_page_has_the_readmes_targets():
    """The targets of `snakemake ... --configfile configs/<profile>.yaml` wherever a page gives them are the README
    profiles table's (tools/readme_tables.py)."""
    targets = {profile.configfile: profile.targets for profile in readme_tables.PROFILES if profile.configfile}
    command = re.compile(r"snakemake((?: +(?:figures|results)/\S+)+) +--cores all +--configfile (configs/\w+\.yaml)")
    wrong = []
    for path in reference_pages(ROOT):
        text = _one_line(path.read_text().replace("\\\n", " ").replace("`", " "))
        for match in command.finditer(text):
            stated, configfile = tuple(match.group(1).split()), match.group(2)
            if configfile in targets and stated != targets[configfile]:
                wrong.append(f"{path.relative_to(ROOT)}: {configfile}: {stated} (README: {targets[configfile]})")
    assert not wrong, "\n".join(wrong)


def _overlay_matrix() -> tuple[list[str], dict[str, dict[str, bool]]]:
    """configs/README.md, "Which overlay runs over which profile": the profiles and, per overlay, yes / refused."""
    text = (ROOT / "configs" / "README.md").read_text().split("## Which overlay runs over which profile")[1]
    header = re.search(r"^\| overlay \|(.+)\|$", text, re.MULTILINE)
    profiles = [name.strip() for name in header.group(1).split("|")]
    rows = re.findall(r"^\| `(\w+\.yaml)` \|(.+)\|$", text, re.MULTILINE)
    return profiles, {overlay: dict(zip(profiles, (cell.strip() == "yes" for cell in cells.split("|"))))
                      for overlay, cells in rows}


def test_the_overlay_table_has_every_overlay_and_profile():
    profiles, matrix = _overlay_matrix()
    assert profiles == list(PROFILE_FILES)
    assert sorted(matrix) == sorted(path.name for path in (ROOT / "configs" / "ablations").glob("*.yaml"))


def test_every_overlay_header_says_where_its_runtime_was_measured():
    """A reader choosing an overlay asks first how long it takes: each header has a `# Runtime:` line naming the
    measured entry (a TESTBED.md or docs heading, quoted, which must exist) or saying it was never timed."""
    headings = {path: [line.lstrip("#").strip() for line in path.read_text().splitlines() if line.startswith("#")]
                for path in [ROOT / "TESTBED.md", ROOT / "docs" / "operations.md"]}
    wrong = []
    for overlay in sorted((ROOT / "configs" / "ablations").glob("*.yaml")):
        header = "".join(line[1:] for line in overlay.read_text().splitlines() if line.startswith("#"))
        runtime = re.search(r"Runtime: (.*?)(?:\.\s|$)", " ".join(header.split()))
        if runtime is None:
            wrong.append(f"{overlay.name}: no '# Runtime:' line")
            continue
        for quoted in re.findall(r'"([^"]+)"', runtime.group(1)):
            if not any(quoted in heading for lines in headings.values() for heading in lines):
                wrong.append(f"{overlay.name}: Runtime names \"{quoted}\", which no heading of TESTBED.md or "
                             "docs/operations.md holds")
        if not re.findall(r'"([^"]+)"', runtime.group(1)) and "never" not in runtime.group(1):
            wrong.append(f"{overlay.name}: Runtime names no measured entry and does not say it was never timed")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow  # 66 layered and validated configs: the docs' check, in the whole suite, not an edit's
@pytest.mark.parametrize("profile", list(PROFILE_FILES))
def test_the_overlay_table_is_what_the_config_loader_accepts(profile):
    wrong = []
    for overlay, row in _overlay_matrix()[1].items():
        try:
            validate_config(profile_config(profile, f"ablations/{overlay}"), SCHEMA)
            valid = True
        except ConfigError:
            valid = False
        if valid != row[profile]:
            wrong.append(f"{overlay} over {profile}: the table says {'yes' if row[profile] else 'refused'}, "
                         f"the loader {'accepts' if valid else 'refuses'} it")
    assert not wrong, "configs/README.md, \"Which overlay runs over which profile\":\n" + "\n".join(wrong)
