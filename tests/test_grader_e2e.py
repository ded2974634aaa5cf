"""The grader end to end, as a learner runs it. Without a GPU these compile for sm_90a.

Through the warm grader (``warm_grade``, as a notebook's check runs), except where the test is about the
`python -m grader` process itself (``grade``, a cold start): usage errors and a syntax error, answered
on stderr with exit 2 before any judge; TileLang missing from a fresh interpreter's path; stderr left
empty."""

from pathlib import Path

import pytest

from grader.discover import load_module, load_puzzle, puzzle_files
from tests.conftest import ROOT, cuda_available
from tests.corpora import WrongKernel, wrong_kernels

WRONG = wrong_kernels(ROOT)


def case_count(puzzle_id: str) -> int:
    puzzle = load_puzzle(load_module(puzzle_files(ROOT / "solutions")[puzzle_id]))
    return sum(len(k.cases) for k in puzzle.kernels)


@pytest.mark.slow  # every case of puzzle 08 compiled, the small ones simulated: two minutes in CI
def test_solutions_build_for_every_case(warm_grade):
    run = warm_grade("08", "--solutions")
    assert run.code == run.passed_code == (0 if cuda_available() else 3), run.out + run.err
    statuses = run.statuses()
    assert len(statuses) == case_count("08")
    if cuda_available():
        assert set(statuses.values()) == {"passed"}, statuses
    else:  # the small cases are simulated, the rest compiled for sm_90a
        simulated = [r for r in run.results() if r["checked"] == "simulated"]
        assert simulated and all(r["status"] == "passed" for r in simulated)
        assert set(statuses.values()) == {"passed", "compiled"}, statuses
        assert "simulated on the CPU" in run.out


def test_untouched_stubs_are_not_implemented(warm_grade):
    run = warm_grade("08")
    assert run.code == 1
    assert set(run.statuses().values()) == {"not_implemented"}
    assert run.out.count("not implemented yet") == case_count("08")
    assert "Traceback" not in run.out + run.err


def test_k_picks_kernels(warm_grade):
    """-k naive grades matmul_naive alone; without a GPU, a -k check leaves the cases too large to simulate
    uncompiled and names them (--full compiles them)."""
    run = warm_grade("08", "-k", "naive")
    every = ("square_256", "tail_1000", "odd_127x129x131", "skinny_33x1024x200", "rect_77x150x91", "large_4096")
    (described,) = run.doc["runs"]
    skipped = {f"{c['kernel']}[{c['case']}]" for c in described["not_compiled"]}
    assert set(run.statuses()) | skipped == {f"matmul_naive[{c}]" for c in every}
    assert not set(run.statuses()) & skipped and "matmul_naive[large_4096]" in skipped
    assert described["compile_all"] == "python -m grader 08 -k naive --full"


def test_usage_errors_exit_2(grade):  # cold: the command line's exit status and its stderr
    assert grade("42").code == 2
    assert grade("08", "-k", "no_such_kernel").code == 2
    missing = grade("08", "--file", "nowhere.py")
    assert missing.code == 2 and "there is no file" in missing.err


@pytest.mark.parametrize("wrong", [w for w in WRONG if w.caught_by == "compile"], ids=lambda w: w.path.stem)
def test_wrong_kernels_rejected_at_compile(warm_grade, wrong: WrongKernel):
    run = warm_grade(wrong.puzzle_id, "--file", str(wrong.path), "-k", wrong.kernel)
    assert run.code == 1
    results = run.results(wrong.kernel)
    assert results and all(r["status"] == "error" for r in results)
    assert wrong.path.name in results[0]["message"]  # names the learner's file and line


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_syntax_error_names_the_line(grade, tmp_path):
    """Read, never run: the CLI parses the file and answers a syntax error in one line, exit 2, with no judge
    (cold: stdout apart from stderr)."""
    path = write(tmp_path, "mine.py", "import tilelang\n\ndef gemv(:\n    pass\n")
    run = grade("08", "--file", str(path), "-k", "gemv")
    assert run.code == 2 and run.out == ""
    assert run.err.startswith("grader: ") and f"{path}:3: syntax error" in run.err
    assert len(run.err.strip().splitlines()) == 1
    assert "Traceback" not in run.err


def test_missing_kernel_and_plain_python_function(warm_grade, tmp_path):
    path = write(tmp_path, "mine.py", "def matmul_naive(A, B, **blocks):\n    return A @ B\n")
    run = warm_grade("08", "--file", str(path), "-k", "gemv,naive")
    assert "has no kernel named `gemv`" in run.results("gemv")[0]["message"]
    assert "is a plain Python function, not a @tilelang.jit kernel" in run.results("matmul_naive")[0]["message"]


def test_a_construct_the_simulator_lacks_leaves_its_cases_unchecked_exit_3(warm_grade, tmp_path):
    """T.atomic_add(..., return_prev=True) has no simulator rule yet: every simulated case is NOSIM, counted with
    the cases only compiled (exit 3, "skipped"), never as failed; its plain form is simulated
    (tests/right/p05/row_sum_tiled_scalar_atomic_per_row.py)."""
    source = (ROOT / "tests" / "right" / "p05" / "row_sum_tiled_scalar_atomic_per_row.py").read_text()
    plain = "T.atomic_add(C[rb * BLOCK_M + i], part[i])"
    assert plain in source
    path = write(tmp_path, "mine.py", source.replace(plain, f"old = {plain[:-1]}, return_prev=True)  # noqa: F841"))
    run = warm_grade("05", "--file", str(path), "-k", "row_sum_tiled", "--exact", "--device", "cpu")
    statuses = set(run.statuses("row_sum_tiled").values())
    assert run.code == 3 and statuses == {"unsupported"}, (run.code, statuses, run.out[-2000:])
    assert "atomic_add_ret_elem_op" in run.results("row_sum_tiled")[0]["message"]
    assert "failed" not in run.out.splitlines()[-1] and "skipped" in run.out.splitlines()[-1], run.out[-500:]


def test_a_crashing_process_costs_one_kernel(grade, tmp_path):
    path = write(tmp_path, "mine.py", "import os\nos._exit(7)\n")
    run = grade("08", "--file", str(path), "-k", "gemv,naive", timeout=300)
    assert run.code == 1
    for kernel in ("gemv", "matmul_naive"):  # the next kernel gets a fresh tracer, which ends again
        statuses = list(run.statuses(kernel).values())
        assert statuses[0] == "error" and set(statuses[1:]) == {"not_run"}
    message = run.results("gemv")[0]["message"]
    assert "ended while importing the file (exit code 7)" in message and "os._exit" in message


def test_missing_tilelang_is_one_plain_sentence(grade, tmp_path):  # cold: PYTHONPATH is read at start
    fake = tmp_path / "fake" / "tilelang"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise ImportError("no tilelang here")\n')
    run = grade("08", env={"PYTHONPATH": str(fake.parent)})
    assert run.code == 1
    assert "TileLang cannot be imported (no tilelang here): run pip install -e . first" in run.err
    assert "Traceback" not in run.out + run.err


@pytest.mark.gpu
@pytest.mark.parametrize("wrong", WRONG, ids=lambda w: f"p{w.puzzle_id}/{w.path.stem}")  # -k p08 picks a puzzle
def test_wrong_kernels_rejected_on_gpu(warm_grade, wrong: WrongKernel):
    run = warm_grade(wrong.puzzle_id, "--file", str(wrong.path), "-k", wrong.kernel)
    assert run.code == 1
    results = run.results(wrong.kernel)
    assert any(r["status"] in ("failed", "error", "crashed") for r in results), results
    assert all(r["message"] for r in results if r["status"] != "passed")


@pytest.mark.gpu
def test_bench_prints_every_kernel_against_torch(warm_grade):
    run = warm_grade("08", "--solutions", "--bench")
    assert run.code == 0
    benched = [r for r in run.results() if r["bench"]]
    from grader.discover import load_module, load_puzzle, puzzle_files

    puzzle = load_puzzle(load_module(puzzle_files(ROOT / "solutions")["08"]))
    assert {r["kernel"] for r in benched} == {k.function for k in puzzle.kernels}  # every rung has a bench case
    assert all(r["bench"]["kernel_ms"] > 0 and r["bench"]["torch_ms"] > 0 for r in benched)
    assert all(0 < r["bench"]["floor_ms"] <= r["bench"]["kernel_ms"] * 1.05 for r in benched)  # under its roofline
    assert "vs torch" in run.out and "roofline" in run.out


@pytest.mark.parametrize(
    ("name", "kernel", "wants"),
    [
        ("matmul_pipelined_serial_loop", "matmul_pipelined", "T.Pipelined"),
        ("matmul_naive_without_gemm", "matmul_naive", "T.gemm"),
    ],
)
def test_right_numbers_without_the_taught_construct_fail_the_concept_check(warm_grade, name, kernel, wants):
    from grader.discover import load_module, load_puzzle, puzzle_files

    spec = load_puzzle(load_module(puzzle_files(ROOT / "solutions")["08"])).kernel(kernel)
    # One simulated case: the concept check reads the TIR, the same in every case. nvcc unrolls a
    # multiply-add loop over a constant K, so each further case cost CI 10-90 s (odd_127x129x131: 96 s)
    # without adding to what is checked here.
    chosen = [c for c in spec.cases if c.simulate][:1]
    cases = ",".join(c.name for c in chosen)
    concept = str(ROOT / "tests" / "concept" / f"{name}.py")
    run = warm_grade("08", "--file", concept, "-k", kernel, "--exact", "--case", cases, "--device", "cpu")
    assert run.code == 1
    simulated = [r for r in run.results(kernel) if r["message"].startswith("simulated") or "numbers" in r["message"]]
    checked = [r for r in run.results(kernel) if r["status"] == "failed"]
    assert checked, run.results(kernel)
    assert all("the numbers are right, but" in r["message"] and wants in r["message"] for r in checked)
    assert simulated
    # A case failed by its concept check was still simulated: it keeps the prefix, and the summary counts it.
    small = len(chosen)
    assert sum(r["checked"] == "simulated" for r in run.results(kernel)) == small
    assert run.doc["runs"][0]["checked"][kernel]["simulated"] == small  # counted by its field, not its message
    assert f"{kernel}: 0 case(s) on a GPU, {small} simulated on the CPU" in run.out


ZERO_GRID = ROOT / "tests" / "wrong" / "p08" / "matmul_pipelined_grid_floors_to_zero.py"


def zero_grid_verdicts(run) -> dict[str, dict]:
    """``run``: a cold one (``grade``), whose stderr is its own stream: it must stay empty."""
    results = {r["case"]: r for r in run.results("matmul_pipelined")}
    assert run.code == 1 and run.err == "", run.err
    for case in ("odd_127x129x131", "skinny_33x1024x200"):  # M < BLOCK_M = 128: no block runs
        assert results[case]["status"] == "failed", results[case]
        assert "second argument (`by`, blockIdx.y) is 0 for this case" in results[case]["message"]
        assert "T.ceildiv(M, BLOCK_M)" in results[case]["message"]
    assert results["square_256"]["status"] == "passed"  # the other cases still ran
    return results


def test_a_grid_that_rounds_down_to_zero_fails_with_the_argument_named(grade):
    run = grade("08", "--file", str(ZERO_GRID), "-k", "matmul_pipelined", "--exact", "--device", "cpu", "--full")
    results = zero_grid_verdicts(run)
    assert "rounds down" in results["rect_150x300x100"]["hint"]  # 2 blocks of 64 along M = 150


@pytest.mark.gpu
def test_a_grid_that_rounds_down_to_zero_fails_on_the_gpu_without_a_crash(grade):
    run = grade("08", "--file", str(ZERO_GRID), "-k", "matmul_pipelined", "--exact", "--device", "cuda")
    results = zero_grid_verdicts(run)
    assert not [r for r in results.values() if r["status"] in ("crashed", "not_run")], results
