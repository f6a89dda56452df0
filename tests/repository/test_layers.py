"""The package's layers hold: no import runs back up a layer and no modules import each other in a circle.

The layers are the ones `src/ead/__init__.py` draws (docs/architecture.md, "Layers", repeats them); this test reads them
from that docstring, so the drawing and the code cannot drift apart. Imports inside functions count too.
"""

import ast
import re
from pathlib import Path

import ead

SRC = Path(ead.__file__).resolve().parent


def drawn_layers(drawing: str) -> dict[str, int]:
    """Top-level package or module of ead -> its layer (0 = bottom) in a drawing: one row per layer, top first, its
    names before the description; a line indented deeper than the rows continues the row above's description."""
    lines = [line for line in drawing.splitlines() if line.strip()]
    indent = min(len(line) - len(line.lstrip()) for line in lines)
    rows = [line.strip() for line in lines if len(line) - len(line.lstrip()) == indent]
    result = {}
    for height, row in enumerate(reversed(rows)):
        names = re.sub(r"\([^)]*\)", "", re.split(r"\s{2,}", row)[0])
        result.update({name.strip(): height for name in names.split(",")})
    return result


def layers() -> dict[str, int]:
    """The layers the ead docstring draws."""
    drawing = ead.__doc__.split("Layers", 1)[1].split("\n\n", 1)[1]
    return drawn_layers(drawing.split("\n\n", 1)[0])


def test_docs_draw_the_same_layers_as_the_package():
    """docs/architecture.md's "Layers" block repeats the drawing the checks read from the ead docstring."""
    page = (SRC.parents[1] / "docs" / "architecture.md").read_text()
    block = page.split("## Layers", 1)[1].split("```", 2)[1]
    assert drawn_layers(block) == layers()


def module_name(path: Path) -> str:
    parts = ["ead", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_in(source: str, package: str, modules: set[str]) -> set[str]:
    """The modules of `modules` that code in `package` imports (absolute or relative, anywhere in the file)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
    return found & modules


def import_graph() -> dict[str, set[str]]:
    files = {module_name(path): path for path in SRC.rglob("*.py")}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        graph[name] = imports_in(path.read_text(), package, set(files)) - {name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every import circle a depth-first walk meets (each as the modules along it, first repeated at the end)."""
    found, done = [], set()

    def visit(module, path):
        for target in sorted(graph.get(module, ())):
            if target in path:
                found.append(path[path.index(target):] + [target])
            elif target not in done:
                visit(target, path + [target])
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module, [module])
    return found


def upward_imports(graph: dict[str, set[str]], layer: dict[str, int]) -> list[str]:
    top = lambda module: module.split(".")[1]  # noqa: E731
    return sorted(f"{source} -> {target}" for source, targets in graph.items() for target in targets
                  if source != "ead" and layer[top(target)] > layer[top(source)])


def test_every_top_level_package_and_module_has_a_layer():
    graph = import_graph()
    assert {module.split(".")[1] for module in graph if module != "ead"} - set(layers()) == set(), \
        "add these to the layers drawn in src/ead/__init__.py"


def test_no_import_runs_back_up_a_layer():
    assert upward_imports(import_graph(), layers()) == []


def test_no_modules_import_each_other_in_a_circle():
    assert circles(import_graph()) == []


def test_the_checks_see_an_upward_import_a_relative_import_and_a_circle():
    modules = {"ead.plots", "ead.plots.style", "ead.schedule", "ead.rl.train"}
    assert imports_in("def f():\n    from ...plots import style\n", "ead.rl.verl", modules) == {
        "ead.plots", "ead.plots.style"}
    assert imports_in("import ead.schedule\nfrom . import train\n", "ead.rl", modules) == {"ead.schedule",
                                                                                            "ead.rl.train"}
    graph = {"ead.schedule": {"ead.plots.style"}, "ead.plots.style": {"ead.schedule"}}
    assert upward_imports(graph, layers()) == ["ead.schedule -> ead.plots.style"]
    assert circles(graph) == [["ead.plots.style", "ead.schedule", "ead.plots.style"]]
