"""The package's layers (``docs/architecture.md``): every import, wherever it stands, goes downward,
and no module imports itself back through others."""

from __future__ import annotations

import ast
import re
import shutil
from pathlib import Path

import pytest

import grammar_decode as gd

PACKAGE = Path(gd.__file__).resolve().parent
ARCHITECTURE = Path(__file__).resolve().parent.parent / "docs" / "architecture.md"


def module_files(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module of the package at ``root``."""
    return {".".join(("grammar_decode",) + p.relative_to(root).with_suffix("").parts).removesuffix(".__init__"): p
            for p in root.rglob("*.py")}


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports, from every ``import`` statement in the file:
    module level, function bodies and ``TYPE_CHECKING`` blocks alike."""
    modules = module_files(root)
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            for target in targets:
                if target in modules and target != name and not name.startswith(target + "."):
                    edges[name].add(target)
    return edges


def unit_of(module: str) -> str:
    """The layer unit a module belongs to: the first name below the package (``__main__`` is the
    command line's), ``grammar_decode`` for the package's ``__init__``."""
    parts = module.split(".")
    if len(parts) == 1:
        return "grammar_decode"
    return "cli" if parts[1] == "__main__" else parts[1]


def allowed_imports(page: Path = ARCHITECTURE) -> dict[str, set[str]]:
    """The table of ``docs/architecture.md``: unit → the units it may import."""
    table: dict[str, set[str]] = {}
    for line in page.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\| `([a-z_]+)` \|[^|]*\|([^|]*)\|", line.strip())
        if match:
            table[match.group(1)] = {u.strip() for u in match.group(2).split(",") if u.strip()}
    return table


def upward_imports(root: Path, table: dict[str, set[str]]) -> list[str]:
    """Every import from one unit into another that the table does not allow."""
    found = []
    for module, targets in sorted(import_graph(root).items()):
        source = unit_of(module)
        for target in sorted(targets):
            if unit_of(target) != source and unit_of(target) not in table.get(source, set()):
                found.append(f"{module} imports {target}")
    return found


def cycles(edges: dict[str, set[str]]) -> list[str]:
    """The first cycle of the module graph, as a path (empty when there is none)."""
    state: dict[str, int] = {}
    found: list[str] = []

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(edges[module]):
            if found:
                return
            if state.get(target) == 1:
                found.extend(trail + [module, target])
                return
            if target not in state:
                visit(target, trail + [module])
        state[module] = 2

    for module in sorted(edges):
        if module not in state and not found:
            visit(module, [])
    return found


def test_the_table_names_every_unit_of_the_package() -> None:
    table = allowed_imports()
    units = {unit_of(m) for m in module_files(PACKAGE)}
    assert units == set(table), f"units without a row: {units - set(table)}; rows without a unit: {set(table) - units}"
    for unit, targets in table.items():
        assert targets <= set(table), f"{unit} may import unknown units {targets - set(table)}"


def test_every_import_goes_downward() -> None:
    assert upward_imports(PACKAGE, allowed_imports()) == []


def test_no_import_cycles_not_even_inside_function_bodies() -> None:
    """As a graph over modules (inside a unit too), the imports have no cycle."""
    assert cycles(import_graph(PACKAGE)) == []


def test_the_allowed_units_form_no_cycle() -> None:
    table = allowed_imports()
    assert cycles({unit: targets - {unit} for unit, targets in table.items()}) == []


@pytest.mark.parametrize("where, statement, expected", [
    # a front end reaching for the engine, inside a function body
    ("frontends/regex.py", "def _upward():\n    from ..engine.recognizer import Recognizer\n",
     "grammar_decode.frontends.regex imports grammar_decode.engine.recognizer"),
    # the vocabulary reaching for the masks
    ("vocab/trie.py", "from ..masking import slices\n", "grammar_decode.vocab.trie imports grammar_decode.masking"),
    # the reference reaching for the fast path, under TYPE_CHECKING
    ("oracle/masks.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..masking.walk import lexeme_walk\n",
     "grammar_decode.oracle.masks imports grammar_decode.masking.walk"),
])
def test_an_upward_import_is_caught(tmp_path: Path, where: str, statement: str, expected: str) -> None:
    copy = tmp_path / "grammar_decode"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / where, "a", encoding="utf-8") as handle:
        handle.write("\n\n" + statement)
    assert expected in upward_imports(copy, allowed_imports())


def test_an_import_cycle_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "grammar_decode"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with open(copy / "ir" / "kinds.py", "a", encoding="utf-8") as handle:
        handle.write("\n\ndef _back():\n    from . import regex\n")
    assert cycles(import_graph(copy))
