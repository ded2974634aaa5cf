"""Adversarial submissions (tests/adversarial/): each gets the expected verdict and a message a newcomer can
act on, graded as a learner grades: through the warm grader (``warm_grade``, a notebook's check), or as
`python -m grader` in a fresh process (``grade``) where the test is about that process (a syntax error
answered on stderr before any judge, the usage errors).

The CPU tests pass --device cpu, so they grade the same way on any machine: compile for sm_90a, simulate
the small case. The tests marked gpu run the same files on the GPU (`python -m pytest -q -m gpu
tests/test_adversarial.py`); they are skipped without CUDA.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from grader.outcome import Status
from tests.conftest import ROOT, GraderRun
from tests.inprocess import grade_simulated

ADVERSARIAL = ROOT / "tests" / "adversarial"
CASE = "tail_1000"  # puzzle 02: N = 1000 with BLOCK = 256, so the last block is partial; simulated on the CPU


def grade_02(grade, name: str, kernels: str, *extra: str, device: str = "cpu", timeout: float = 900) -> GraderRun:
    """Grade tests/adversarial/NAME against puzzle 02, only the named kernels, only the case CASE."""
    return grade(
        "02",
        "--file",
        str(ADVERSARIAL / name),
        "-k",
        kernels,
        "--exact",
        "--case",
        CASE,
        "--device",
        device,
        *extra,
        timeout=timeout,
    )


def only(run: GraderRun, kernel: str) -> dict:
    (result,) = run.results(kernel)
    return result


def plain(run: GraderRun) -> None:
    """What every run shares: a verdict for the learner, and no traceback without --verbose."""
    assert "Traceback" not in run.out + run.err, run.out + run.err
    assert run.code == 1, run.out + run.err


# ------------------------------------------------------------------------------ wrong numbers


def test_zeros_fail_and_the_hint_says_the_output_is_all_zeros(warm_grade):
    run = grade_02(warm_grade, "zeros.py", "add")
    plain(run)
    result = only(run, "add")
    assert result["status"] == Status.FAILED
    # an fp16 A + B is exactly 0 at a few of the 1000 elements of some draws: there zeros are right
    found = re.fullmatch(r"(\d+) of 1000 output elements wrong", result["message"])
    assert found and int(found.group(1)) >= 990, result["message"]
    assert result["hint"].startswith("Every element of C is 0, whatever the inputs")
    assert "tile map (x wrong, . right): xxxx" in run.out  # every tile of the grid is wrong


def test_a_kernel_that_ignores_its_inputs_fails_on_fresh_inputs(warm_grade):
    run = grade_02(warm_grade, "ignores_inputs.py", "add")
    plain(run)
    result = only(run, "add")
    assert result["status"] == Status.FAILED
    # the pattern's small whole numbers equal A + B within tolerance at a few elements of some draws
    found = re.fullmatch(r"(\d+) of 1000 output elements wrong", result["message"])
    assert found and int(found.group(1)) >= 990, result["message"]
    assert result["details"][1].startswith("C[0] = -3, expected ")  # the kernel's own -3, not the reference
    assert result["hint"].startswith("Nearly every element is wrong: check the formula against the spec")


def test_torch_instead_of_a_tilelang_kernel_is_refused(warm_grade):
    run = grade_02(warm_grade, "torch_function.py", "add,mul_relu")
    plain(run)
    plain_function, decorated = only(run, "add"), only(run, "mul_relu")
    assert plain_function["status"] == decorated["status"] == Status.ERROR
    assert plain_function["message"].startswith("`add` is a plain Python function, not a @tilelang.jit kernel")
    assert "Keep the stub's @tilelang.jit decorator" in plain_function["message"]
    assert decorated["message"].startswith("`mul_relu` never declares its input `A` as a tensor")
    assert "torch cannot run inside a kernel" in decorated["message"]


def test_cached_results_fail_because_the_grader_runs_the_kernel_itself(warm_grade):
    run = grade_02(warm_grade, "cached_output.py", "add,mul_relu")
    plain(run)
    for kernel in ("add", "mul_relu"):
        result = only(run, kernel)
        assert result["status"] == Status.FAILED
        assert result["hint"].startswith("Nothing was written to the output")


def test_no_tensor_is_shared_between_cases_and_outputs_start_poisoned(monkeypatch):
    """Inputs are drawn and outputs allocated afresh for every case: a kernel cannot find an earlier
    case's answer in its output, and the simulator never sees one case's tensors in another."""
    import grader.pipeline.simulate

    seen: list[dict[str, torch.Tensor]] = []
    real = grader.pipeline.simulate.simulate

    def spy(tir, tensors, *limits, **evidence):
        assert torch.isnan(tensors["C"]).all()  # poisoned before every run
        seen.append(dict(tensors))
        real(tir, tensors, *limits, **evidence)

    monkeypatch.setattr(grader.pipeline.simulate, "simulate", spy)
    solution = ROOT / "solutions" / "p02_vector_add.py"
    results = grade_simulated("02", solution, "add", ["even_4096", "tail_1000"])
    results += grade_simulated("02", solution, "add", ["tail_1000"], seed_offset=1)
    results += grade_simulated("02", solution, "add", ["tail_1000"])
    assert [r.status for r in results] == [Status.PASSED] * 4
    storages = [{x.untyped_storage().data_ptr() for x in tensors.values()} for tensors in seen]
    assert all(a.isdisjoint(b) for i, a in enumerate(storages) for b in storages[i + 1 :])
    assert len(seen) == 4
    assert not torch.equal(seen[1]["A"], seen[2]["A"])  # another seed offset, other inputs
    assert torch.equal(seen[1]["A"], seen[3]["A"])  # the same file and offset: the same inputs (a replay)


def test_the_inputs_depend_on_the_kernels_tir_not_only_on_the_cases_seed():
    """A file can read the case's seed from the course's files while it is traced; the judge's share of
    the seed comes from the admitted TIR, so the answers for the inputs a kernel is checked on cannot be
    part of that kernel (tests/attacks/baked_answer.py is the attack)."""
    from grader.pipeline.context import Context
    from grader.pipeline.grade import input_draw
    from grader.pipeline.trace import trace_tir
    from tests.inprocess import spec

    kernel = spec("02").kernel("add")
    case = kernel.case("tail_1000")
    path = ROOT / "solutions" / "p02_vector_add.py"
    module = __import__("solutions.p02_vector_add", fromlist=["add", "add_fragments"])
    add = trace_tir(module.add, kernel, case, path)
    other = trace_tir(module.add_fragments, spec("02").kernel("add_fragments"), case, path)
    ctx = Context(spec("02"), path, None, False, 0)
    assert input_draw(ctx, add, case) == input_draw(ctx, add, case)  # a rerun draws the same inputs
    assert input_draw(ctx, add, case) != input_draw(ctx, other, case)  # another TIR, other inputs
    assert input_draw(ctx, add, case) != input_draw(ctx, add, kernel.case("even_4096"))


def test_the_same_kernel_draws_the_same_inputs_wherever_its_file_lies(tmp_path):
    """The TIR holds its file's path and line numbers in source spans; the draw must not, or a saved
    failure would not replay in another checkout (CI's fresh clone drew other inputs than /work)."""
    from tilelang import tvm

    from grader.discover import load_module
    from grader.pipeline.context import Context
    from grader.pipeline.grade import input_draw
    from grader.pipeline.trace import trace_tir
    from tests.inprocess import spec

    kernel = spec("02").kernel("add")
    case = kernel.case("tail_1000")
    source = (ROOT / "solutions" / "p02_vector_add.py").read_text()
    elsewhere = tmp_path / "deeper" / "p02_vector_add.py"
    elsewhere.parent.mkdir()
    elsewhere.write_text("# a comment that moves every line down\n\n" + source)
    draws = []
    for path in (ROOT / "solutions" / "p02_vector_add.py", elsewhere):
        tir = trace_tir(load_module(path).add, kernel, case, path)
        assert path.name in tvm.ir.save_json(tir)  # the span really is there to be ignored
        draws.append(input_draw(Context(spec("02"), path, None, False, 0), tir, case))
    assert draws[0] == draws[1]


# ------------------------------------------------------------------------------ side effects


def test_writing_to_an_input_is_caught_in_simulation(warm_grade):
    run = grade_02(warm_grade, "mutates_input.py", "add")
    plain(run)
    result = only(run, "add")
    assert result["status"] == Status.FAILED
    assert result["message"] == "modified input A: the kernel must only read it"
    assert result["hint"].startswith("A kernel may only store to its outputs")


def test_an_out_of_bounds_store_is_caught_in_simulation(warm_grade):
    run = grade_02(warm_grade, "out_of_bounds.py", "add")
    plain(run)
    result = only(run, "add")
    assert result["status"] == Status.FAILED
    assert result["message"] == (
        "index 256 is out of bounds for dimension 0 of `scratch` (size 256): nothing guards a "
        "shared buffer's edge, so check this index, and the order of the indices, against its shape [256]"
    )


# ------------------------------------------------------------------------------ the file and its kernels


def test_a_syntax_error_names_the_line_and_what_to_do(grade):
    """Parsed, never run: the command line answers before any judge starts, in one line, exit 2 (cold: stdout
    apart from stderr)."""
    run = grade_02(grade, "syntax_error.py", "add")
    assert run.code == 2 and run.out == "" and "Traceback" not in run.err
    (line,) = run.err.strip().splitlines()
    assert line.startswith("grader: ") and "syntax_error.py:12: syntax error:" in line and "fix line 12" in line


def test_a_missing_kernel_says_to_keep_the_stub(warm_grade):
    run = grade_02(warm_grade, "missing_kernel.py", "add")
    plain(run)
    assert only(run, "add")["message"] == (
        "missing_kernel.py has no kernel named `add`: keep the stub's function, with its name and its "
        "@tilelang.jit decorator, and fill in its TODO."
    )


def test_a_renamed_kernel_is_pointed_out(warm_grade):
    run = grade_02(warm_grade, "renamed_kernel.py", "add")
    plain(run)
    assert only(run, "add")["message"] == (
        "renamed_kernel.py has no kernel named `add`, but it has a @tilelang.jit function `vector_add`: "
        "rename it `add` (the grader finds kernels by the stub's names)."
    )


def test_a_wrong_signature_says_what_the_grader_calls(warm_grade):
    run = grade_02(warm_grade, "wrong_signature.py", "add,mul_relu,add_fragments")
    plain(run)
    assert only(run, "add")["message"] == (
        "`add` has a parameter `BLOCK_SIZE` that the puzzle does not pass: the grader calls add(A, B, BLOCK, "
        "THREADS). Keep the stub's parameter names."
    )
    assert only(run, "mul_relu")["message"].startswith(
        "`mul_relu` has tensors (B, A, C); the puzzle expects inputs (A, B)"
    )
    assert only(run, "add_fragments")["message"].startswith("`add_fragments` has tensors (A, B, C, D)")


def test_a_python_error_in_the_kernel_body_names_the_line(warm_grade):
    run = grade_02(warm_grade, "python_error.py", "add")
    plain(run)
    result = only(run, "add")
    assert result["status"] == Status.ERROR
    assert result["message"] == "NameError: name 'j' is not defined (python_error.py:17)"
    assert result["hint"].startswith("Python stopped at that line of python_error.py")
    verbose = grade_02(warm_grade, "python_error.py", "add", "--verbose")
    assert "Traceback" in verbose.out and "python_error.py" in verbose.out


def test_tilelang_errors_become_sentences_with_the_line(warm_grade):
    run = grade_02(warm_grade, "tilelang_errors.py", "add,mul_relu,add_fragments")
    plain(run)
    dtype, layout, shapes = only(run, "add"), only(run, "mul_relu"), only(run, "add_fragments")
    assert all(r["status"] == Status.ERROR for r in (dtype, layout, shapes))
    assert dtype["message"].startswith("Expected integer argument as LHS of >> operator (right shift)")
    assert dtype["message"].endswith("(tilelang_errors.py:20)")
    assert "T.cast(value, T.int32)" in dtype["hint"]
    assert layout["message"] == (
        "one T.Parallel loop uses the fragment `pair` at two different positions, ((t + 1) % 256, 1) and (t, 0) "
        "(tilelang_errors.py:33)"
    )
    assert "copy the fragment to shared memory" in layout["hint"]
    assert shapes["message"] == (
        "T.copy cannot match the region it copies from with the region it copies to (tilelang_errors.py:53)"
    )
    assert shapes["hint"].startswith("Give both sides of T.copy the same number of dimensions")


def test_kernels_tilelang_rejects_while_tracing_get_a_line_and_a_hint():
    """The known-wrong kernels that TileLang rejects (tests/wrong, CAUGHT_BY compile) each read as a
    sentence with the learner's file:line and a hint, never as TileLang's raw exception alone."""
    from grader.pipeline.build import BuildFailed
    from grader.pipeline.trace import kernel_function, trace_tir
    from grader.trace.learner import load_learner
    from tests.corpora import wrong_kernels
    from tests.inprocess import spec

    for wrong in [w for w in wrong_kernels(ROOT) if w.caught_by == "compile"]:
        puzzle = spec(wrong.puzzle_id)
        kernel = puzzle.kernel(wrong.kernel)
        module, problem, _ = load_learner(wrong.path)
        assert not problem, problem
        with pytest.raises(BuildFailed) as caught:
            known = tuple(k.function for k in puzzle.kernels)
            trace_tir(kernel_function(module, kernel, known), kernel, kernel.cases[0], wrong.path)
        assert caught.value.location.startswith(f"{wrong.path.name}:"), wrong.path
        assert caught.value.hint, (wrong.path, caught.value.summary)
        assert "Traceback" not in caught.value.summary


# ------------------------------------------------------------------------------ containment


def test_a_hanging_kernel_times_out_and_the_next_kernel_is_still_graded(grade):
    run = grade_02(grade, "hang_then_correct.py", "add,mul_relu", "--timeout", "10", timeout=600)
    plain(run)
    hang, next_kernel = only(run, "add"), only(run, "mul_relu")
    assert hang["status"] == Status.TIMED_OUT
    # the judge said what the case was doing when the time ran out: simulating it, or running it on the GPU
    assert hang["message"].startswith(
        ("simulating this case on the CPU took longer than 10 s", "the kernel ran on the GPU for more than 10 s")
    ), hang["message"]
    assert next_kernel["status"] == Status.PASSED, next_kernel


def test_a_file_that_takes_too_much_memory_is_stopped(grade):
    run = grade_02(grade, "memory_hog.py", "add", "--memory-limit", "16")
    plain(run)
    result = only(run, "add")
    assert result["status"] == Status.ERROR
    assert result["message"].startswith("memory_hog.py:5: importing the file ran out of memory")


def digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")
            if p.is_file()}  # fmt: skip


def test_grading_never_writes_to_the_learners_file_or_folder(warm_grade, tmp_path: Path):
    folder = tmp_path / "learner"
    folder.mkdir()
    for name in ("zeros.py", "mutates_input.py"):
        shutil.copy(ADVERSARIAL / name, folder / name)
    before = digest(folder)
    for name in ("zeros.py", "mutates_input.py"):
        run = warm_grade("02", "--file", str(folder / name), "-k", "add", "--exact", "--case", CASE, "--device", "cpu",
                    "--save-failures", str(tmp_path / "saved"))  # fmt: skip
        assert run.code == 1
    assert digest(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == ["mutates_input.py", "zeros.py"]


# ------------------------------------------------------------------------------ where it is wrong, and replay


def test_save_failures_writes_the_case_and_the_replay_command_reproduces_it(warm_grade, tmp_path: Path):
    saved = tmp_path / "failures"
    run = grade_02(warm_grade, "zeros.py", "add", "--save-failures", str(saved))
    plain(run)
    result = only(run, "add")
    assert result["tile_map"] == {"output": "C", "tile": [256], "grid": [4], "cell": [1], "wrong": [1, 1, 1, 1]}
    path = Path(result["saved"])
    assert path == saved / "p02_add_tail_1000.pt" and path.is_file()
    record = torch.load(path, weights_only=True)
    # the case's seed, the offset (0), and the judge's draw from the kernel's TIR
    assert 2102 <= record["seed"] < 2102 + 2**30 and record["seed_offset"] == 0
    assert record["sizes"] == {"N": 1000} and record["params"]["BLOCK"] == 256
    assert record["versions"]["device"] == "simulated" and record["versions"]["tilelang"] == "0.1.15"
    assert set(record["inputs"]) == {"A", "B"} and set(record["actual"]) == set(record["expected"]) == {"C"}
    assert torch.equal(record["expected"]["C"], record["inputs"]["A"].double() + record["inputs"]["B"].double())
    assert (record["actual"]["C"] == 0).all()
    assert f"replay: {result['replay']}" in run.out and f"saved: {path}" in run.out
    argv = shlex.split(result["replay"])
    assert argv[:3] == ["python", "-m", "grader"]
    again = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert again.returncode == 1
    assert "FAIL  tail_1000" in again.stdout and f"{result['wrong']} of 1000 output elements wrong" in again.stdout
    assert again.stdout.count("FAIL") == 1  # that kernel, that case, nothing else


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["42"], "no puzzle 42"),
        (["08", "--file", "nowhere.py"], "there is no file nowhere.py"),
        (["02", "--solutions", "--case", "no_such_case"], "--case no_such_case: no case of that name in puzzle 02; "),
        (["02", "--memory-limit", "-1"], "--memory-limit takes a number of GB"),
        (["02", "--save-failures", "README.md"], "--save-failures wants a folder, and README.md is a file"),
        (["02", "--device", "tpu"], "invalid choice: 'tpu'"),
    ],
)
def test_usage_errors_exit_2_with_one_sentence(argv, says):
    completed = subprocess.run(
        [sys.executable, "-m", "grader", *argv], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert completed.returncode == 2, completed.stdout + completed.stderr
    assert says in completed.stderr
    assert "Traceback" not in completed.stdout + completed.stderr


def test_a_link_to_the_reference_is_not_graded(tmp_path: Path):
    """A repository cloned for grading keeps its symbolic links: a link named p08_matrix.py, or a folder link, to
    the course's solutions/ graded the reference under the learner's name (the red team: 5 passed, hidden too)."""
    (tmp_path / "p08_matrix.py").symlink_to(ROOT / "solutions" / "p08_matrix.py")
    (tmp_path / "linked").symlink_to(ROOT / "solutions")
    for path in (tmp_path / "p08_matrix.py", tmp_path / "linked" / "p08_matrix.py"):
        completed = subprocess.run(
            [sys.executable, "-m", "grader", "08", "--file", str(path), "-k", "gemv", "--device", "cpu"],
            cwd=ROOT, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert completed.returncode == 2, completed.stdout + completed.stderr
        assert "is a symbolic link (or lies behind one): grade the file itself" in completed.stderr
        assert "PASS" not in completed.stdout


def test_a_hidden_case_keeps_its_sizes_out_of_the_terminal_and_the_json(tmp_path: Path):
    """CI on students' repositories prints the CLI's output where they read it: a hidden case's line and its JSON
    result say whether it passed, never its sizes (the red team read M=777 K=333 in both)."""
    hidden = tmp_path / "hidden.json"
    case = {"puzzle": "08", "kernel": "gemv", "sizes": {"M": 53, "K": 47}, "params": {"BLOCK_M": 64, "BLOCK_K": 32}}
    case.update(seed=4242, simulate=True)
    hidden.write_text(json.dumps({"cases": [case]}))
    report = tmp_path / "report.json"
    argv = ["08", "--solutions", "-k", "gemv", "--exact", "--case", "hidden_1", "--device", "cpu"]
    argv += ["--json", str(report)]
    env = {**os.environ, "TILELANG_COURSE_HIDDEN_CASES": str(hidden)}
    done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "PASS  hidden_1" in done.stdout, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "hidden_1" in line)
    assert "M=" not in line and "53" not in line and "47" not in line, line
    (result,) = json.loads(report.read_text())["results"]
    assert result["case"] == "hidden_1" and result["sizes"] == {}, result


def test_how_a_hidden_case_fails_tells_nothing_of_its_sizes(tmp_path: Path):
    """tests/adversarial/hidden_sizes_by_failure_kind.py answers a hidden gemv job "not implemented" where M is odd
    and with an error where M is even. Graded on two hidden cases, M odd and M even, both read the same: FAILED,
    no cause, no time, the same line but for the case's name."""
    hidden = tmp_path / "hidden.json"
    base = {"puzzle": "08", "kernel": "gemv", "params": {"BLOCK_M": 64, "BLOCK_K": 32}, "seed": 7, "simulate": True}
    cases = [{**base, "sizes": {"M": 77, "K": 47}}, {**base, "sizes": {"M": 78, "K": 47}}]
    hidden.write_text(json.dumps({"cases": cases}))
    report = tmp_path / "report.json"
    argv = ["08", "--file", str(ADVERSARIAL / "hidden_sizes_by_failure_kind.py"), "-k", "gemv", "--exact"]
    argv += ["--case", "hidden_1,hidden_2", "--device", "cpu", "--json", str(report)]
    env = {**os.environ, "TILELANG_COURSE_HIDDEN_CASES": str(hidden)}
    done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    results = {r["case"]: r for r in json.loads(report.read_text())["results"]}
    assert sorted(results) == ["hidden_1", "hidden_2"], results
    for result in results.values():
        assert (result["status"], result.get("cause"), result["seconds"]) == (Status.FAILED, None, 0.0), result
    assert results["hidden_1"]["message"] == results["hidden_2"]["message"]
    lines = [line.replace("hidden_1", "hidden_N").replace("hidden_2", "hidden_N") for line in done.stdout.splitlines()]
    assert len([line for line in lines if "hidden_N" in line]) == 2
    assert len({line for line in lines if "hidden_N" in line}) == 1, done.stdout


# ------------------------------------------------------------------------------ on the GPU (the lead runs these)


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("name", "kernel", "status", "says"),
    [
        ("zeros.py", "add", Status.FAILED, "of 1000 output elements wrong"),  # GPU inputs differ from CPU ones
        ("ignores_inputs.py", "add", Status.FAILED, "of 1000 output elements wrong"),
        ("mutates_input.py", "add", Status.FAILED, "modified input A: the kernel must only read it"),
        ("cached_output.py", "add", Status.FAILED, "of 1000 output elements wrong"),
        ("cached_output.py", "mul_relu", Status.FAILED, "of 1000 output elements wrong"),
        ("torch_function.py", "add", Status.ERROR, "is a plain Python function, not a @tilelang.jit kernel"),
        ("torch_function.py", "mul_relu", Status.ERROR, "never declares its input `A` as a tensor"),
        ("renamed_kernel.py", "add", Status.ERROR, "rename it `add`"),
        ("wrong_signature.py", "add", Status.ERROR, "has a parameter `BLOCK_SIZE` that the puzzle does not pass"),
        ("python_error.py", "add", Status.ERROR, "NameError: name 'j' is not defined (python_error.py:17)"),
        ("tilelang_errors.py", "mul_relu", Status.ERROR, "uses the fragment `pair` at two different positions"),
    ],
)
def test_adversarial_submissions_on_the_gpu(warm_grade, name, kernel, status, says):
    run = grade_02(warm_grade, name, kernel, device="cuda")
    plain(run)
    result = only(run, kernel)
    assert result["status"] == status, result
    assert says in result["message"], result


@pytest.mark.gpu
def test_a_kernel_hanging_on_the_gpu_times_out_and_the_next_kernel_is_still_graded(grade):
    run = grade_02(grade, "hang_then_correct.py", "add,mul_relu", "--timeout", "10", device="cuda", timeout=600)
    plain(run)
    assert only(run, "add")["status"] == Status.TIMED_OUT
    assert only(run, "mul_relu")["status"] == Status.PASSED


@pytest.mark.gpu
def test_stores_outside_the_output_are_caught_by_the_guard_bands():
    """A launch that writes past the end of C and before its start (into the guard bands the grader puts
    around every output) fails with a sentence saying where; so does one that writes into its input."""
    from grader.devices import Device
    from grader.pipeline.build import COMPILE_ONLY_TARGET
    from grader.pipeline.context import Context
    from grader.pipeline.execute import execute_and_compare
    from tests.inprocess import spec

    puzzle = spec("02")
    kernel, case = puzzle.kernel("add"), puzzle.kernel("add").case(CASE)
    ctx = Context(puzzle, ADVERSARIAL / "zeros.py", Device("cuda", "gpu", COMPILE_ONLY_TARGET), False, 0)

    def past_the_end(A, B, C):
        C.copy_(A + B)
        flat = torch.as_strided(C, (C.numel() + 8,), (1,), C.storage_offset())
        flat[C.numel() + 3] = 1.0

    def before_the_start(A, B, C):
        C.copy_(A + B)
        torch.as_strided(C, (1,), (1,), C.storage_offset() - 2).fill_(1.0)

    def into_the_input(A, B, C):
        C.copy_(A + B)
        A.zero_()

    after = execute_and_compare(ctx, kernel, case, None, past_the_end)
    assert after.status == Status.FAILED
    assert after.message == "wrote outside the output C: 1 element(s) after it (nearest 3 element(s) past the end)"
    before = execute_and_compare(ctx, kernel, case, None, before_the_start)
    assert before.message == "wrote outside the output C: 1 element(s) before it (nearest 2 element(s) past the start)"
    mutated = execute_and_compare(ctx, kernel, case, None, into_the_input)
    assert mutated.message == "modified input A: the kernel must only read it"


def test_the_reference_is_computed_before_the_launch_and_kept_in_host_memory(monkeypatch):
    """A kernel that writes past its buffers on the GPU can zero what the judge keeps there: a copy of B that the
    reference was computed from after the launch let A @ 0 agree with zeros (tests/attacks/zero_the_reference.py,
    refused at admission since; this is the judge's own defence). The reference is computed before the launch,
    and it and the inputs' copies are moved to host memory (recorded here as every Tensor.to the judge makes)."""
    import grader.pipeline.execute as execute
    import grader.pipeline.inputs as inputs_module
    from grader.devices import Device
    from grader.pipeline.build import COMPILE_ONLY_TARGET
    from grader.pipeline.context import Context
    from tests.inprocess import spec

    puzzle = spec("02")
    kernel, case = puzzle.kernel("add"), puzzle.kernel("add").case(CASE)
    ctx = Context(puzzle, ADVERSARIAL / "zeros.py", Device("cuda", "gpu", COMPILE_ONLY_TARGET), False, 0)
    events: list[str] = []
    reference = inputs_module.reference_outputs
    recorded = lambda k, xs: events.append("reference") or reference(k, xs)  # noqa: E731
    monkeypatch.setattr(inputs_module, "reference_outputs", recorded)

    class Launch(execute.Gpu):  # the GPU backend with the inputs where this machine has them
        where = "cpu"

    monkeypatch.setattr(execute, "backend_for", lambda ctx: Launch())
    monkeypatch.setattr(inputs_module, "launch", lambda kernel, inputs, outputs: kernel(*inputs, *outputs))
    moved_to: list[str] = []
    to = torch.Tensor.to

    def recorded_to(self, *args, **kwargs):
        moved_to.append(str(args[0]) if args else str(kwargs.get("device")))
        return to(self, *args, **kwargs)

    def zeros_b_and_stores_zeros(A, B, C):
        events.append("launch")
        B.zero_()
        C.zero_()

    monkeypatch.setattr(torch.Tensor, "to", recorded_to)
    result = execute.execute_and_compare(ctx, kernel, case, None, zeros_b_and_stores_zeros)
    monkeypatch.undo()
    assert events == ["reference", "launch"]
    assert moved_to.count("cpu") >= len(kernel.inputs) + len(kernel.outputs), moved_to  # the copies, the reference
    assert result.status == Status.FAILED
    assert "modified input B: the kernel must only read it" in [result.message, *result.details]


@pytest.mark.gpu
def test_right_numbers_without_the_taught_construct_fail_on_the_gpu(warm_grade):
    run = warm_grade(
        "05", "--file", str(ROOT / "tests" / "concept" / "p05_row_sum_serial.py"), "-k", "row_sum", "--exact",
        "--device", "cuda",
    )  # fmt: skip
    plain(run)
    results = run.results("row_sum")
    assert results and all(r["status"] == Status.FAILED for r in results), results
    assert all(r["message"].startswith("the numbers are right, but the puzzle wants") for r in results)


@pytest.mark.gpu
def test_save_failures_on_the_gpu_records_the_device(warm_grade, tmp_path: Path):
    run = grade_02(warm_grade, "zeros.py", "add", "--save-failures", str(tmp_path), device="cuda")
    plain(run)
    result = only(run, "add")
    record = torch.load(result["saved"], weights_only=True)
    assert record["versions"]["device"] == torch.cuda.get_device_name()
    assert result["replay"].endswith("--device cuda")
