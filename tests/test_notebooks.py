"""The learner notebooks: generated from the sources, byte-stable, and they run top to bottom.

Executing them is the slow part (each check cell starts a grader process), so every notebook the selected
tests read (a stub with its solved twin) is started at once on a pool of one thread per core when the first
execution test asks for it. An experiment cell ("extra") of a stub that its solved twin runs byte for byte,
reading nothing the two notebooks define differently, runs once, in the twin.
"""

from __future__ import annotations

import ast
import builtins
import importlib.util
import os
import shutil
import subprocess
from collections.abc import Collection, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from grader.course.generate import main
from grader.course.notebooks import (
    BENCH_COMMENT,
    ROLES,
    SourceCell,
    module_cells,
    parse_cells,
    puzzle_notebook,
    setup_source,
)
from grader.discover import CELL_END, puzzle_files
from grader.frontends.render import RED
from tests.conftest import ROOT

# One worker runs this file (pytest --dist loadgroup): its module fixture executes every notebook at once on
# its own pool (a thread per core: POOL_WORKERS), for the execution tests (marked slow: conftest.py) to read.
pytestmark = pytest.mark.xdist_group("notebooks")

PUZZLES = sorted(puzzle_files(ROOT / "puzzles"))
NOTEBOOKS = ROOT / "notebooks"
CELL_TIMEOUT_S = 900

MARKED = '''"""Puzzle 99 · Demo: the title line.

The spec, in markdown.

``first``
    The first kernel,
    in two lines.
"""

import tilelang

# %% [markdown]
# ## The idea
#
#     indented stays indented

# %% [notebook]
# print("only in the notebook")
#
# x = 1

# %% references
def reference(A):
    return A


@tilelang.jit
def first(A):
    # TODO begin: a hint
    raise NotImplementedError("first")
    # TODO end
    return A
# %%
# a comment right above the kernel belongs to it
@tilelang.jit
def second(A):
    return A


def puzzle():
    return [Kernel(function="first"), Kernel(function="second")]

# %% [bench]

# %% [markdown]
# The end.
'''


def test_parse_cells_reads_each_kind_of_cell():
    cells = parse_cells(MARKED)
    assert [c.kind for c in cells] == ["spec", "code", "markdown", "extra", "code", "code", "bench", "markdown"]
    assert cells[0].text.startswith("# Puzzle 99 · Demo: the title line.\n")
    assert "The spec, in markdown." in cells[0].text and '"""' not in cells[0].text
    assert "- ``first``: The first kernel,\n  in two lines." in cells[0].text
    assert cells[1].text == "import tilelang"
    assert cells[2].text == "## The idea\n\n    indented stays indented"
    assert cells[3].text == 'print("only in the notebook")\n\nx = 1'
    assert cells[4].title == "references" and cells[4].text.startswith("def reference(A):")


def test_each_graded_kernel_gets_a_cell_of_its_own():
    cells = [c for c in module_cells(MARKED) if c.kind == "code"]
    assert [(c.title, c.kernel) for c in cells] == [
        ("", ""),
        ("references", ""),
        ("", "first"),
        ("", "second"),
        ("", ""),
    ]
    first, second = cells[2], cells[3]
    assert first.text.startswith("@tilelang.jit\ndef first(A):") and "# TODO begin: a hint" in first.text
    assert second.text.startswith("# a comment right above the kernel belongs to it\n@tilelang.jit")
    assert cells[4].text.startswith("def puzzle():")


def test_a_module_without_markers_is_cut_at_its_kernels():
    text = MARKED.split("# %% [markdown]")[0] + MARKED.split("# %% references")[1].split("# %% [bench]")[0]
    text = text.replace("# %%\n", "")
    cells = module_cells(text)
    assert [c.kind for c in cells] == ["spec", "code", "code", "code", "code"]
    assert [c.kernel for c in cells] == ["", "", "first", "second", ""]
    assert SourceCell("code", "import tilelang") not in cells  # the first cell runs to the first kernel
    assert cells[1].text.startswith("import tilelang") and "def reference" in cells[1].text


def test_cell_ids_survive_a_cell_inserted_elsewhere(tmp_path: Path):
    """Ids are keys (translations hold on to them): a new markdown cell after one kernel leaves the
    ids of every other section alone."""
    source = puzzle_files(ROOT / "puzzles")["02"]
    before = [c.id for c in puzzle_notebook(source, "02").cells]
    text = source.read_text()
    marker = "# %% mul_relu"
    assert marker in text
    edited = tmp_path / source.name
    edited.write_text(text.replace(marker, "# %% [markdown]\n# An inserted remark.\n\n" + marker, 1))
    after = [c.id for c in puzzle_notebook(edited, "02").cells]
    assert len(after) == len(before) + 1
    assert set(before) <= set(after)


def test_generation_is_deterministic(tmp_path: Path):
    assert main(["--out", str(tmp_path / "a")]) == 0
    assert main(["--out", str(tmp_path / "b")]) == 0
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == [f"{puzzle_files(ROOT / 'puzzles')[i].stem}.ipynb" for i in PUZZLES]
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_check_passes_on_the_committed_notebooks_and_names_a_stale_one(tmp_path: Path, capsys):
    assert main(["--check"]) == 0, capsys.readouterr().out
    copy = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, copy)
    target = sorted(copy.glob("p08_*.ipynb"))[0]
    notebook = nbformat.read(target, as_version=4)
    notebook.cells[-1].source += "\n# edited by hand"
    nbformat.write(notebook, target)
    capsys.readouterr()
    assert main(["--check", "--out", str(copy)]) == 1
    out = capsys.readouterr().out
    assert target.name in out and "stale" in out
    target.unlink()
    assert main(["--check", "--out", str(copy)]) == 1
    assert "missing" in capsys.readouterr().out


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_cells_carry_their_role_and_kernel(puzzle_id: str):
    path = NOTEBOOKS / f"{puzzle_files(ROOT / 'puzzles')[puzzle_id].stem}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    infos = [c.metadata["tilelang_course"] for c in notebook.cells]
    assert all(info["role"] in ROLES for info in infos)
    assert infos[0]["role"] == "spec" and infos[1]["role"] == "setup"
    benches = [c for c in notebook.cells if c.metadata["tilelang_course"]["role"] == "bench"]
    assert len(benches) == 1
    assert notebook.cells[1].source == setup_source(puzzle_id)
    ids = [c.id for c in notebook.cells]
    assert len(set(ids)) == len(ids) and all(i.startswith(f"p{puzzle_id}-") for i in ids)
    assert ids[:2] == [f"p{puzzle_id}-spec", f"p{puzzle_id}-setup"]
    kernels = [(i, info["kernel"]) for i, info in enumerate(infos) if info["role"] == "kernel"]
    assert kernels
    for index, kernel in kernels:
        source = notebook.cells[index].source
        assert source.startswith(f"%%puzzle {kernel}\n") and "# TODO begin" in source and "# TODO end" in source
        assert infos[index + 1] == {"role": "check", "kernel": kernel}
        assert notebook.cells[index + 1].source == f'check("{kernel}")'
    assert benches[0].source == BENCH_COMMENT + f"bench({', '.join(chr(34) + k + chr(34) for _, k in kernels)})"


def _twins(*cells: tuple[str, ...]) -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """A stub and its solved twin from (id, role, the stub's source[, the twin's: None where it has no such
    cell]); the twin's is the stub's where left out."""
    v4 = nbformat.v4

    def notebook(triples: list[tuple[str, str, str]]) -> nbformat.NotebookNode:
        made = v4.new_notebook(cells=[v4.new_code_cell(text, id=i) for i, _, text in triples])
        for cell, (_, kind, _) in zip(made.cells, triples):
            cell.metadata["tilelang_course"] = {"role": kind}
        return made

    twin = [(c[0], c[1], c[3] if len(c) > 3 else c[2]) for c in cells]
    return notebook([c[:3] for c in cells]), notebook([c for c in twin if c[2] is not None])


def test_a_stub_leaves_out_only_the_experiments_its_twin_runs_alike():
    setup = setup_source("01")
    plain = "from grader.teaching.pictures import tiling\n\ntiling(1, 1000, 1, 256)"
    todo, done = ("%%puzzle first\ndef first(A):\n    " + body for body in ("raise NotImplementedError", "return A"))
    stub, solved = _twins(
        ("setup", "setup", setup),
        ("kernel", "kernel", todo, done),
        ("alike", "extra", plain),
        ("edited", "extra", plain, plain + "\n"),
        ("absent", "extra", plain, None),
        ("benched", "extra", 'bench("first", BLOCK=64)'),  # it reads the kernel cells run so far
        ("calls", "extra", "x = first(1)"),
        ("from_calls", "extra", "y = x + 1"),
        ("namespace", "extra", "print(globals())"),
        ("magic", "extra", "%time z = 1"),
        ("own_check", "extra", "from grader.nb import check as c\n\nc('first')"),
        ("binds", "extra", "w = 2"),
        ("needs", "code", "print(w)"),
        ("first_half", "extra", "import math\n\nroot = math.sqrt(2)"),
        ("second_half", "extra", "root += 1\nprint(root)"),  # reads what a cell left out before it binds
        ("not_extra", "code", plain),
    )
    assert run_by_the_twin(stub, solved) == ["alike", "first_half", "second_half"]
    stub.cells.append(nbformat.v4.new_code_cell("def broken(:", id="unreadable"))
    stub.cells[-1].metadata["tilelang_course"] = {"role": "code"}
    assert run_by_the_twin(stub, solved) == []  # a cell it cannot read: the stub runs every cell


# ------------------------------------------------------------------------------------ execution


def execute(
    path: Path, allow_errors: bool = False, without: tuple[str, ...] = (), leave_out: Collection[str] = ()
) -> nbformat.NotebookNode:
    """Run All, as a learner presses it: with ``allow_errors=False`` any cell that raises stops the run
    and fails the test (a failing check must not). ``without``: code cells of these roles are left out;
    ``leave_out``: code cells of these ids (the returned notebook has neither)."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    if without or leave_out:
        notebook.cells = [
            c for c in notebook.cells if c.cell_type != "code" or (role(c) not in without and c.id not in leave_out)
        ]
    for attempt in (1, 2):
        client = NotebookClient(
            notebook,
            timeout=CELL_TIMEOUT_S,
            kernel_name="python3",
            allow_errors=allow_errors,
            resources={"metadata": {"path": str(path.parent)}},
        )
        try:
            # Generous check limits: on a loaded CI machine with a cold compile cache a check compiles every case.
            # The kernel's own stderr (not the cells') holds only ipykernel's start-up chatter.
            client.execute(env={**os.environ, "TILELANG_COURSE_CHECK_TIMEOUT": "600"}, stderr=subprocess.DEVNULL)
            return notebook
        except RuntimeError as error:
            # A kernel that dies before its first reply has run no cell (ci58: once in ~40 starts, while kernels of
            # two xdist workers started at once; jupyter_client picks free ports by binding and closing them, which
            # another process can take in between). It is started once more; a cell's error is never retried.
            if attempt == 2 or "Kernel died before replying to kernel_info" not in str(error):
                raise
    raise AssertionError("unreachable")


# An experiment cell of a stub runs in its solved twin instead when its outcome cannot depend on which of the two
# runs it: it reads nothing but builtins, what it binds itself and what the experiment cells left out before it
# bind (so those cells, run in order, are one closed program, the same in both), and it touches nothing that
# reads the notebook's own state (check, bench... from grader.nb read the kernel cells run so far).
STATEFUL_MODULES = ("grader.nb", "grader.frontends.notebook", "IPython")
# Not grader.frontends.planted: it grades the source text it is given and reads no cell (puzzle 03's planted bugs).
PURE_BUILTINS = set(dir(builtins)) - {"globals", "locals", "vars", "dir", "eval", "exec", "__import__", "breakpoint"}
SCOPES = (
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)  # fmt: skip


def _nodes(node: ast.AST, into_scopes: bool = False) -> Iterator[ast.AST]:
    """``node`` and the nodes under it; a function, class, lambda or comprehension under it is yielded but not
    entered (unless ``into_scopes``): its names are its own."""
    yield node
    for child in ast.iter_child_nodes(node):
        if isinstance(child, SCOPES) and not into_scopes:
            yield child
        else:
            yield from _nodes(child, into_scopes)


def _binds(node: ast.AST, into_scopes: bool = False) -> set[str]:
    """The names ``node`` binds in the scope it runs in (a function or class statement: its own name only)."""
    if isinstance(node, SCOPES) and not into_scopes:
        return {node.name} if isinstance(node, SCOPES[:3]) else set()
    names = set()
    for n in _nodes(node, into_scopes):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            names.add(n.id)
        elif isinstance(n, SCOPES[:3]):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name.partition(".")[0] for a in n.names}
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif isinstance(n, ast.arg):
            names.add(n.arg)
    return names


def reads_and_binds(source: str) -> tuple[set[str], set[str], bool] | None:
    """A code cell's (names it reads before binding them itself, names it binds, whether it touches
    STATEFUL_MODULES), or None where it cannot say: it does not parse or it imports ``*``. A ``%%puzzle`` cell
    is its body; another magic is a call of get_ipython(), a name no builtin."""
    from IPython.core.inputtransformer2 import TransformerManager

    if source.startswith("%%puzzle"):
        source = source.partition("\n")[2]
    try:
        tree = ast.parse(TransformerManager().transform_cell(source))
    except SyntaxError:
        return None
    stateful = False
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(a.name == "*" for a in node.names):
                return None
            module = (node.module or "") if isinstance(node, ast.ImportFrom) else ""
            dotted = [f"{module}.{a.name}".lstrip(".") + "." for a in node.names]
        else:
            dotted = [ast.unparse(node) + "."] if isinstance(node, ast.Attribute) else []
        stateful |= any(d.startswith(m + ".") for d in dotted for m in STATEFUL_MODULES)
    everywhere = _binds(tree)  # what a function reads may be bound after it, by the time it is called
    free: set[str] = set()
    bound: set[str] = set()

    def read(node: ast.AST | None) -> None:
        for n in _nodes(node) if node is not None else ():
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in bound:
                free.add(n.id)
            elif isinstance(n, SCOPES):  # what it reads and binds nowhere inside, once, whenever it runs
                loads = {m.id for m in ast.walk(n) if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Load)}
                free.update(loads - _binds(n, into_scopes=True) - everywhere - bound)
                if n is node:  # a def or class statement: _nodes would go on into its body
                    return

    def block(statements: list[ast.stmt]) -> None:  # in order: x = x + 1 reads x; for x in ...: x does not
        for s in statements:
            if isinstance(s, (ast.For, ast.AsyncFor)):
                read(s.iter)
                bound.update(_binds(s.target))
                block(s.body + s.orelse)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    read(item.context_expr)
                    bound.update(_binds(item.optional_vars) if item.optional_vars else ())
                block(s.body)
            elif isinstance(s, (ast.If, ast.While)):
                read(s.test)
                block(s.body + s.orelse)
            elif isinstance(s, ast.Try):
                block(s.body)
                for handler in s.handlers:
                    read(handler.type)
                    bound.update({handler.name} if handler.name else ())
                    block(handler.body)
                block(s.orelse + s.finalbody)
            else:
                if isinstance(s, ast.AugAssign) and isinstance(s.target, ast.Name) and s.target.id not in bound:
                    free.add(s.target.id)
                read(s)
                bound.update(_binds(s))

    block(tree.body)
    return free, everywhere, stateful


def run_by_the_twin(stub: nbformat.NotebookNode, solved: nbformat.NotebookNode) -> list[str]:
    """The ids of the stub's experiment cells (role "extra") that its solved twin runs in their place: the twin
    has the cell (same id, byte-identical source), and the cells left out, run in order on their own, are a
    closed program (above) that no other cell of either notebook rebinds a name of, and that binds no name a
    cell still run in the stub reads."""
    twin = {c.id: c.source for c in solved.cells if c.cell_type == "code"}
    cells = [c for c in stub.cells if c.cell_type == "code"]
    names = {c.id: reads_and_binds(c.source) for c in cells}
    twin_names = {i: reads_and_binds(s) for i, s in twin.items()}
    if any(n is None for n in [*names.values(), *twin_names.values()]):
        return []  # a cell whose names are unknown may read or rebind any: every cell runs
    left_out = {c.id for c in cells if role(c) == "extra" and twin.get(c.id) == c.source and not names[c.id][2]}
    while True:
        others = [n for i, n in [*names.items(), *twin_names.items()] if i not in left_out]
        rebound = set().union(*(binds for _, binds, _ in others))
        available, back = set(PURE_BUILTINS), set()
        for c in cells:
            reads, binds, _ = names[c.id]
            if c.id in left_out:
                if not reads <= available:
                    back.add(c.id)
                available |= binds - rebound
            else:
                back |= {i for i in left_out if names[i][1] & reads}
        if not back:
            return [c.id for c in cells if c.id in left_out]
        left_out -= back


POOL_WORKERS = max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """Puzzle id -> (its shipped stub notebook, its solved twin), in a temporary folder."""
    folder = tmp_path_factory.mktemp("notebooks")
    assert main(["--solutions", "--out", str(folder / "solutions")]) == 0
    shutil.copytree(NOTEBOOKS, folder / "stubs")  # the shipped notebooks, run away from the repository
    names = {i: f"{puzzle_files(ROOT / 'puzzles')[i].stem}.ipynb" for i in PUZZLES}
    return {i: (folder / "stubs" / names[i], folder / "solutions" / names[i]) for i in PUZZLES}


@pytest.fixture(scope="module")
def left_out(twins: dict[str, tuple[Path, Path]]) -> dict[str, list[str]]:
    """Puzzle id -> the ids of its stub's cells that only its solved twin runs (run_by_the_twin)."""
    read = lambda path: nbformat.read(path, as_version=4)  # noqa: E731
    return {i: run_by_the_twin(read(stub), read(solved)) for i, (stub, solved) in twins.items()}


@pytest.fixture(scope="module")
def executed(request: pytest.FixtureRequest, twins: dict[str, tuple[Path, Path]], left_out: dict[str, list[str]]):
    """(puzzle id, "stub" or "solution") -> the future of its executed notebook; all start at once. Only the
    puzzles of the tests selected (all of them in CI), each as a pair: a stub leans on its twin."""
    selected = {
        item.callspec.params.get("puzzle_id")
        for item in request.session.items
        if "executed" in getattr(item, "fixturenames", ()) and hasattr(item, "callspec")
    }
    pool = ThreadPoolExecutor(max_workers=POOL_WORKERS)
    futures: dict[tuple[str, str], Future] = {}
    for puzzle_id, (stub, solved) in twins.items():
        if puzzle_id not in selected:
            continue
        futures[(puzzle_id, "solution")] = pool.submit(execute, solved)
        futures[(puzzle_id, "stub")] = pool.submit(execute, stub, leave_out=left_out[puzzle_id])
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


def outputs(cell: nbformat.NotebookNode, kind: str) -> str:
    """The text a cell wrote to stdout or stderr, or its error's name and value ("error")."""
    if kind == "error":
        return "\n".join(f"{o.ename}: {o.evalue}" for o in cell.get("outputs", []) if o.output_type == "error")
    return "".join(o.text for o in cell.get("outputs", []) if o.output_type == "stream" and o.name == kind)


def _skipped(cell: nbformat.NotebookNode) -> bool:
    return "skip-execution" in cell.metadata.get("tags", [])


def role(cell: nbformat.NotebookNode) -> str:
    return cell.metadata["tilelang_course"]["role"]


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_stub_notebook_runs_and_every_check_says_not_implemented(executed, twins, left_out, puzzle_id: str):
    notebook = executed[(puzzle_id, "stub")].result()
    shipped = [c.id for c in nbformat.read(twins[puzzle_id][0], as_version=4).cells if c.cell_type == "code"]
    ran = [c.id for c in notebook.cells if c.cell_type == "code"]
    assert ran == [i for i in shipped if i not in left_out[puzzle_id]]  # only what the twin runs is left out
    checks = [c for c in notebook.cells if role(c) == "check"]
    assert checks
    for cell in checks:
        kernel = cell.metadata["tilelang_course"]["kernel"]
        assert f"{RED}{kernel}: not implemented yet" in outputs(cell, "stdout"), cell.source
        assert outputs(cell, "stderr") == "", cell.source
    # Run All went through every cell, the ones after a failing check included.
    assert all(c.get("execution_count") for c in notebook.cells if c.cell_type == "code" and not _skipped(c))
    for cell in notebook.cells:
        assert outputs(cell, "error") == "", cell.source[:200]


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_solution_notebook_runs_each_cell_its_stub_leaves_out(executed, twins, left_out, puzzle_id: str):
    """With the test above: every code cell of every shipped stub runs without error, once, in one of the two."""
    stub = {c.id: c for c in nbformat.read(twins[puzzle_id][0], as_version=4).cells}
    solved = {c.id: c for c in executed[(puzzle_id, "solution")].result().cells}
    for cell_id in left_out[puzzle_id]:
        cell = solved[cell_id]
        assert role(stub[cell_id]) == "extra" and cell.source == stub[cell_id].source
        assert cell.get("execution_count") and outputs(cell, "error") == "", cell.source[:200]


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_solution_notebook_passes_every_check(executed, puzzle_id: str):
    notebook = executed[(puzzle_id, "solution")].result()
    checks = [c for c in notebook.cells if role(c) == "check"]
    assert checks
    for cell in notebook.cells:
        assert outputs(cell, "error") == "", cell.source[:200] + "\n" + outputs(cell, "error")
    for cell in checks:
        kernel = cell.metadata["tilelang_course"]["kernel"]
        assert f"{kernel}: passed" in outputs(cell, "stdout"), outputs(cell, "stdout")
        assert outputs(cell, "stderr") == "", cell.source
    bench = next(c for c in notebook.cells if role(c) == "bench")
    assert outputs(bench, "stderr") == "" and outputs(bench, "error") == ""


HANGS = """%%puzzle copy_serial
@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        for step in T.serial(1 << 30):  # far too many steps: the simulator never finishes
            for t in T.Parallel(THREADS):
                i = step * THREADS + t
                if i < N:
                    B[i] = A[i]
    return B"""

NO_TAIL = """%%puzzle copy_threads
@tilelang.jit
def copy_threads(A, BLOCK: int, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(N // BLOCK, threads=THREADS) as bx:  # the partial last block is never launched
        for t in T.Parallel(BLOCK):
            B[bx * BLOCK + t] = A[bx * BLOCK + t]
    return B"""


def cell_seconds(cell: nbformat.NotebookNode) -> float:
    """The wall time of an executed cell, from the timestamps nbclient records."""
    timing = cell.metadata["execution"]
    started = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
    return (datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00")) - started).total_seconds()


def hang_notebook(folder: Path, timeout: float) -> Path:
    """A notebook whose first check hangs (its limit ``timeout``), then a wrong kernel's check, then a print."""
    v4 = nbformat.v4
    sources = [
        setup_source("01"),
        "%%puzzle imports\nimport tilelang\nimport tilelang.language as T",
        HANGS,
        f'check("copy_serial", timeout={timeout:g})',
        NO_TAIL,
        'check("copy_threads")',
        'print("the next cell ran")',
    ]
    notebook = v4.new_notebook(cells=[v4.new_code_cell(s) for s in sources])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = folder / "hang.ipynb"
    nbformat.write(notebook, path)
    return path


def test_the_bench_marker_places_the_bench_cell(tmp_path: Path):
    from grader.course.notebooks import puzzle_notebook

    source = tmp_path / "p99_demo.py"
    source.write_text(MARKED)
    cells = puzzle_notebook(source, "99").cells
    roles = [c.metadata["tilelang_course"]["role"] for c in cells]
    assert roles == [
        "spec", "setup", "code", "markdown", "extra", "code", "kernel", "check", "kernel", "check", "code", "bench",
        "markdown",
    ]  # fmt: skip
    assert cells[-2].source == BENCH_COMMENT + 'bench("first", "second")' and cells[-1].source == "The end."
    assert cells[2].source == "%%puzzle part1\nimport tilelang" and cells[5].source.startswith("%%puzzle references\n")


def test_bench_table_and_plot_read_the_graders_results(capsys):
    from grader.frontends import notebook as nb
    from grader.frontends import render
    from grader.outcome import CaseResult

    document = {
        "results": [
            {"kernel": "gemv", "case": "large_8192", "bench": {"kernel_ms": 0.1, "torch_ms": 0.12, "tflops": 1.3}},
            {
                "kernel": "matmul_tuned",
                "case": "large_4096",
                "bench": {
                    "kernel_ms": 0.2,
                    "torch_ms": 0.18,
                    "tflops": 680.0,
                    "floor_ms": 0.14,
                    "bound": "compute",
                    "others": {"cuBLAS again": 0.19},
                },
            },
            {"kernel": "matmul_naive", "case": "large_4096", "bench": None},
        ]
    }
    for r in document["results"]:
        r.update(puzzle="08", status="passed", sizes={})
    results = [CaseResult.from_dict(r) for r in document["results"]]
    rows = nb._bench_rows(results)
    assert [(r.kernel, r.case) for r in rows] == [("gemv", "large_8192"), ("matmul_tuned", "large_4096")]
    table = render.bench_lines(results)  # the CLI's table: one renderer
    header = ["kernel", "case", "ms", "spread", "TFLOP/s", "GB/s", "roofline", "torch", "ms", "spread", "vs", "torch"]
    assert table[0].split() == header
    assert table[1].split()[4] == "-"  # a document from before --repeat has no range: no spread, not a made-up 0%
    assert table[2].split()[-1] == "0.90x"
    assert "70% com" in table[2]  # the 0.14 ms floor over 0.2 ms
    assert "vs cuBLAS again: 0.1900 ms, 0.95x" in table[3]
    if importlib.util.find_spec("matplotlib") is not None:
        import matplotlib

        matplotlib.use("Agg")
        nb._plot(rows)  # outside IPython, display() prints the figure's repr
        assert "Figure" in capsys.readouterr().out


def test_grader_locations_point_at_notebook_cells():
    from grader.frontends.cells import lines_in_cells

    starts = [(1, "part1"), (12, "copy_tiles")]
    text = "TypeError: Mismatched type (/tmp/x/p01_notebook.py:20); see p01_notebook.py"
    assert lines_in_cells(text, starts, "p01_notebook.py") == (
        "TypeError: Mismatched type (line 10 of cell %%puzzle copy_tiles); see this notebook"
    )
    advice = "p01_notebook.py:5: syntax error: invalid syntax. Python cannot read the file: fix line 5 (a bracket"
    assert lines_in_cells(advice, starts, "p01_notebook.py").endswith("fix line 6 of cell %%puzzle part1 (a bracket")


def test_puzzle_cells_are_recorded_in_first_run_order_and_rerun_in_place(capsys):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    try:
        _record_and_check(shell, capsys)
    finally:
        InteractiveShell.clear_instance()


def _record_and_check(shell, capsys) -> None:
    from grader.frontends.notebook import CheckFailed, check

    shell.run_cell("%load_ext grader.nb")
    shell.run_cell("%puzzle 8")
    shell.run_cell("%%puzzle first\nx = 1")
    shell.run_cell("%%puzzle second\ny = x + 1")
    shell.run_cell("%%puzzle first\nx = 10")
    magics = shell.magics_manager.registry["PuzzleMagics"]
    assert magics.puzzle_id == "08" and shell.user_ns["y"] == 2 and shell.user_ns["x"] == 10
    text, starts = magics.module_text()
    end = f"\n{CELL_END}\n"  # each cell's end, where the tracer runs the module cell by cell
    assert text == f"x = 10\n{end}y = x + 1\n{end}" and starts == [(1, "first"), (4, "second")]
    result = check("gemv")
    assert not result.passed and "run the cell that starts with %%puzzle gemv" in capsys.readouterr().out
    with pytest.raises(CheckFailed, match="no cell defines it yet") as failed:
        check("gemv", strict=True)
    assert failed.value._render_traceback_() == [f"CheckFailed: {failed.value}"]


@pytest.mark.parametrize(
    ("warm", "sandbox"), [(False, ""), (True, ""), (False, "off")], ids=["cold", "warm", "unconfined"]
)
def test_a_check_killed_at_its_limit_leaves_nothing_in_the_learners_tmpdir(monkeypatch, warm, sandbox):
    """The front end kills a check that outlives its limit, grader and judges at once, before they can delete
    their temporary folders (CI found a judge's left in $TMPDIR): they are made inside the check's own folder,
    which the front end deletes. Warm too: the server's imports fixed its temporary folder before the check.
    No process of the check is left either: the sandbox's waiter, in a session of its own, once outlived the
    killed judge, and the learner's code ran on inside it (a `while True` took a core for good)."""
    import tempfile

    from grader import settings
    from grader.frontends.warm import WarmGrader
    from grader.processes import launch

    learner_tmp = Path(tempfile.mkdtemp(prefix="tc-"))  # short: the warm server's socket lives in it
    monkeypatch.setenv("TMPDIR", str(learner_tmp))
    # off: as on a machine without namespaces, where the tracer has no waiter ("": this machine's default)
    monkeypatch.setenv(settings.SANDBOX, sandbox) if sandbox else monkeypatch.delenv(settings.SANDBOX, raising=False)
    monkeypatch.setattr(tempfile, "tempdir", None)
    server = WarmGrader() if warm else None
    try:
        module = "import time\ntime.sleep(600)\n"  # the trace never ends; its own limit (120 s) is far away
        # the limit falls once the judge and tracer have made their folders: a forked (warm) tracer is up in about
        # a second, a cold one imports torch and TileLang twice first (12 s leaves room on two busy cores)
        limit = 5.0 if warm else 12.0
        options = launch.check_options(["copy_serial"], limit, device="cpu", timeout=120.0)
        run = launch.grade("01", module, options, limit, warm=server)
        if server is not None:
            server.stop()
        assert run.returncode is None and run.seconds >= limit
        assert sorted(p.name for p in learner_tmp.iterdir()) == []
        assert processes_left_in(learner_tmp) == []
    finally:
        shutil.rmtree(learner_tmp, ignore_errors=True)


FRONT_END = """
import sys
from grader.frontends.warm import WarmGrader
from grader.processes import launch

server = WarmGrader() if sys.argv[1] == "warm" else None
options = launch.check_options(["copy_serial"], 300.0, device="cpu", timeout=300.0)
launch.grade("01", "import time\\ntime.sleep(600)\\n", options, 300.0, warm=server)
"""


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_a_front_end_killed_mid_check_takes_the_check_with_it(warm: bool, tmp_path: Path):
    """A Jupyter kernel restarted (or an autograde killed) while its check traces: the grader, its judge and
    the tracer (and, warm, the forked check) each die with the process that started them, so nothing of the
    check runs on to its own limit."""
    import signal
    import sys
    import tempfile
    import time

    learner_tmp = Path(tempfile.mkdtemp(prefix="tc-"))  # short: the warm server's socket lives in it
    env = {**os.environ, "TMPDIR": str(learner_tmp), "PYTHONPATH": str(ROOT)}
    front = subprocess.Popen([sys.executable, "-c", FRONT_END, "warm" if warm else "cold"], env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not any("tilelang-course-trace-" in line for line in processes_left_in(learner_tmp, wait_s=0)):
            assert front.poll() is None and time.monotonic() < deadline, "the check never reached its tracer"
            time.sleep(0.5)
        front.send_signal(signal.SIGKILL)
        front.wait()
        assert processes_left_in(learner_tmp) == []
    finally:
        front.kill()
        shutil.rmtree(learner_tmp, ignore_errors=True)


def processes_left_in(folder: Path, wait_s: float = 10.0) -> list[str]:
    """The processes whose current folder is under ``folder`` (every process of a check works in its folder or
    below, the sandboxed tracer too), after up to ``wait_s`` seconds for the kills to land."""
    import time

    deadline = time.monotonic() + wait_s
    while True:
        found = []
        for link in Path("/proc").glob("[0-9]*/cwd"):
            try:
                where = os.readlink(link)
            except OSError:
                continue
            if where.startswith(str(folder)):
                found.append(f"{link.parent.name} in {where}")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def test_a_check_is_rendered_once_by_its_front_end():
    """check()'s route asks the grader for its typed results alone (GradeOptions.quiet): the grader prints no
    verdict line, which the notebook would throw away, and the results it streams back hold the verdict the
    notebook renders."""
    from grader.outcome import Status
    from grader.processes import launch

    module = (ROOT / "solutions" / "p02_vector_add.py").read_text()
    options = launch.check_options(["add"], 120.0, device="cpu", cases="tail_1000")
    assert options.quiet and options.json is None
    run = launch.grade("02", module, options, 120.0)
    assert run.returncode == 0, run.output
    (result,) = [r for r in run.results if r.kernel == "add"]
    assert result.status == Status.PASSED and result.case == "tail_1000"
    assert [r["puzzle"] for r in run.runs] == ["02"]
    assert "tail_1000" not in run.output and "puzzle 02" not in run.output, run.output


def test_a_kernel_that_dies_before_its_first_reply_is_started_once_more(monkeypatch, tmp_path: Path):
    """execute() retries only a kernel that never answered (no cell ran); any other error is the notebook's."""
    import nbclient

    path = tmp_path / "n.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), path)
    errors = ["Kernel died before replying to kernel_info", None, "Kernel died before replying to kernel_info"]
    started = []

    class Client:
        def __init__(self, notebook, **options):
            started.append(options["kernel_name"])

        def execute(self, **options):
            error = errors.pop(0)
            if error:
                raise RuntimeError(error)

    monkeypatch.setattr(nbclient, "NotebookClient", Client)
    assert execute(path).cells[0].source == "x = 1" and len(started) == 2
    errors[:] = ["Kernel died before replying to kernel_info", "Kernel died before replying to kernel_info"]
    with pytest.raises(RuntimeError, match="kernel_info"):
        execute(path)  # twice in a row: no third start
    errors[:] = ["Kernel didn't respond in 60 seconds"]
    with pytest.raises(RuntimeError, match="respond"):
        execute(path)  # not a death before the first reply: never retried
    assert len(started) == 2 + 2 + 1
