"""Discover: puzzle id -> source files -> module -> the Puzzle it declares."""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from grader.spec import Puzzle

PUZZLE_FILE = re.compile(r"^p(\d\d)_[a-z0-9_]+\.py$")


def course_root() -> Path:
    """The folder that holds puzzles/ and solutions/ (the repository root)."""
    return Path(__file__).resolve().parent.parent


def puzzle_files(folder: Path) -> dict[str, Path]:
    """Puzzle id -> file, for every ``pNN_name.py`` in ``folder``."""
    found = {}
    for path in sorted(folder.glob("p*.py")):
        match = PUZZLE_FILE.match(path.name)
        if match:
            found[match.group(1)] = path
    return found


def puzzle_id_of(path: Path) -> str | None:
    match = PUZZLE_FILE.match(path.name)
    return match.group(1) if match else None


def normalize_id(text: str) -> str | None:
    """'8', '08' and 'p08' all mean puzzle 08; anything else is not an id."""
    match = re.fullmatch(r"p?(\d{1,2})", text.strip().lower())
    return f"{int(match.group(1)):02d}" if match else None


# The line after each notebook cell in a module built from %%puzzle cells (grader.frontends.notebook.module_text): the
# tracer runs such a module cell by cell, as a notebook does (grader.trace.learner.load_learner).
CELL_END = "# %% end of a %%puzzle cell"


def module_name(path: Path) -> str:
    """The private name a graded file is imported under (never puzzles' or solutions' own)."""
    return f"_graded_{path.parent.name}_{path.stem}_{abs(hash(str(path.resolve())))}"


def load_module(path: Path) -> ModuleType:
    """Import a Python file under a private name (so puzzles/ and solutions/ never collide).

    The module is registered in sys.modules while it executes: TileLang's decorator reads the
    function's source through ``inspect``, which needs it.
    """
    name = module_name(path)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def load_puzzle(module: ModuleType) -> Puzzle:
    factory = getattr(module, "puzzle", None)
    if not callable(factory):
        raise AttributeError(f"{module.__file__} has no puzzle() function")
    puzzle = factory()
    if not isinstance(puzzle, Puzzle):
        raise TypeError(f"puzzle() in {module.__file__} returned {type(puzzle).__name__}, not a Puzzle")
    from grader.budget import with_budget

    return with_budget(puzzle)  # every case's simulate decided: the marks, then the budget


# A TODO region of a puzzle file: what a learner fills in, and the only part a stub differs in.
REGION = re.compile(r"^[ \t]*# TODO begin[^\n]*\n.*?^[ \t]*# TODO end[^\n]*$", re.S | re.M)


def graded_kernels(text: str) -> list[str]:
    """The graded kernels' names in teaching order: the ``Kernel(function="...")`` of puzzle().

    A module that declares none falls back to its ``@tilelang.jit`` functions.
    """
    tree = ast.parse(text)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Kernel":
            for keyword in node.keywords:
                if keyword.arg == "function" and isinstance(keyword.value, ast.Constant):
                    names.append(str(keyword.value.value))
    if names:
        return list(dict.fromkeys(names))
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and any(_is_jit(d) for d in n.decorator_list)]


def _is_jit(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return getattr(target, "attr", getattr(target, "id", "")) == "jit"


def chosen_kernels(kernels: Sequence[str], names: str, exact: bool = False) -> list[str]:
    """The kernels ``-k NAMES`` selects, in ``kernels``' order. Each comma-separated name that equals a kernel's
    name selects that kernel alone; any other selects every kernel whose name contains it (none with ``exact``).
    No name at all selects every kernel."""
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    if not wanted:
        return list(kernels)
    picked: set[str] = set()
    for name in wanted:
        if name in kernels:
            picked.add(name)
        elif not exact:
            picked.update(k for k in kernels if name in k)
    return [k for k in kernels if k in picked]


def declared_cases(text: str) -> dict[str, tuple[str, ...] | None]:
    """Each graded kernel's case names, read from a spec module's text without running it: the ``Case("name",
    ...)`` calls in its ``Kernel(function=..., cases=...)``, looking into a helper function of the module that
    ``cases=`` calls. None for a kernel whose cases are not all written as literals (nothing can be said of
    them here)."""
    tree = ast.parse(text)
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    found: dict[str, tuple[str, ...] | None] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and _called(node) == "Kernel"):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        function = keywords.get("function")
        if not (isinstance(function, ast.Constant) and isinstance(function.value, str)):
            continue
        cases = keywords.get("cases")
        found[function.value] = (_case_names(cases, functions) or None) if cases is not None else None
    return found


def _called(node: ast.Call) -> str:
    return getattr(node.func, "id", getattr(node.func, "attr", ""))


def _case_names(expression: ast.AST, functions: dict[str, ast.AST], depth: int = 0) -> tuple[str, ...] | None:
    """The literal case names under ``expression`` (and in the module's functions it calls), () for none, None
    where a case's name is not a literal."""
    names: list[str] = []
    todo = [expression]
    while todo:
        node = todo.pop(0)
        if isinstance(node, ast.Call) and _called(node) == "Case":
            first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                return None
            names.append(first.value)
            continue  # its arguments (sizes from a helper) hold no case
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions and depth < 3:
            inner = _case_names(functions[node.func.id], functions, depth + 1)
            if inner is None:
                return None
            names += inner
        todo.extend(ast.iter_child_nodes(node))
    return tuple(dict.fromkeys(names))
