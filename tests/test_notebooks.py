"""The learner notebooks: generated from the sources, byte-stable, and they run top to bottom.

Executing them is the slow part (each check cell starts a grader process), so every notebook is
started at once on a pool of two threads when the first execution test asks for it.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
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
from grader.frontends.notebook import RED
from tests.conftest import ROOT

# One worker runs this file (pytest --dist loadgroup): its module fixture executes every notebook at once on
# its own pool of two threads, for the execution tests (marked slow: conftest.py) to read.
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


# ------------------------------------------------------------------------------------ execution


def execute(path: Path, allow_errors: bool = False, without: tuple[str, ...] = ()) -> nbformat.NotebookNode:
    """Run All, as a learner presses it: with ``allow_errors=False`` any cell that raises stops the run
    and fails the test (a failing check must not). ``without``: code cells of these roles are left out."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    if without:
        notebook.cells = [c for c in notebook.cells if c.cell_type != "code" or role(c) not in without]
    client = NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT_S,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(path.parent)}},
    )
    # Generous check limits: on a loaded CI machine with a cold compile cache a check compiles every case.
    # The kernel's own stderr (not the cells') holds only ipykernel's start-up chatter.
    client.execute(env={**os.environ, "TILELANG_COURSE_CHECK_TIMEOUT": "600"}, stderr=subprocess.DEVNULL)
    return notebook


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory):
    """(puzzle id, "stub" or "solution") -> the future of its executed notebook; all start at once."""
    folder = tmp_path_factory.mktemp("notebooks")
    assert main(["--solutions", "--out", str(folder / "solutions")]) == 0
    shutil.copytree(NOTEBOOKS, folder / "stubs")  # the shipped notebooks, run away from the repository
    pool = ThreadPoolExecutor(max_workers=2)
    futures: dict[tuple[str, str], Future] = {}
    for puzzle_id in PUZZLES:
        name = f"{puzzle_files(ROOT / 'puzzles')[puzzle_id].stem}.ipynb"
        futures[(puzzle_id, "solution")] = pool.submit(execute, folder / "solutions" / name)
        futures[(puzzle_id, "stub")] = pool.submit(execute, folder / "stubs" / name)
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
def test_stub_notebook_runs_and_every_check_says_not_implemented(executed, puzzle_id: str):
    notebook = executed[(puzzle_id, "stub")].result()
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


@pytest.mark.slow  # a deliberate hang: the check waits out its 45 s
def test_a_hung_kernel_fails_its_check_and_the_next_cell_runs(tmp_path: Path):
    """What a hang says and that Run All goes on; how long the hang costs is tests/test_perf.py's."""
    timeout = 45
    cells = execute(hang_notebook(tmp_path, timeout)).cells
    hang, wrong, last = cells[3], cells[5], cells[6]
    assert "HANG" in outputs(hang, "stdout") and f"{RED}copy_serial: hangs on case" in outputs(hang, "stdout")
    # both cases with a tail fail: tail_1000 and odd_4097 (simulated too, within the CPU budget)
    assert f"{RED}copy_threads: 2 of 3" in outputs(wrong, "stdout")
    assert outputs(hang, "error") == outputs(wrong, "error") == ""
    assert "FAIL  tail_1000" in outputs(wrong, "stdout") and "T.ceildiv" in outputs(wrong, "stdout")
    assert outputs(hang, "stderr") == outputs(wrong, "stderr") == ""
    if importlib.util.find_spec("matplotlib") is not None:  # the mismatch map of the wrong tiles
        assert any("image/png" in o.get("data", {}) for o in wrong.outputs)
    assert outputs(last, "stdout") == "the next cell ran\n"


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


def test_bench_table_and_plot_read_the_graders_json(capsys):
    from grader.frontends import notebook as nb
    from grader.frontends import render

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
    rows = nb._bench_rows(document)
    assert [(r.kernel, r.case) for r in rows] == [("gemv", "large_8192"), ("matmul_tuned", "large_4096")]
    table = render.bench_lines(nb._results(document))  # the CLI's table: one renderer
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
    from grader.frontends.notebook import _where

    starts = [(1, "part1"), (12, "copy_tiles")]
    text = "TypeError: Mismatched type (/tmp/x/p01_notebook.py:20); see p01_notebook.py"
    assert _where(text, starts, "p01_notebook.py") == (
        "TypeError: Mismatched type (line 10 of cell %%puzzle copy_tiles); see this notebook"
    )
    advice = "p01_notebook.py:5: syntax error: invalid syntax. Python cannot read the file: fix line 5 (a bracket"
    assert _where(advice, starts, "p01_notebook.py").endswith("fix line 6 of cell %%puzzle part1 (a bracket")


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
