"""The grader's layout rules (grader/__init__.py), checked on its import graph.

The graph counts every import statement, function-local ones included (import-linter, run by .ci/run, reads
the same rules from .importlinter but skips none of them either); only imports under ``if TYPE_CHECKING:``
are left out, since they never run.
"""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADER = ROOT / "grader"

# The names notebooks and nbgrader configs already written import; each is only an alias of a moved module.
ALIASES = {"grader.nb"}
ENTRY = {"grader.__main__"}  # `python -m grader`: dispatches to a front end or a course tool
DATA_MODEL = {
    "grader",
    "grader.tir",
    "grader.spec",
    "grader.outcome",
    "grader.settings",
    "grader.discover",
    "grader.devices",
    "grader.hints",
    "grader.concepts",
    "grader.budget",
    "grader.verified",
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in GRADER.rglob("*.py")}


def _type_checking_lines(tree: ast.Module) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(name: str) -> set[str]:
    """The grader modules ``name`` imports anywhere in its text (``from pkg import mod`` counts as mod)."""
    path = MODULES[name]
    tree = ast.parse(path.read_text())
    skipped = _type_checking_lines(tree)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", 0) in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            targets = targets or [base]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def layer(name: str) -> str:
    if name in ENTRY:
        return "entry"
    if name in DATA_MODEL:
        return "model"
    parts = name.split(".")
    return parts[1] if len(parts) > 1 else "model"


def test_the_graph_sees_function_local_imports():
    # grade_case imports the bench inside a function: the graph must hold that edge, or it proves nothing.
    assert "grader.pipeline.bench" in GRAPH["grader.pipeline.grade"]
    assert "grader.processes.judge" in GRAPH["grader.processes.supervisor"]


def test_no_module_imports_another_in_a_cycle():
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(GRAPH):
        if name not in index:
            visit(name)
    assert cycles == []


def test_no_trusted_module_imports_the_untrusted_tracer():
    """grader.trace imports the learner's file; code outside it never imports it, so nothing a learner's
    module does to grader.trace's module state can reach a verdict."""
    offenders = {
        name: sorted(t for t in targets if t.startswith("grader.trace"))
        for name, targets in GRAPH.items()
        if not name.startswith("grader.trace")
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_the_tracer_process_is_started_by_name_only_where_it_is_started():
    """The two places that start a tracer name its module instead of importing it: the cold command line and
    the warm fork. Anything else that names it is a new way into the untrusted side, to be looked at."""
    naming = sorted(
        name
        for name, path in MODULES.items()
        if not name.startswith("grader.trace") and '"grader.trace.' in path.read_text()
    )
    assert naming == ["grader.frontends.warm_server", "grader.processes.tracing"]


LOWER = {
    # layer: the layers it may import (and itself)
    "model": {"model"},
    "i18n": {"model", "i18n"},
    "pipeline": {"model", "pipeline"},
    "trace": {"model", "pipeline", "trace"},
    "processes": {"model", "pipeline", "processes"},
    "teaching": {"model", "i18n", "pipeline", "teaching"},  # i18n: the pictures' labels in the notebook's language
    "course": {"model", "i18n", "pipeline", "course"},
    # the warm server becomes `python -m grader` (the entry) in each check it forks
    "frontends": {"model", "i18n", "pipeline", "processes", "teaching", "entry", "frontends"},
    "nbgrader": {"model", "i18n", "pipeline", "processes", "frontends", "course", "nbgrader"},
}


@pytest.mark.parametrize("name", sorted(set(MODULES) - ALIASES - ENTRY))
def test_every_module_imports_only_its_own_layer_or_lower(name):
    allowed = LOWER[layer(name)]
    above = sorted(t for t in GRAPH[name] if t not in ALIASES and layer(t) not in allowed)
    assert above == [], f"{name} ({layer(name)}) imports {above}"


def test_the_learners_alias_imports_the_notebook_front_end_and_is_the_only_one():
    import grader.frontends.notebook
    import grader.nb

    assert grader.nb is grader.frontends.notebook
    assert hasattr(grader.nb, "check") and hasattr(grader.nb, "load_ipython_extension")
    # The other old names (nbgrader_judge, pictures, experiments, layouts) had no user and were removed.
    assert {path.stem for path in (ROOT / "grader").glob("*.py")} & {
        "nbgrader_judge",
        "pictures",
        "experiments",
        "layouts",
    } == set()


def test_no_grader_module_imports_course_content():
    """The grader reads puzzles and solutions as files (grader.discover), never as imports."""
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("solutions", "puzzles"):
                pytest.fail(f"{name} imports {node.module}")
            imported = [a.name.split(".")[0] for a in node.names] if isinstance(node, ast.Import) else []
            if any(top in ("solutions", "puzzles") for top in imported):
                pytest.fail(f"{name} imports course content")


def test_the_pipeline_reads_no_environment_and_prints_nothing():
    """The steps are functions over data: the processes read the environment and the front ends print."""
    for name, path in MODULES.items():
        if not name.startswith("grader.pipeline"):
            continue
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
                pytest.fail(f"{name}:{node.lineno} reads the environment")
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("print", "input"):
                pytest.fail(f"{name}:{node.lineno} prints")


# Imports of another grader module's private names that stay, each with why ((importer, "module._name") pairs).
PRIVATE_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {}


def _dotted(node: ast.AST) -> str:
    """``a.b.c`` of a Name/Attribute chain, "" for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else ""
    return ""


def private_names_used(name: str, text: str | None = None) -> set[str]:
    """The ``_private`` names of other grader modules that module ``name`` (its file's text, else ``text``)
    imports (``from grader.x import _y``) or reads off an imported grader module (``x._y``), as "grader.x._y"."""
    path = MODULES.get(name, GRADER / "frontends" / "probe.py")
    tree = ast.parse(path.read_text() if text is None else text)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bound: dict[str, str] = {}  # a local name -> the grader module it is
    found: set[str] = set()

    def private(attr: str) -> bool:
        return attr.startswith("_") and not attr.startswith("__")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    bound[alias.asname or alias.name] = alias.name
                    if alias.asname is None:  # import grader.x.y binds grader, read as the dotted chain
                        bound[alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                if f"{base}.{alias.name}" in MODULES:
                    bound[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif base in MODULES and base != name and private(alias.name):
                    found.add(f"{base}.{alias.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            owner = bound.get(_dotted(node.value), "")
            if owner and owner != name:
                found.add(f"{owner}.{node.attr}")
    return found


def test_the_private_name_check_sees_both_forms():
    text = (
        "from grader.frontends.notebook import _magics, check\nfrom grader.frontends import notebook as nb\n"
        "from . import render as r\nimport grader.frontends.render\n"
        "nb._results({})\nnb.__doc__\ngrader.frontends.render._wrap\nr._pad\n"
    )
    found = private_names_used("grader.frontends.probe", text)
    assert found == {
        "grader.frontends.notebook._magics",
        "grader.frontends.notebook._results",
        "grader.frontends.render._wrap",
        "grader.frontends.render._pad",
    }


def test_no_module_uses_another_modules_private_names():
    """A ``_name`` is its module's own: a front end (or anything else) that needs another module's helper gets a
    public name for it, so moving or changing a private helper never breaks a caller elsewhere."""
    used = {(name, target) for name in MODULES for target in private_names_used(name)}
    assert {pair for pair in used if pair not in PRIVATE_IMPORTS_ALLOWED} == set()
    assert set(PRIVATE_IMPORTS_ALLOWED) <= used, "an allowed exception no longer happens: remove it"


# The modules that start a grading run for a front end. They hand it a typed request (settings.GradeRequest, made
# from grader.processes.launch.check_options): no flag crosses between a front end and the grading run, so none
# may be written here by hand.
STARTS_GRADING = (
    "grader.processes.launch",
    "grader.frontends.notebook",
    "grader.frontends.planted",
    "grader.frontends.watch",
    "grader.frontends.warm",
    "grader.frontends.warm_server",
    "grader.nbgrader.judge",
    "grader.nbgrader.shards",
)


def grading_flags_written(name: str) -> list[str]:
    """The string constants in module ``name`` that are a grading option's flag, or one with its value."""
    from grader import settings

    flags = {flag for option in settings.OPTIONS for flag in (option.cli, option.pytest) if flag}
    tree = ast.parse(MODULES[name].read_text())
    # a module's own command line (argparse's add_argument) declares its flags; those are not the grader's
    declared = {
        id(arg)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "add_argument"
        for arg in call.args
    }
    found = []
    for node in ast.walk(tree):
        if id(node) in declared:
            continue
        parts = node.values if isinstance(node, ast.JoinedStr) else [node]
        first = parts[0] if parts else None
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            text = first.value
            if text in flags or any(text.startswith(f"{flag}=") for flag in flags):
                found.append(f"{name}:{node.lineno}: {text!r}")
    return sorted(set(found))  # an f-string's first part is also walked as a constant of its own


def test_the_check_flags_are_written_in_one_place():
    assert all(name in MODULES for name in STARTS_GRADING)
    assert [found for name in STARTS_GRADING for found in grading_flags_written(name)] == []


def test_the_flag_check_sees_a_flag_written_by_hand(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    planted = tmp_path / "front.py"
    planted.write_text('argv = ["--bench", f"--param={1}", "-k", "text with --case in it"]\n')
    monkeypatch.setitem(MODULES, "front", planted)
    assert grading_flags_written("front") == ["front:1: '--bench'", "front:1: '--param='", "front:1: '-k'"]
    planted.write_text('p.add_argument("--json", action="store_true")\n')  # its own command line: not the grader's
    assert grading_flags_written("front") == []


def calls_of(name: str, dotted: str) -> list[int]:
    """The lines where module ``name`` calls ``dotted`` (e.g. ``pytest.main``), by that spelling or its last part
    imported alone."""
    tree = ast.parse(MODULES[name].read_text())
    head, _, last = dotted.rpartition(".")
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            spelled = ast.unparse(func)
            if spelled == dotted or (spelled == last and head and _imports_from(tree, head, last)):
                lines.append(node.lineno)
    return lines


def _imports_from(tree: ast.AST, module: str, name: str) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and node.module == module and any(a.name == name for a in node.names)
        for node in ast.walk(tree)
    )


def test_one_entry_point_grades():
    """The route, pinned: only grader.frontends.grading runs pytest over graded files; the command line calls its
    ``run``, and every other front end reaches it through grader.processes.launch (grade or grade_request), whose
    child runs it by name. No front end starts ``python -m grader`` for a check."""
    runs_pytest = {name for name in MODULES if name.startswith("grader.") and calls_of(name, "pytest.main")}
    assert runs_pytest == {"grader.frontends.grading"}
    assert calls_of("grader.frontends.cli", "grading.run")
    started_by_name = {
        name
        for name in MODULES
        if name.startswith("grader.") and '"grader.frontends.grading"' in MODULES[name].read_text()
    }
    assert started_by_name == {"grader.processes.launch"}
    starts = {name for name in STARTS_GRADING if name != "grader.processes.launch"}
    through_launch = {
        name
        for name in starts
        if any(calls_of(name, f"{prefix}{call}") for prefix in ("launch.", "") for call in ("grade", "grade_request"))
    }
    # the warm client and server carry a request launch made; shards reach it through nbgrader's JudgeChecks
    assert through_launch == starts - {
        "grader.frontends.warm",
        "grader.frontends.warm_server",
        "grader.nbgrader.shards",
    }
    for name in starts - {"grader.nbgrader.shards"}:  # a shard starts nbgrader (autograde-shard), not a check
        text = MODULES[name].read_text()
        assert '"grader", *' not in text and 'hermetic.command("grader"' not in text, name


def test_the_typed_request_crosses_a_process_boundary_unchanged():
    """A front end's request survives its JSON (the cold child's stdin, the warm server's socket), and the command
    line's flags make the same options a front end types."""
    from grader import settings
    from grader.frontends import cli
    from grader.processes.launch import check_options

    options = check_options(["gemv"], 120.0, device="cpu", cases="square_256", bench=True, params=("BLOCK_N=64",))
    request = settings.GradeRequest((("08", str(ROOT / "solutions" / "p08_matrix.py")),), options)
    assert settings.GradeRequest.from_dict(json.loads(json.dumps(request.to_dict()))) == request
    argv = ["08", "--solutions", "-k", "gemv", "--exact", "--device", "cpu", "--case", "square_256", "--bench"]
    typed = cli.request_of([*argv, "--param", "BLOCK_N=64"])
    assert typed.targets == request.targets
    assert typed.options == replace(options, timeout=typed.options.timeout, quiet=False, full=True)
    assert options.timeout == settings.case_timeout(120.0) and options.kernels_exact


def status_literals(name: str) -> list[str]:
    """Comparisons in module ``name`` of a case's status (``x.status``, ``x.get("status")``, ``x["status"]``) with a
    verdict spelled as text: Status.* says which verdict, and a renamed one cannot be missed."""
    from grader.outcome import Status

    words = {str(status) for status in Status}

    def is_status(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return node.attr == "status"
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "get" and node.args:
            return isinstance(node.args[0], ast.Constant) and node.args[0].value == "status"
        if isinstance(node, ast.Subscript):
            return isinstance(node.slice, ast.Constant) and node.slice.value == "status"
        return False

    found = []
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            for side, other in ((left, right), (right, left)):
                if is_status(side) and isinstance(other, ast.Constant) and other.value in words:
                    found.append(f"{name}:{node.lineno}: {other.value!r}")
    return found


def test_verdicts_are_compared_as_status_members():
    # grader.trace's replies ("traced", "not_implemented", "failed") are the tracer protocol's own words
    assert [found for name in MODULES if not name.startswith("grader.trace") for found in status_literals(name)] == []


def test_the_status_check_sees_a_verdict_spelled_as_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    planted = tmp_path / "front.py"
    planted.write_text('a = case.status == "failed"\nb = "passed" != c.get("status")\nd = x["status"] == "error"\n')
    monkeypatch.setitem(MODULES, "front", planted)
    assert status_literals("front") == ["front:1: 'failed'", "front:2: 'passed'", "front:3: 'error'"]
