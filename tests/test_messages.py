"""Messages that come from evidence (issue 25, items 6 and 9): each sentence a learner reads names what the
grader saw, and none claims what it did not see. Fast tests build the evidence by hand and call the code
that turns it into words; a few grade learner-style kernels in a copy of a puzzle end to end (through the
warm grader; cold, as `python -m grader`, where stderr is what is checked)."""

from __future__ import annotations

from pathlib import Path

import torch

from grader.outcome import CaseResult, CauseKind, Status
from grader.pipeline.compare import compare
from grader.spec import DEFAULT_TOLERANCES

FP16 = DEFAULT_TOLERANCES["float16"]


def values(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=torch.float64) * 30


# ------------------------------------------------------------------ compare: the pattern of wrong elements


def test_a_guard_one_short_is_not_blamed_on_the_grid():
    # `if i < N - 1` with a T.ceildiv grid: the last element of the partial last tile is never written,
    # the rest of that tile is. The grid is not short, so T.ceildiv is not the advice.
    want = values((1000,))
    got = want.to(torch.float16)
    got[-1] = float("nan")
    result = compare("C", got, want, FP16, tile=(256,))
    assert result.unwritten_end == (0, 1)
    assert result.hint.startswith("The last 1 element(s) of C were never written, though their block wrote")
    assert "`i < N - 1`" in result.hint
    assert "ceildiv" not in result.hint


def test_a_guard_one_short_on_whole_tiles_says_the_same():
    want = values((4096,))
    got = want.to(torch.float16)
    got[-1] = float("nan")
    assert "a guard or loop bound stops short" in compare("C", got, want, FP16, tile=(1024,)).hint


def test_a_short_guard_along_the_columns_names_the_dimension():
    want = values((40, 70))
    got = want.to(torch.float16)
    got[:, -2:] = float("nan")
    result = compare("C", got, want, FP16, tile=(32, 64))
    assert result.unwritten_end == (1, 2)
    assert result.hint.startswith("The last 2 element(s) of C along dimension 1 were never written")


def test_a_whole_partial_tile_unwritten_still_asks_for_ceildiv():
    want = values((1000,))
    got = want.to(torch.float16)
    got[768:] = float("nan")  # 1000 // 256 = 3 blocks: the fourth, partial tile never runs
    result = compare("C", got, want, FP16, tile=(256,))
    assert "T.ceildiv(size, BLOCK) rather than size // BLOCK" in result.hint


def test_an_unwritten_end_without_a_known_tile_does_not_guess_which_bound():
    want = values((100,))
    got = want.to(torch.float16)
    got[-3:] = float("nan")
    hint = compare("C", got, want, FP16).hint
    assert hint.startswith("The last 3 element(s) of C were never written and everything before them is right")
    assert "ceildiv" not in hint


def test_an_output_full_of_inf_is_an_overflow_not_a_small_error():
    want = values((256,))
    got = torch.full((256,), float("inf"), dtype=torch.float16)
    got[::2] = float("-inf")
    result = compare("C", got, want, FP16, tile=(128,))
    assert result.infinite == 256
    assert "small" not in result.hint and "rounding" not in result.hint
    assert result.hint.startswith("256 element(s) of C are infinite: a value grew past the largest its type holds")
    assert "65504 in float16" in result.hint


def test_a_few_infinite_elements_are_counted():
    want = values((256,))
    got = want.to(torch.float16)
    got[7] = float("inf")
    result = compare("C", got, want, FP16)
    assert result.infinite == 1 and result.hint.startswith("1 element(s) of C are infinite")


def test_when_every_tile_is_partial_the_edge_is_not_blamed():
    # N = 20 with BLOCK = 32: the one tile is partial, so "only the partial tiles are wrong" says nothing.
    want = values((20,))
    got = want.to(torch.float16)
    got[3] += 50
    result = compare("C", got, want, FP16, tile=(32,))
    assert "partial tiles" not in result.hint
    assert result.hint.startswith("Some elements are wrong")


def test_only_the_partial_tile_wrong_beside_right_whole_tiles_still_says_so():
    want = values((100,))
    got = want.to(torch.float16)
    got[97] += 50
    assert compare("C", got, want, FP16, tile=(32,)).hint.startswith("Only the partial tiles at the edge are wrong")


# ------------------------------------------------------------------ what TileLang or nvcc rejects


def explained(error: BaseException, source: Path = Path("mine.py"), **kwargs):
    from grader.pipeline.build import Signature, failure_of

    signature = Signature("add", ("A", "B"), ("BLOCK",), ("C",))
    try:
        raise error
    except type(error) as raised:
        return failure_of(raised, source, signature, **kwargs)


NVCC_TEXT = """extern "C" __global__ void add_kernel(half_t* C) {
  if (((int)threadIdx.x) < 125) {
    C[0] = hpow(A[0], B[0]);
  }
}

Compilation error:
/x/common.h(621): warning #1444-D: type "longlong4" was declared deprecated
/tmp/tmpab/tvm_kernels.cu(3): error: no instance of overloaded function "hpow" matches the argument list
/tmp/tmpab/tvm_kernels.cu(9): error: something else
2 errors detected in the compilation of "/tmp/tmpab/tvm_kernels.cu".
Command: /usr/local/bin/nvcc -ccbin=/usr/bin/g++ --cubin -O3 -arch=sm_90a -o /tmp/tmpab/tvm_kernels.cubin
"""


def test_nvcc_error_is_shown_rather_than_its_command():
    failed = explained(RuntimeError(NVCC_TEXT))
    assert failed.summary == (
        'nvcc rejected the CUDA that TileLang generated for `add`: no instance of overloaded function "hpow" matches '
        "the argument list"
    )
    assert "Command" not in failed.summary and "--cubin" not in failed.summary
    assert failed.details == ("generated CUDA, line 3: C[0] = hpow(A[0], B[0]);",)
    assert failed.hint.startswith("CUDA has no `hpow` for the types it was given: compute in float32")


def test_infinite_while_loop_is_named():
    text = "Infinite while loop detected in TileLang\nCondition: True(<class 'bool'>) => True(<class 'bool'>)\n"
    failed = explained(RuntimeError(text))
    assert "`while True`" in failed.summary and "Condition" not in failed.summary
    assert "T.serial" in failed.hint


def test_a_missing_return_names_the_output_and_the_function_end():
    failed = explained(RuntimeError("Not all tensor allocated from `T.empty` are returned"), function_end=42)
    assert failed.summary == "`add` makes its output with T.empty but does not return it"
    assert failed.location == "mine.py:42"
    assert failed.hint == "End the kernel as the stub does, with `return C`."


def test_a_dtype_cuda_lacks_is_found_in_the_learners_file(tmp_path):
    source = tmp_path / "mine.py"
    source.write_text("x = 1\n\n    acc = T.cast(A[i], 'float23')\n")
    failed = explained(RuntimeError("InternalError: Cannot convert type float23x2 to CUDA type"), source)
    assert failed.summary == "CUDA has no type for the dtype `float23x2` used in `add`"
    assert failed.location == "mine.py:3"
    assert "T.float16" in failed.hint


def test_a_newcomers_dtype_spelling_gets_tilelangs_name():
    failed = explained(ValueError("unknown dtype `fp16`"))
    assert failed.summary == "`fp16` is not a dtype TileLang knows"
    assert failed.hint == "Write T.float16 (or the string 'float16')."
    failed = explained(AttributeError("module 'tilelang.language' has no attribute 'half'"))
    assert failed.hint == "Write T.float16 (or the string 'float16')."
    assert explained(AttributeError("module 'tilelang.language' has no attribute 'Paralel'")).summary == (
        "TileLang has no `T.Paralel`"
    )


# ------------------------------------------------------------------ end to end, on learner-style kernels


def learner_copy(tmp_path: Path, puzzle: str, edits: list[tuple[str, str]], name: str = "mine.py") -> Path:
    """A copy of the course's solution of ``puzzle`` (pNN_*.py) with each (old, new) edit made once, in order,
    each after the previous one: a learner's file with a few mistakes in it."""
    from tests.conftest import ROOT

    text = next((ROOT / "solutions").glob(f"p{puzzle}_*.py")).read_text()
    at = 0
    for old, new in edits:
        at = text.index(old, at)
        text = text[:at] + new + text[at + len(old) :]
    path = tmp_path / name
    path.write_text(text)
    return path


def test_rejected_kernels_say_why_end_to_end(warm_grade, tmp_path):
    path = learner_copy(
        tmp_path,
        "02",
        [
            ("    C[i] = A[i] + B[i]", "    C[i] = T.pow(A[i], B[i])"),  # add: fp16 pow, which nvcc has no overload for
            ("if i < N:\n                C[i] = T.max", "while True:\n                C[i] = T.max"),  # mul_relu
            # add_fragments: `return C` deleted
            ("T.copy(c, C[bx * BLOCK])\n        # TODO end\n\n    return C\n", "T.copy(c, C[bx * BLOCK])\n"),
        ],
    )
    run = warm_grade("02", "--file", str(path), "--case", "tail_1000")
    assert run.code == 1
    add, mul_relu, fragments = (run.results(k)[0] for k in ("add", "mul_relu", "add_fragments"))
    assert add["status"] == mul_relu["status"] == fragments["status"] == "error"
    assert add["message"].startswith("nvcc rejected the CUDA that TileLang generated for `add`: ")
    assert '"hpow"' in add["message"] and "Command:" not in add["message"]
    assert add["details"][0].startswith("generated CUDA, line ")
    assert mul_relu["message"].startswith("a `while` loop whose condition is always true")
    assert "(mine.py:" in mul_relu["message"]
    assert fragments["message"].startswith("`add_fragments` makes its output with T.empty but does not return it")
    assert (
        "(mine.py:" in fragments["message"] and fragments["hint"] == "End the kernel as the stub does, with `return C`."
    )
    assert "Traceback" not in run.out


# ------------------------------------------------------------------ T.reduce_sum's clear=True inside the loop

REDUCE_EACH_TILE = [
    (
        """        partial = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(partial)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_N):
                partial[i, j] += T.cast(tile[i, j], T.float32)
        T.reduce_sum(partial, sums, dim=1)
""",
        """        sums = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(sums)
        for k in T.serial(T.ceildiv(N, BLOCK_N)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_N], tile)
            T.reduce_sum(tile, sums, dim=1{clear})
""",
    )
]


def traced_tir(path: Path, puzzle: str, kernel: str, case: str):
    from grader.discover import load_module, load_puzzle
    from grader.pipeline.trace import kernel_function, trace_tir
    from tests.conftest import ROOT

    spec = load_puzzle(load_module(next((ROOT / "solutions").glob(f"p{puzzle}_*.py")))).kernel(kernel)
    return trace_tir(kernel_function(load_module(path), spec), spec, spec.case(case), path)


def test_reduce_sum_clearing_on_every_tile_is_named_from_the_tir(tmp_path):
    from grader.pipeline.checks import reduce_restarts

    ((old, new),) = REDUCE_EACH_TILE
    trap = learner_copy(tmp_path, "05", [(old, new.format(clear=""))], "trap.py")
    right = learner_copy(tmp_path, "05", [(old, new.format(clear=", clear=False"))], "right.py")
    found = reduce_restarts(traced_tir(trap, "05", "row_sum_tiled", "odd_127x129"))
    assert found == [
        "T.reduce_sum into `sums` inside the T.serial loop over `k` clears `sums` on every step (clear=True is its "
        "default) and nothing in the loop reads it, so only the last step's tile counts: T.clear(sums) once before "
        "the loop and pass clear=False, or add the tiles into a float32 fragment and reduce once after the loop"
    ]
    assert reduce_restarts(traced_tir(right, "05", "row_sum_tiled", "odd_127x129")) == []
    # the course's own kernel, and one that clears on the first tile only (under an if), are not flagged
    from tests.conftest import ROOT

    assert (
        reduce_restarts(traced_tir(ROOT / "solutions" / "p05_reduce_sum.py", "05", "row_sum_tiled", "odd_127x129"))
        == []
    )
    first = ROOT / "tests" / "right" / "p05" / "row_sum_tiled_first_tile_clears.py"
    assert reduce_restarts(traced_tir(first, "05", "row_sum_tiled", "odd_127x129")) == []


def test_reduce_sum_trap_is_the_hint_end_to_end(warm_grade, tmp_path):
    ((old, new),) = REDUCE_EACH_TILE
    path = learner_copy(tmp_path, "05", [(old, new.format(clear=""))])
    run = warm_grade("05", "--file", str(path), "-k", "row_sum_tiled", "--case", "odd_127x129")
    (result,) = run.results("row_sum_tiled")
    assert result["status"] == "failed"
    assert result["hint"].startswith("the likely cause: T.reduce_sum into `sums` inside the T.serial loop over `k`")
    assert "Nearly every element is wrong" not in run.out


# ------------------------------------------------------------------ a judge killed
# (a case past its time limit, a judge that dies or says garbage: tests/test_supervisor.py, with scripted judges)


def test_the_oom_count_is_read_where_linux_keeps_it():
    from grader.processes.supervisor import oom_kills

    found = oom_kills()
    if Path("/proc/vmstat").is_file() and "oom_kill " in Path("/proc/vmstat").read_text():
        assert isinstance(found, int) and found >= 0
    else:
        assert found is None


# `add` with a long unrolled loop that adds nothing: right, but slow to compile and to simulate
SLOW_ADD = (
    "            if i < N:\n                C[i] = A[i] + B[i]",
    "            if i < N:\n                acc = T.alloc_var(T.float32)\n                acc = 0.0\n"
    "                for r in T.unroll(6000):\n                    acc += T.cast(A[i], T.float32) * 0.0\n"
    "                C[i] = A[i] + B[i] + T.cast(acc, T.float16)",
)


def judge_pid(grader_pid: int) -> int | None:
    """The judge: the grader's child started by multiprocessing's spawn."""
    children = Path(f"/proc/{grader_pid}/task/{grader_pid}/children")
    for pid in children.read_text().split() if children.exists() else []:
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return int(pid)
        except OSError:
            continue
    return None


def test_killing_the_judge_does_not_blame_memory_end_to_end(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    from grader.processes.supervisor import oom_kills
    from tests.conftest import ROOT

    if oom_kills() is None or not Path("/proc/self/task").exists():
        import pytest

        pytest.skip("needs Linux's /proc (the out-of-memory killer's count, a process's children)")
    path = learner_copy(tmp_path, "02", [SLOW_ADD])  # the judge is still at work when it is killed
    grader = subprocess.Popen(
        [sys.executable, "-m", "grader", "02", "--file", str(path), "-k", "add", "--exact"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while (pid := judge_pid(grader.pid)) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert pid is not None, "the judge never started"
        time.sleep(4)
        before = oom_kills()
        os.kill(pid, signal.SIGKILL)
        out, _ = grader.communicate(timeout=120)
    finally:
        if grader.poll() is None:
            grader.kill()
    if oom_kills() != before:  # the machine's out-of-memory killer stopped something meanwhile: no verdict here
        return
    assert grader.returncode in (1, 2)  # a CRASH, or a puzzle that could not load if it died before describing it
    assert "the grading process was killed (signal 9)" in out
    assert "not by the out-of-memory killer" in out and "ran out of memory" not in out


# ------------------------------------------------------------------ one error, printed once


def test_repeated_errors_fold_into_one_line():
    from grader.frontends import render as report

    def error(kernel, case, message="mine.py:3: syntax error"):
        return CaseResult("08", kernel, case, Status.ERROR, {}, message)

    first = error("gemv", "square_256")
    assert report.repeat_key("mine.py", first) == report.repeat_key("mine.py", error("gemv", "tail_1000"))
    assert report.repeat_key("mine.py", first) != report.repeat_key("mine.py", error("gemv", "x", "other"))
    failed = CaseResult("08", "gemv", "a", Status.FAILED, {}, "3 of 9 output elements wrong")
    assert report.repeat_key("mine.py", failed) is None  # numbers differ case by case: never folded
    same = [error("gemv", f"case_{n}") for n in range(6)]
    assert report.repeated_line(same, "gemv square_256") == (
        "  ERROR 6 more case(s) (case_0 case_1 case_2 case_3 ...): the same as gemv square_256 above"
    )
    other = [error("matmul_naive", "square_256")]
    assert report.repeated_line(other, "gemv square_256") == (
        "  ERROR 1 case(s) (square_256): the same as gemv square_256 above"
    )


def test_a_missing_parenthesis_is_printed_once_end_to_end(grade, tmp_path):
    path = learner_copy(
        tmp_path, "08", [("T.Kernel(T.ceildiv(M, BLOCK_M), threads", "T.Kernel(T.ceildiv(M, BLOCK_M, threads")]
    )
    run = grade("08", "--file", str(path))
    # parsed by the command line before any judge starts: one line for the whole file, not one per kernel
    # (cold: stdout apart from stderr)
    assert run.code == 2 and run.out == "", run.out
    (line,) = run.err.strip().splitlines()
    assert line.startswith("grader: ") and line.count("syntax error") == 1, line


# ------------------------------------------------------------------ the command line


def grader_command(*args: str, **kwargs):
    import subprocess
    import sys

    from tests.conftest import ROOT

    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, **kwargs
    )


def test_json_dash_writes_the_document_to_stdout_and_the_report_to_stderr(tmp_path):
    import json

    done = grader_command("02", "--solutions", "-k", "add", "--exact", "--case", "tail_1000", "--json", "-")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)  # stdout holds the JSON document and nothing else
    assert [(r["kernel"], r["case"], r["status"]) for r in document["results"]] == [("add", "tail_1000", "passed")]
    assert "PASS  tail_1000" in done.stderr
    assert not (Path(__file__).resolve().parent.parent / "-").exists()


def test_no_match_lists_the_names_that_exist():
    kernels = grader_command("02", "-k", "ad_fragments")
    assert kernels.returncode == 2
    said = "grader: -k ad_fragments: puzzle 02 has no kernel of that name (its kernels: add, mul_relu, add_fragments)"
    assert said in kernels.stderr
    cases = grader_command("02", "-k", "mul_relu", "--case", "tail_100")
    assert cases.returncode == 2
    line = next(line for line in cases.stderr.splitlines() if line.startswith("grader: --case tail_100"))
    assert line.startswith("grader: --case tail_100: no case of that name in puzzle 02; the cases of mul_relu: ")
    assert "tail_1000" in line and "hidden_" not in line


def test_ctrl_c_stops_quietly_and_leaves_no_temporary_folders(tmp_path):
    import glob
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    path = learner_copy(tmp_path, "02", [SLOW_ADD])  # Ctrl-C lands while the judge works
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    grader = subprocess.Popen(
        [sys.executable, "-m", "grader", "02", "--file", str(path), "-k", "add", "--exact"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job is
        env={**os.environ, "TMPDIR": str(scratch)},  # where its judges' folders are made
    )
    try:
        deadline = time.monotonic() + 120
        while not glob.glob(str(scratch / "tilelang-course-judge-*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(6)  # tracing and compiling under way
        os.killpg(grader.pid, signal.SIGINT)  # what Ctrl-C in a terminal sends
        out, _ = grader.communicate(timeout=60)
    finally:
        if grader.poll() is None:
            grader.kill()
    assert grader.returncode == 130, out
    assert out.rstrip().endswith("grader: stopped (Ctrl-C); the cases above were graded, the rest were not")
    assert "KeyboardInterrupt" not in out and "!!!!" not in out and "Traceback" not in out
    time.sleep(1)
    assert not glob.glob(str(scratch / "tilelang-course-judge-*"))
    assert not [p for p in scratch.rglob("*") if p.name.startswith(("tvm_kernels", "tmpxft"))]


# ------------------------------------------------------------------ notebook lines wrap between words


def test_notebook_verdict_lines_wrap_between_words_within_the_width():
    from grader.frontends import render

    WIDTH = render.NOTEBOOK.width

    hint = (
        "the likely cause: T.reduce_sum into `sums` inside the T.serial loop over `k` clears `sums` on every step "
        "(clear=True is its default) and nothing in the loop reads it, so only the last step's tile counts: "
        "T.clear(sums) once before the loop and pass clear=False, or add the tiles into a float32 fragment"
    )
    message = "127 of 127 output elements wrong; " + "and a long explanation " * 6
    detail = "wrong tiles: 16 of 16 (0, 1, 2, 3, 4, ...); tile = 8 " + "x" * 140  # one word longer than a line
    result = CaseResult("03", "row_sum_tiled", "odd_127x129", "failed", {}, message, details=[detail], hint=hint)
    result.checked = "simulated"
    lines = render.case_lines(result, layout=render.NOTEBOOK)
    assert lines[0].startswith("  FAIL  odd_127x129            simulated on CPU: 127 of 127")
    long_word = [line for line in lines if "x" * 140 in line]
    assert len(long_word) == 1  # kept whole, on a line of its own
    assert all(len(line) <= WIDTH for line in lines if line not in long_word), lines
    words = " ".join(line.strip() for line in lines).split()
    see_inside = ' see inside: explain("row_sum_tiled", case="odd_127x129")'  # a failed simulated case offers the view
    said = "FAIL odd_127x129 simulated on CPU: " + message + " " + detail + " hint: " + hint + see_inside
    assert words == said.split()
    hint_at = next(i for i, line in enumerate(lines) if line.startswith("        hint: "))
    see_at = next(i for i, line in enumerate(lines) if line.startswith("        see inside: "))
    assert all(line.startswith(" " * 10) for line in lines[hint_at + 1 : see_at])


def test_the_closing_lines_never_claim_a_case_compiled_that_did_not(warm_grade, tmp_path):
    path = learner_copy(tmp_path, "02", [("    C[i] = A[i] + B[i]", "    C[i] = T.pow(A[i], B[i])")])
    run = warm_grade("02", "--file", str(path), "-k", "add,add_fragments", "--case", "tail_1000")
    assert run.statuses() == {"add[tail_1000]": "error", "add_fragments[tail_1000]": "passed"}
    assert "every case was compiled" not in run.out and "so TileLang accepts it" not in run.out
    assert "add_fragments: 0 case(s) on a GPU, 1 simulated on the CPU, 0 only compiled" in run.out


def test_an_off_by_one_guard_end_to_end(warm_grade, tmp_path):
    path = learner_copy(tmp_path, "02", [("            if i < N:\n", "            if i < N - 1:\n")])
    run = warm_grade("02", "--file", str(path), "-k", "add", "--exact", "--case", "tail_1000")
    (result,) = run.results("add")
    assert result["status"] == "failed" and result["wrong"] == 1
    assert result["hint"].startswith("The last 1 element(s) of C were never written, though their block wrote")
    assert "ceildiv" not in result["hint"]


def test_an_overflowing_exponential_end_to_end(warm_grade, tmp_path):
    path = learner_copy(tmp_path, "02", [("    C[i] = A[i] + B[i]", "    C[i] = T.exp(A[i] * 100.0) + B[i]")])
    run = warm_grade("02", "--file", str(path), "-k", "add", "--exact", "--case", "tail_1000")
    (result,) = run.results("add")
    assert result["status"] == "failed"
    assert (
        "element(s) of C are infinite: a value grew past the largest its type holds (65504 in float16)"
        in (result["hint"])
    )
    assert "rounding" not in result["hint"]


def test_the_judge_announces_a_compile_only_while_it_is_under_way():
    import threading
    from concurrent.futures import Future
    from types import SimpleNamespace

    from grader.pipeline.context import Build
    from grader.processes.judge import announce_phases
    from grader.processes.protocol import Channel, decode

    class Pipe:
        def __init__(self):
            self.sent = []

        def send(self, data):
            self.sent.append(decode(data).phase)

    class Conn(Channel):
        def __init__(self):
            super().__init__(Pipe())

        @property
        def sent(self):
            return self.conn.sent

    cpu = SimpleNamespace(device=SimpleNamespace(problem="", mode="cpu"))
    small, large = SimpleNamespace(simulate=True), SimpleNamespace(simulate=False)
    pending: Future = Future()
    threading.Timer(0.2, pending.set_result, ["kernel"]).start()
    conn = Conn()
    announce_phases(conn, cpu, small, Build(None, pending))
    assert conn.sent == ["compiling", "simulating"] and pending.done()
    conn = Conn()
    announce_phases(conn, cpu, large, Build(None, pending))  # compiled already, and only compiled
    assert conn.sent == []
    conn = Conn()
    announce_phases(conn, SimpleNamespace(device=SimpleNamespace(problem="", mode="cuda")), large, Build(None, pending))
    assert conn.sent == ["running"]


def test_a_python_list_indexed_by_a_kernel_value_says_why():
    # what TileLang raises for `scale[bx % 2]` with `scale` a Python list (seen with python -m grader 02)
    failed = explained(TypeError("list indices must be integers or slices, not FloorMod"))
    assert failed.summary == (
        "a Python list is indexed by a kernel value (FloorMod), which is known only when the kernel runs"
    )
    assert "T.alloc_local" in failed.hint and "range() over a block parameter" in failed.hint


# ------------------------------------------------------------------ issue 37: sentences that point at the bug


def wrong_file(puzzle: str, name: str) -> Path:
    from tests.conftest import ROOT

    return ROOT / "tests" / "wrong" / f"p{puzzle}" / f"{name}.py"


def test_a_missing_relu_is_read_from_the_values():
    # mul_relu without the ReLU: the wrong elements are exactly those expected 0, holding the negative product
    from grader.i18n import tr

    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(1000, generator=g, dtype=torch.float64), torch.randn(1000, generator=g, dtype=torch.float64)
    want = (a * b).clamp_min(0)
    hint = compare("C", (a * b).to(torch.float16), want, FP16, tile=(256,)).hint
    assert hint.startswith("Every wrong element of C should be 0 and holds a negative value instead")
    assert "T.max(x, 0)" in hint
    assert tr(hint, "zh_CN") != hint
    # the ReLU taken of each factor: the wrong ones hold 0 where a positive product was expected
    cut = compare("C", (a.clamp_min(0) * b.clamp_min(0)).to(torch.float16), want, FP16).hint
    assert cut.startswith("Every wrong element of C holds 0 where a value past it was expected")
    # T.min for T.max: every value on both sides of 0 is wrong
    assert "Use T.max(x, 0), not T.min" in compare("C", (a * b).clamp_max(0).to(torch.float16), want, FP16).hint
    # a clamp at another bound is named with it
    assert "T.max(x, -0.5)" in compare("C", (a * b).to(torch.float16), (a * b).clamp_min(-0.5), FP16).hint
    # wrong values with no clamp in them get no clamp sentence
    other = (a * b).clone()
    other[::7] += 3
    assert "clamp" not in compare("C", other.to(torch.float16), a * b, FP16).hint


def test_a_missing_relu_is_named_on_a_graded_kernel():
    from tests.inprocess import grade_simulated

    (result, *_) = grade_simulated("02", wrong_file("02", "mul_relu_no_relu"), "mul_relu")
    assert result.status == "failed"
    assert result.hint.startswith("Every wrong element of C should be 0 and holds a negative value instead")
    assert "tile offsets" not in result.hint
    (inputs, *_) = grade_simulated("02", wrong_file("02", "mul_relu_on_inputs"), "mul_relu")
    assert inputs.hint.startswith("Every wrong element of C holds 0 where a value past it was expected")


def test_a_flash_attention_without_rescale_is_named_from_its_cases():
    # few_keys_50x37 (one key tile) passes; rect_40x70x32 (five) fails: the sentence names the carry between tiles
    from tests.inprocess import grade_simulated

    results = grade_simulated(
        "07", wrong_file("07", "flash_no_accumulator_rescale"), "flash_attention", ["few_keys_50x37", "rect_40x70x32"]
    )
    one, several = results
    assert (one.status, several.status) == ("passed", "failed")
    assert several.hint.startswith(
        "The case(s) where the T.serial loop over `j` runs one step pass (few_keys_50x37) and this one, where it "
        "runs 5, fails: what one tile hands to the next is wrong."
    )
    assert "exp2((m_old - m_new) * scale)" in several.hint and "tile offsets" not in several.hint
    # alone, the failing case shows no pattern: no claim about the one-tile case
    path = wrong_file("07", "flash_no_accumulator_rescale")
    (alone,) = grade_simulated("07", path, "flash_attention", ["rect_40x70x32"])
    assert "runs one step pass" not in alone.hint


def test_a_running_max_of_one_tile_fails_only_with_large_logits_and_says_so():
    from grader.i18n import tr
    from tests.inprocess import grade_simulated

    results = grade_simulated("07", wrong_file("07", "flash_max_of_tile_only"), "flash_attention")
    statuses = {r.case: r.status for r in results}
    assert statuses == {"few_keys_50x37": "passed", "rect_40x70x32": "passed", "large_logits_70x150": "failed"}
    large = results[-1]
    assert large.hint.startswith(
        "Only this case, whose inputs are large (Q x 100), fails, and the cases with ordinary inputs pass "
        "(few_keys_50x37, rect_40x70x32): a value overflows float32 on the way"
    )
    assert "never written" not in large.hint  # the NaN came from inf - inf, not from a missing store
    assert tr(large.hint, "zh_CN") != large.hint
    # the two-pass kernel's pass 1 keeping the last tile's max: its TIR cause stays the hint, the pattern is added
    two = grade_simulated("07", wrong_file("07", "two_pass_max_of_last_tile"), "attention_two_pass")[-1]
    assert two.status == "failed"
    assert two.hint.startswith("the likely cause: T.reduce_max into `row_max` inside the T.serial loop over `j`")
    assert any(d.startswith("also: Only this case, whose inputs are large (Q x 100), fails") for d in two.details)


P_IN_A_FRAGMENT = [  # flash_attention's P in a fragment: each thread then needs P[i, c] for every key c
    ("def flash_attention(", "def flash_attention("),
    ("P = T.alloc_shared(", "P = T.alloc_fragment("),
]


def test_a_fragment_read_across_threads_is_found_in_the_tir(tmp_path):
    from grader.pipeline.build import foreign_fragment_reads
    from tests.conftest import ROOT

    path = learner_copy(tmp_path, "07", P_IN_A_FRAGMENT)
    (read,) = foreign_fragment_reads(traced_tir(path, "07", "flash_attention", "few_keys_50x37"), path)
    assert (read.buffer, read.access, read.index, read.loop) == ("P", "P[i, c]", "c", "(i, d)")
    assert "acc[i, d] += P[i, c]" in path.read_text().splitlines()[read.line - 1]
    solution = ROOT / "solutions" / "p07_flash_attention.py"
    assert foreign_fragment_reads(traced_tir(solution, "07", "flash_attention", "few_keys_50x37"), solution) == []


def test_p_kept_in_a_fragment_names_the_layout_failure_end_to_end(warm_grade, tmp_path):
    path = learner_copy(tmp_path, "07", P_IN_A_FRAGMENT)
    run = warm_grade("07", "--file", str(path), "-k", "flash_attention", "--exact", "--case", "few_keys_50x37")
    (result,) = run.results("flash_attention")
    assert result["status"] == "error"
    lines = path.read_text().splitlines()
    start = next(n for n, text in enumerate(lines, 1) if text.startswith("def flash_attention("))
    line = next(n for n, text in enumerate(lines, 1) if n > start and "acc[i, d] += P[i, c]" in text)
    assert result["message"].startswith(
        "TileLang cannot lay out the fragment `P` over the threads: the T.Parallel loop over (i, d) reads `P[i, c]`"
    )
    assert f"(mine.py:{line})" in result["message"]
    assert "CanProveEqual" not in result["message"]
    assert "T.alloc_shared" in result["hint"]


CORNER_COPY = ("T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, c, 0:K], taps)", "T.copy(W[by * BLOCK_O, c, 0], taps)")


def test_a_tile_copied_from_its_first_element_is_named():
    from grader.pipeline.checks import corner_copies
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated

    path = wrong_file("09", "channels_weights_by_corner")
    assert CORNER_COPY[1] in path.read_text()
    (result, *_) = grade_simulated("09", path, "conv1d_channels")
    assert result.status == "failed"
    assert result.hint == (
        "the likely cause: T.copy(W[by * 32, c, 0], taps) gives the tile of W by its first element only: TileLang "
        "then fits the 32x3 tile `taps` to the last 2 axes of W (axes 1, 2), so it does not run along axis 0, where "
        "`by * 32` steps in tiles of 32. Write the slices out, one per axis of W: W[by * 32 : by * 32 + 32, c, 0:3]"
    )
    # the course's kernel slices W out; its X[c, t0] into a 1-D window is a corner too, stepping by 1: not named
    solution = ROOT / "solutions" / "p09_conv1d.py"
    assert corner_copies(traced_tir(solution, "09", "conv1d_channels", "small_4to8_256_k3")) == []


def test_an_output_only_ever_added_to_atomically_is_blamed_on_the_missing_zeroing():
    """tests/wrong/p05/row_sum_tiled_scalar_atomic_not_zeroed.py: every element is NaN, but written (by adds
    onto the NaN it started as), so "nothing was written" would mislead; the TIR says what happened."""
    from tests.inprocess import grade_simulated

    path = Path(__file__).parent / "wrong" / "p05" / "row_sum_tiled_scalar_atomic_not_zeroed.py"
    for result in grade_simulated("05", path, "row_sum_tiled"):
        assert result.status == Status.FAILED, result
        assert result.hint.startswith("the likely cause: `C` only ever receives T.atomic_add"), result.hint
    right = Path(__file__).parent / "right" / "p05" / "row_sum_tiled_scalar_atomic_per_row.py"
    assert {r.status for r in grade_simulated("05", right, "row_sum_tiled")} == {Status.PASSED}


def test_a_layout_conflict_keeps_tilelangs_words_names_the_line_and_the_way_around(warm_grade):
    """07 written with T.gemm and P in a fragment: TileLang's "Layout infer conflict between S and P" at a
    32 x 16 tile on 128 threads (a build failure: the CLI, which compiles), said with the T.copy that joins
    them and what builds instead."""
    path = Path(__file__).parent / "wrong" / "p07" / "flash_gemm_p_in_fragment.py"
    run = warm_grade("07", "--file", str(path), "-k", "flash_attention", "--exact", "--case", "rect_40x70x32")
    (result,) = run.results("flash_attention")
    assert result["status"] == "error", result
    assert "Layout infer conflict between S and P in T.Parallel loop" in result["message"], result["message"]
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "T.copy(S, P)" in text)
    assert f"flash_gemm_p_in_fragment.py:{line}" in result["message"], result["message"]
    assert "Keep `P` in shared memory" in result["hint"], result["hint"]


PADDED_B_TILE = [  # matmul_shared with its B tile padded by two columns against bank conflicts (07's prose)
    (
        "B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)",
        "B_tile = T.alloc_shared((BLOCK_K, BLOCK_N + 2), T.float16)",
    ),
    ("T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)", "T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile[:, 0:BLOCK_N])"),
    ("T.gemm(A_tile, B_tile, acc)", "T.gemm(A_tile, B_tile[:, 0:BLOCK_N], acc)"),
]


def test_a_padded_gemm_tile_keeps_tilelangs_check_and_names_the_tile_and_its_line(warm_grade, tmp_path):
    """TileLang's swizzle check for a T.gemm operand tile ("continuous=66, vector_size=8", or "stride=66" for rows)
    was all a learner saw; the tile, its line and the sizes that build are said now (sm_90a: the CPU compiles)."""
    path = learner_copy(tmp_path, "08", PADDED_B_TILE)
    run = warm_grade("08", "--file", str(path), "-k", "matmul_shared", "--exact", "--case", "square_256")
    (result,) = run.results("matmul_shared")
    assert result["status"] == "error", result
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if "B_tile = T.alloc_shared" in text)
    assert result["message"] == (
        'TileLang cannot swizzle `B_tile` for the Tensor Cores ("continuous=66, vector_size=8"): its rows are 66 '
        "elements long, and TileLang swizzles the tiles T.gemm reads in 16-byte pieces across a row, which needs "
        f"whole patterns of them (64 fp16 elements always work) (mine.py:{line})"
    )
    assert "do not pad rows against bank conflicts" in result["hint"].lower(), result["hint"]


def test_an_update_a_parallel_loop_repeats_is_named_from_the_tir(tmp_path):
    """softmax_reciprocal_in_a_2d_parallel's inversion, in T.Parallel(i, j) with an index of i alone, is named; the
    same update under ``if j == 0`` (one iteration of j does it) and in a T.Parallel over i alone are not."""
    from grader.pipeline.checks import repeated_updates
    from tests.conftest import ROOT

    wrong = ROOT / "tests" / "wrong" / "p06" / "softmax_reciprocal_in_a_2d_parallel.py"
    found = repeated_updates(traced_tir(wrong, "06", "softmax", "square_256"))
    assert found == [
        "`row_sum` is updated from itself in a T.Parallel over `j`, which its index leaves out: on the GPU each "
        "thread repeats the update for every `j` it covers (the simulator does it once). Update `row_sum` in a "
        "T.Parallel over its own indices only"
    ]
    update = "            row_sum[i] = 1.0 / row_sum[i]"
    text = wrong.read_text()
    assert update in text
    guarded = tmp_path / "guarded.py"
    guarded.write_text(text.replace(update, "            if j == 0:\n    " + update))
    assert repeated_updates(traced_tir(guarded, "06", "softmax", "square_256")) == []
    one_axis = tmp_path / "one_axis.py"
    header = "        for i, j in T.Parallel(BLOCK_M, BLOCK_N):  # noqa: B007  (the bug: the update leaves j out)\n"
    assert header + update in text
    one_axis.write_text(text.replace(header + update, "        for i in T.Parallel(BLOCK_M):\n" + update))
    assert repeated_updates(traced_tir(one_axis, "06", "softmax", "square_256")) == []


def test_small_errors_are_put_down_to_what_the_tir_shows(tmp_path):
    """Errors past the tolerance but small: the numbers alone asked "a sum accumulated in float16?". With the TIR,
    a kernel that keeps one in 16 bits is told which, and a softmax whose mask lets one padding column in (which
    keeps every sum in float32) is pointed at the mask instead."""
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated

    narrow = ROOT / "tests" / "wrong" / "p05" / "row_sum_tiled_fp16_accumulator.py"
    (result, *_) = [r for r in grade_simulated("05", narrow, "row_sum_tiled") if r.status == Status.FAILED]
    assert result.cause.kind == CauseKind.IMPRECISE
    assert "and the kernel adds into partial (float16)" in result.hint
    mask = learner_copy(tmp_path, "06", [("if_then_else(j < N,", "if_then_else(j <= N,")])
    failed = [r for r in grade_simulated("06", mask, "softmax") if r.status == Status.FAILED]
    assert failed and all(r.cause.kind == CauseKind.IMPRECISE for r in failed), [r.hint for r in failed]
    assert failed[0].hint.startswith(
        "The errors are small but larger than rounding allows, and no running sum here is kept in 16 bits: look "
        "for an element counted that should not be (a mask or a guard one off"
    )


# ------------------------------------------------------------------ issue 40: hints the held-out kernels missed


def test_a_mask_without_its_tile_offset_is_named_not_a_missing_rescale():
    """flash attention masking `c < N` (c counted from 0 in every key tile): one key tile passes and five fail,
    the pattern of a missing rescale, but the TIR shows the mask; a real missing rescale keeps its sentence."""
    from grader.i18n import tr
    from grader.pipeline.checks import masks_without_offset
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated

    one, several, large = grade_simulated("07", wrong_file("07", "flash_mask_without_tile_offset"), "flash_attention")
    assert (one.status, several.status, large.status) == ("passed", "failed", "passed")
    assert several.cause.kind == CauseKind.MASK_OFFSET
    assert several.hint == (
        "the likely cause: the mask `c < N` in the T.serial loop over `j` compares `c`, a position inside the tile, "
        "with N = 70 (dimension 0 of K): `c` starts again at 0 in every tile, so only the first tile is masked "
        "right. Add the tile's offset: `j * BLOCK_N + c < N`"
    )
    assert not any("m_old" in line for line in several.details)  # the rescale pattern is not added below it
    assert tr(several.hint, "zh_CN") != several.hint
    # the online softmax of 06 with the same mask
    online = [r for r in grade_simulated("06", wrong_file("06", "softmax_online_mask_from_column_0"), "softmax_online")]
    (failed,) = [r for r in online if r.status == Status.FAILED]
    assert failed.hint.startswith("the likely cause: the mask `j < N` in the T.serial loop over `k` compares `j`")
    # a real missing rescale keeps the pattern's sentence; the course's kernel masks from the tile's offset
    rescale = grade_simulated(
        "07", wrong_file("07", "flash_no_accumulator_rescale"), "flash_attention", ["few_keys_50x37", "rect_40x70x32"]
    )[1]
    assert rescale.cause.kind == CauseKind.SEVERAL_STEPS and "exp2((m_old - m_new) * scale)" in rescale.hint
    solution = ROOT / "solutions" / "p07_flash_attention.py"
    assert masks_without_offset(traced_tir(solution, "07", "flash_attention", "rect_40x70x32"), {}, {}) == []


def test_a_channel_loop_that_rounds_down_is_said_in_the_learners_sizes():
    """conv1d_implicit's `T.Pipelined(C_in // BLOCK_C)`: the loop steps through W2, the flattened view the kernel
    makes (60 columns in steps of 48), and through X (C_in channels in steps of BLOCK_C); the sentence names the
    sizes the learner wrote."""
    from tests.inprocess import grade_simulated

    results = grade_simulated("09", wrong_file("09", "implicit_channel_blocks_rounded_down"), "conv1d_implicit")
    by_case = {r.case: r for r in results}
    assert all(r.status == Status.FAILED and r.cause.kind == CauseKind.ROUNDS_DOWN for r in results)
    assert by_case["pointwise_24to40_150_k1"].hint == (
        "the likely cause: the T.Pipelined loop over `cb` runs 1 step of 16 along C_in = 24 (dimension 0 of X): that "
        "reaches 16, so the last 8 of C_in are never visited. The count rounds down: use T.ceildiv(C_in, BLOCK_C) "
        "rather than C_in // BLOCK_C"
    )
    assert all("W2" not in r.hint for r in results), [r.hint for r in results]


def test_an_accumulator_overwritten_on_every_step_is_named_from_the_tir():
    """`partial[i, j] = ...` where `+=` was meant: each column tile overwrites the last, so nearly every row sum is
    wrong; the TIR shows a buffer the loop writes at the same elements every step and reads only after it."""
    from grader.i18n import tr
    from grader.pipeline.checks import overwritten_each_step
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated

    results = grade_simulated("05", wrong_file("05", "row_sum_tiled_assigns_partial"), "row_sum_tiled")
    failed = [r for r in results if r.status == Status.FAILED]
    assert [r.case for r in failed] == ["square_256", "odd_127x129"]  # a row of one tile passes
    assert all(r.cause.kind == CauseKind.OVERWRITTEN for r in failed)
    assert failed[0].hint == (
        "the likely cause: `partial[i, j] = ...` inside the T.serial loop over `k` overwrites `partial` on every "
        "step, and nothing in the loop reads it, so after the loop `partial` holds the last step's values only: add "
        "into it (`+=`), and clear it once before the loop"
    )
    assert tr(failed[0].hint, "zh_CN") != failed[0].hint
    # the course's kernels: the scores of flash attention are overwritten every key tile, but read in it
    for puzzle, kernel, case in (("05", "row_sum_tiled", "odd_127x129"), ("07", "flash_attention", "rect_40x70x32")):
        solution = next((ROOT / "solutions").glob(f"p{puzzle}_*.py"))
        assert overwritten_each_step(traced_tir(solution, puzzle, kernel, case)) == []
    # the other wrong kernels of row_sum_tiled keep their own sentences
    restart = grade_simulated("05", wrong_file("05", "row_sum_tiled_reduce_clears"), "row_sum_tiled", ["square_256"])
    assert restart[0].cause.kind == CauseKind.REDUCE_RESTART


def test_a_loop_one_step_short_is_named_from_the_tir(tmp_path):
    """`for k in T.serial(K - 1)`: every element misses one product, so nearly all are wrong; the TIR shows a loop
    one step short of the dimension it walks, which no access reaches the end of. Steps of a tile say the same."""
    from grader.i18n import tr
    from grader.pipeline.checks import one_short_problems
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated, spec

    results = grade_simulated("08", wrong_file("08", "matmul_cuda_cores_k_off_by_one"), "matmul_cuda_cores")
    assert all(r.status == Status.FAILED and r.cause.kind == CauseKind.LOOP_SHORT for r in results)
    assert results[0].hint == (
        "the likely cause: the T.serial loop over `k` runs 130 steps along K = 131 (dimension 1 of A), one short: the "
        "last of K is never visited. Run it K times, not K - 1"
    )
    assert tr(results[0].hint, "zh_CN") != results[0].hint
    kernel = spec("08").kernel("matmul_shared")
    case = kernel.case("square_256")
    tensors = kernel.inputs + kernel.outputs
    tiles = learner_copy(
        tmp_path, "08", [("def matmul_shared(", "def matmul_shared("), ("BLOCK_K)):", "BLOCK_K) - 1):")]
    )
    (said,) = one_short_problems(traced_tir(tiles, "08", "matmul_shared", case.name), case.sizes, case.params, tensors)
    assert said.startswith("the T.serial loop over `k` runs 7 steps of 32 along K = 256 (dimension 1 of A), one step")
    assert said.endswith("Run it T.ceildiv(K, BLOCK_K) times, not one fewer")
    solution = ROOT / "solutions" / "p08_matrix.py"
    for name in ("matmul_cuda_cores", "matmul_shared"):
        tir = traced_tir(solution, "08", name, "square_256")
        assert one_short_problems(tir, case.sizes, case.params, tensors) == []


def test_an_error_shared_by_each_group_is_read_from_the_values():
    """A dequantization whose zero point is off (`q - 7` for `q - 8`): each element is off by its group's scale, the
    same along each group of G columns. The numbers alone say a term each group shares is wrong; a wrong factor,
    or errors with no such runs, get no such sentence."""
    from grader.i18n import tr
    from tests.inprocess import grade_simulated

    g = torch.Generator().manual_seed(5)
    q = torch.randint(0, 16, (37, 128), generator=g).to(torch.float64)
    scales = (torch.rand((37, 2), generator=g, dtype=torch.float64) + 0.5).repeat_interleave(64, dim=1)
    want = (q - 8) * scales
    result = compare("W", ((q - 7) * scales).to(torch.float16), want, FP16, tile=(64, 64))
    assert result.cause.kind == CauseKind.SHIFTED and result.cause.facts["run"] == 64, result.hint
    assert result.hint.startswith("The error is the same along runs of 64 elements of dimension 1 of W (W[0, 0] is off")
    assert tr(result.hint, "zh_CN") != result.hint
    for wrong in ((q - 8) * scales * 1.5, want + values((37, 128))):  # a factor; errors of every size
        assert compare("W", wrong.to(torch.float16), want, FP16).cause.kind == CauseKind.WRONG_VALUES
    # graded: the known-wrong kernel without its zero point; the GEMM without it sums the shifts: no runs there
    for name in ("unpack_no_zero_point", "unpack_zero_point_7"):
        (first, *_) = grade_simulated("10", wrong_file("10", name), "dequantize_int4")
        assert first.cause.kind == CauseKind.SHIFTED and "runs of 64 elements of dimension 1 of W" in first.hint
    (gemm, *_) = grade_simulated("10", wrong_file("10", "matmul_no_zero_point"), "dequant_matmul")
    assert gemm.status == Status.FAILED and gemm.cause.kind == CauseKind.WRONG_VALUES


def test_key_tiles_that_step_by_another_block_are_named_not_a_missing_rescale():
    """flash attention stepping its key tiles by BLOCK_M (`K[j * BLOCK_M, 0]` into a BLOCK_N tile): one key tile
    passes and several fail, as for a missing rescale; the TIR shows copies stepping by another length than their
    tile's. Nested chunks of tiles (the stream-K kernels') are not named."""
    from grader.i18n import tr
    from grader.pipeline.checks import tile_steps_mismatched
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated

    results = grade_simulated("07", wrong_file("07", "flash_key_tiles_step_block_m"), "flash_attention")
    failed = [r for r in results if r.status == Status.FAILED]
    assert failed and all(r.cause.kind == CauseKind.TILE_STEP for r in failed)
    assert failed[0].hint == (
        "the likely cause: T.copy of K in the T.serial loop over `j` starts each step BLOCK_M = 32 further along "
        "dimension 0, but its tile is 16 long there: the steps skip what lies between the tiles. Step by the tile's "
        "length, 16"
    )
    assert not any("m_old" in line for r in failed for line in r.details)
    assert tr(failed[0].hint, "zh_CN") != failed[0].hint
    right = ROOT / "tests" / "right" / "p08" / "matmul_streamk_segments_per_tile.py"
    assert tile_steps_mismatched(traced_tir(right, "08", "matmul_streamk", "odd_127x129x131"), {}, {}) == []
    solution = ROOT / "solutions" / "p07_flash_attention.py"
    assert tile_steps_mismatched(traced_tir(solution, "07", "flash_attention", "rect_40x70x32"), {}, {}) == []


def test_blocks_whose_tiles_step_by_another_block_size_are_named_and_halos_are_not():
    """`A[by * BLOCK_K, ...]` into a BLOCK_M-row tile: neighbouring blocks' tiles overlap, and the sentence names
    both sizes (tests/test_causes.py grades the kernel). A convolution's window (its block's outputs plus the taps'
    halo) overlaps its neighbours by design: the references are not named, with their real block sizes."""
    from grader.discover import load_module, load_puzzle
    from grader.i18n import tr
    from grader.pipeline.checks import tile_steps_mismatched
    from tests.conftest import ROOT

    def mismatched(path: Path, puzzle: str, kernel: str, case_name: str | None = None) -> list[str]:
        """The sentences for ``kernel`` in ``path`` at ``case_name`` (default: its second case, one with tails)."""
        spec = load_puzzle(load_module(next((ROOT / "solutions").glob(f"p{puzzle}_*.py")))).kernel(kernel)
        case = spec.case(case_name) if case_name else spec.cases[1]
        return tile_steps_mismatched(traced_tir(path, puzzle, kernel, case.name), case.sizes, case.params)

    wrong = wrong_file("08", "matmul_pipelined_a_rows_step_block_k")
    (sentence,) = mismatched(wrong, "08", "matmul_pipelined", "rect_150x300x100")  # BLOCK_M 64, BLOCK_K 32
    assert sentence == (
        "T.copy of A starts BLOCK_K = 32 further along dimension 0 for each step of T.Kernel's second argument "
        "(`by`, blockIdx.y), but its tile is BLOCK_M = 64 long there: neighbouring blocks' tiles overlap. Step by "
        "the tile's length, BLOCK_M, or make the tile as long as the step"
    )
    assert "T.Kernel 的第二个参数" in tr(sentence, "zh_CN") and "互相重叠" in tr(sentence, "zh_CN")
    kernels = [("09", k) for k in ("conv1d_naive", "conv1d_channels", "conv1d_im2col", "conv1d_implicit")]
    for puzzle, kernel in [*kernels, ("07", "flash_attention"), ("10", "dequant_matmul")]:
        assert mismatched(next((ROOT / "solutions").glob(f"p{puzzle}_*.py")), puzzle, kernel) == [], kernel


def test_an_accumulator_cleared_on_every_step_is_named_from_the_tir():
    """T.clear(acc) moved into the K loop: every step throws the sums before it away. The TIR shows a buffer the
    loop clears and then only adds into, read after the loop; flash attention's scores, cleared every key tile
    too, are read in the loop and are not named."""
    from grader.i18n import tr
    from grader.pipeline.checks import cleared_each_step
    from tests.conftest import ROOT
    from tests.inprocess import grade_simulated

    results = grade_simulated("08", wrong_file("08", "matmul_naive_clear_in_loop"), "matmul_naive")
    assert all(r.status == Status.FAILED and r.cause.kind == CauseKind.OVERWRITTEN for r in results)
    assert results[0].hint == (
        "the likely cause: `acc` is cleared inside the T.serial loop over `k`, on every step, and the loop only adds "
        "into it, so after the loop `acc` holds the last step's sum only: clear it once, before the loop"
    )
    assert tr(results[0].hint, "zh_CN") != results[0].hint
    (backward, *_) = grade_simulated("04", wrong_file("04", "mul_relu_backward_clear_in_loop"), "mul_relu_backward")
    assert backward.hint.startswith("the likely cause: `partial` is cleared inside the T.serial loop over `k`")
    solution = ROOT / "solutions" / "p07_flash_attention.py"
    assert cleared_each_step(traced_tir(solution, "07", "flash_attention", "rect_40x70x32")) == []
