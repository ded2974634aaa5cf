"""What a grading verified, and what it refuses: grader.verified's counts, the simulation budget
(grader.budget), the learner CLI's exit status 3, and the instructor paths' refusal without a GPU.

The JSON, the closing lines and the exit status come from a real `python -m grader` run on a file whose
`add` is wrong for every index from 100000 on: without a GPU only its compiled cases reach there.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader import budget, verified
from grader.discover import load_module, load_puzzle, puzzle_files
from grader.outcome import CaseResult
from grader.spec import Case
from tests.conftest import ROOT, cuda_available

SOLUTIONS = puzzle_files(ROOT / "solutions")
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}  # torch sees no GPU, on a GPU host too


def puzzle(puzzle_id: str):
    return load_puzzle(load_module(SOLUTIONS[puzzle_id]))


# ------------------------------------------------------------------------------ the counts


def test_counts_per_kernel_and_their_one_sentence():
    cases = [
        CaseResult("02", "add", "a", "passed", {}, checked=verified.SIMULATED),
        CaseResult("02", "add", "b", "compiled", {}, checked=verified.COMPILED),
        {"kernel": "add", "status": "failed", "checked": verified.GPU},
        {"kernel": "mul_relu", "status": "error", "checked": ""},  # did not build: counted nowhere
    ]
    found = verified.per_kernel(cases)
    assert found == {
        "add": {"gpu": 1, "simulated": 1, "compiled": 1},
        "mul_relu": {"gpu": 0, "simulated": 0, "compiled": 0},
    }
    assert verified.total(found.values()) == {"gpu": 1, "simulated": 1, "compiled": 1}
    assert verified.unchecked(found["add"]) == 1
    assert verified.line("add", found["add"]) == "add: 1 case(s) on a GPU, 1 simulated on the CPU, 1 only compiled"


# ------------------------------------------------------------------------------ the budget


def test_the_budget_simulates_odd_4097_beside_even_4096():
    for puzzle_id, kernels in (("01", ("copy_serial", "copy_threads", "copy_tiles")), ("02", ("add", "mul_relu"))):
        loaded = puzzle(puzzle_id)
        for name in kernels:
            cases = {c.name: c.simulate for c in loaded.kernel(name).cases}
            assert cases["odd_4097"] is True, (puzzle_id, name)
            assert cases["large_2p27"] is False
            assert not any(cases.get(large, False) for large in ("tail_100003", "tail_1000003")), cases


def test_the_budget_takes_tails_first_then_the_smallest_and_keeps_the_marks():
    add = puzzle("02").kernel("add")
    n = budget.KERNEL_WORK // 3 - 2000  # elements of A, B and C: one such case fits, two do not
    even = Case("even", {"N": 1024 * (n // 1024)}, {"BLOCK": 1024, "THREADS": 256}, seed=1)
    tail = Case("tail", {"N": n + 5}, {"BLOCK": 1024, "THREADS": 256}, seed=2)
    tiny = Case("tiny", {"N": 1000}, {"BLOCK": 256, "THREADS": 128}, seed=3)
    never = Case("never", {"N": 8}, {"BLOCK": 256, "THREADS": 128}, seed=4, simulate=False)
    forced = Case("forced", {"N": 1 << 20}, {"BLOCK": 1024, "THREADS": 256}, seed=5, simulate=True)
    assert budget.has_tail(add, tail) and not budget.has_tail(add, even)
    decided = budget.admitted(dataclasses.replace(add, cases=(even, tail, tiny, never, forced)))
    # the tails (tiny's 1000 is one too) go first and fill most of the budget: the even case no longer fits
    assert {c.name: c.simulate for c in decided.cases} == {
        "even": False,
        "tail": True,
        "tiny": True,
        "never": False,
        "forced": True,
    }


def test_a_hidden_case_without_a_mark_is_decided_by_the_budget(tmp_path: Path):
    from grader.pipeline.hidden import with_hidden_cases

    path = tmp_path / "hidden.json"
    entries = [
        {"puzzle": "02", "kernel": "add", "sizes": {"N": 777}, "params": {"BLOCK": 128}, "seed": 1},
        {"puzzle": "02", "kernel": "add", "sizes": {"N": 5_000_001}, "params": {"BLOCK": 128}, "seed": 2},
        {"puzzle": "02", "kernel": "add", "sizes": {"N": 99}, "params": {"BLOCK": 128}, "seed": 3, "simulate": False},
    ]
    path.write_text(json.dumps({"cases": entries}))
    hidden = [c for c in with_hidden_cases(puzzle("02"), path).kernel("add").cases if c.name.startswith("hidden_")]
    assert [c.simulate for c in hidden] == [True, False, False]


# ------------------------------------------------------------------------------ the learner's CLI


def wrong_above_100000(tmp_path: Path) -> Path:
    """puzzle 02 with an `add` that never writes an index from 100000 on (its other kernels right)."""
    text = SOLUTIONS["02"].read_text()
    right = "            if i < N:\n                C[i] = A[i] + B[i]\n"
    assert right in text
    path = tmp_path / "p02_wrong_above_100000.py"
    path.write_text(text.replace(right, "            if i < T.min(N, 100000):\n                C[i] = A[i] + B[i]\n"))
    return path


@pytest.mark.skipif(cuda_available(), reason="on a GPU the large cases run, and this add fails (exit 1)")
def test_a_pass_with_cases_only_compiled_exits_3_and_says_what_was_not_checked(grade, tmp_path: Path):
    # cold: the one test of exit status 3 from the `python -m grader` process itself (the others are warm)
    run = grade("02", "--file", str(wrong_above_100000(tmp_path)), "-k", "add", "--full")  # --full: large ones too
    assert run.code == 3, run.out + run.err
    assert run.statuses() == {
        "add[even_4096]": "passed",
        "add[tail_1000]": "passed",
        "add[odd_4097]": "passed",
        "add[tail_1000003]": "compiled",
        "add[large_2p27]": "compiled",
    }
    assert {r["case"]: r["checked"] for r in run.results()} == {
        "even_4096": "simulated",
        "tail_1000": "simulated",
        "odd_4097": "simulated",
        "tail_1000003": "compiled",
        "large_2p27": "compiled",
    }
    assert run.doc["runs"][0]["checked"] == {"add": {"gpu": 0, "simulated": 3, "compiled": 2}}
    assert "add: 0 case(s) on a GPU, 3 simulated on the CPU, 2 only compiled" in run.out
    assert "2 case(s) were only compiled: their numbers were not checked here" in run.out
    assert "too large to simulate" not in run.out.split("odd_4097")[1].splitlines()[0]
    # where each case ran and the arch are fields; the message says neither, the renderer does
    assert {r["arch"] for r in run.results()} == {"sm_90a"}
    assert not any(r["message"].startswith(("simulated on CPU", "compiled for")) for r in run.results())
    assert "compiled for sm_90a: too large to simulate (numbers need a GPU)" in run.out
    # the CLI and a notebook's check() print each case's verdict in the same words from the same result
    from grader.frontends import render
    from grader.frontends.notebook import verdict
    from grader.processes.launch import GraderRun

    checked = verdict("add", GraderRun.from_document(run.doc, 0, "", 1.0), [], "02", 60.0)
    assert checked.passed and "3 case(s) simulated on the CPU, 2 only compiled for sm_90a" in checked.summary
    for case in map(CaseResult.from_dict, run.results()):
        shown = render.message(case)
        assert f"{case.case:22} {render.sizes_text(case.sizes):26} {shown}" in run.out, shown
        assert f"  {render.label(case.status):5} {case.case:22} {shown}" in checked.lines, (shown, checked.lines)


@pytest.mark.skipif(cuda_available(), reason="on a GPU every case runs: there is no quick check")
def test_a_quick_check_simulates_the_small_cases_and_names_the_large_ones_it_did_not_compile(
    warm_grade, tmp_path: Path
):
    """-k without a GPU: the cases too large to simulate are not compiled, so their compiles do not hold the
    verdict back; the closing line counts them and says how to compile them, and the exit status is not 0."""
    learner = tmp_path / "p02_mine.py"
    learner.write_text(SOLUTIONS["02"].read_text())
    run = warm_grade("02", "--file", str(learner), "-k", "add")
    assert run.code == 3, run.out + run.err  # nothing failed, and not every case was checked
    # add alone (not add_fragments), its simulated cases only
    assert run.statuses() == {"add[even_4096]": "passed", "add[tail_1000]": "passed", "add[odd_4097]": "passed"}
    (about,) = run.doc["runs"]
    assert about["not_compiled"] == [{"kernel": "add", "case": "tail_1000003"}, {"kernel": "add", "case": "large_2p27"}]
    command = f"python -m grader 02 --file {learner} -k add --full"
    assert about["compile_all"] == command
    assert f"2 large case(s) not compiled in this quick check: {command} compiles them too" in run.out
    assert "BUILT" not in run.out
    # a notebook's check() says it from the same JSON, in its own words for how to compile them
    from grader.frontends.notebook import verdict
    from grader.processes.launch import GraderRun

    checked = verdict("add", GraderRun.from_document(run.doc, 3, "", 1.0), [], "02", 60.0)
    assert checked.passed and checked.summary == (
        'add: passed all 3 cases; 2 large case(s) not compiled in this quick check: check("add", full=True) '
        "compiles them too"
    )


def test_every_case_simulated_exits_0(warm_grade, tmp_path: Path):
    run = warm_grade("02", "--file", str(wrong_above_100000(tmp_path)), "-k", "add", "--exact", "--case", "odd_4097")
    assert run.code == 0, run.out + run.err
    counts = run.doc["runs"][0]["checked"]["add"]
    assert counts["compiled"] == 0 and counts["gpu"] + counts["simulated"] == 1


def test_a_case_run_on_a_gpu_carries_where_it_ran_and_the_arch(monkeypatch):
    """The GPU backend's fields, without a GPU: its tensors stay on the CPU and a Python add stands in for
    the compiled kernel."""
    from grader.devices import Device, profile_named
    from grader.frontends import render
    from grader.pipeline import execute, inputs
    from grader.pipeline.context import Context

    loaded = puzzle("02")
    kernel = loaded.kernel("add")
    case = next(c for c in kernel.cases if c.name == "tail_1000")
    profile = profile_named("sm_80")
    ctx = Context(loaded, SOLUTIONS["02"], Device("cuda", "a GPU stand-in", "cuda", profile), False, 0)
    monkeypatch.setattr(execute.Gpu, "where", "cpu")
    monkeypatch.setattr(inputs, "launch", lambda compiled, ins, outs: compiled(*ins, *outs))

    def add(a, b, c):
        c.copy_(a + b)

    result = execute.execute_and_compare(ctx, kernel, case, None, add)
    assert (result.status, result.checked, result.arch) == ("passed", verified.GPU, profile.arch), result
    assert render.message(result) == result.message and result.message.startswith("max abs err")

    def crash(a, b, c):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    crashed = execute.execute_and_compare(ctx, kernel, case, None, crash)
    assert (crashed.status, crashed.checked, crashed.arch) == ("crashed", verified.GPU, profile.arch), crashed


# ------------------------------------------------------------------------------ instructors refuse


def test_nbgrader_judge_refuses_without_a_gpu_unless_told_cpu():
    pytest.importorskip("nbgrader")  # an instructor's package
    script = (
        "from grader.nbgrader.judge import JudgeChecks, DeviceRefused\n"
        "try:\n    JudgeChecks().grading_device()\nexcept DeviceRefused as e:\n    print('REFUSED', e)\n"
        "print('TOLD', JudgeChecks(device='cpu').grading_device())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env={**os.environ, **NO_GPU}, cwd=ROOT
    )
    assert "REFUSED refusing to grade: no CUDA GPU is usable here" in done.stdout, done.stdout + done.stderr
    assert "--JudgeChecks.device=cpu" in done.stdout and "TOLD cpu" in done.stdout
    told = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, **NO_GPU, "TILELANG_COURSE_DEVICE": "cpu"},
        cwd=ROOT,
    )
    assert "REFUSED" not in told.stdout, told.stdout + told.stderr


@pytest.mark.parametrize("command", ["autograde-shard", "autograde-shards"])
def test_autograde_shards_refuse_without_a_gpu_unless_told_cpu(tmp_path: Path, command: str):
    shard = ["--shard", "0", "--shards", "1"] if command == "autograde-shard" else ["--shards", "1"]
    argv = [sys.executable, "-m", "grader", command, "ps1", *shard, "--course", str(tmp_path), "--no-sandbox"]
    env = {**os.environ, **NO_GPU}
    env.pop("TILELANG_COURSE_DEVICE", None)
    refused = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=ROOT)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "refusing to grade: no CUDA GPU is usable here" in refused.stderr and "--device cpu" in refused.stderr
    assert not (tmp_path / "logs").exists()  # nobody graded
    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "submitted").mkdir()
    told = subprocess.run([*argv, "--device", "cpu"], capture_output=True, text=True, env=env, cwd=ROOT)
    assert "refusing" not in told.stderr, told.stderr
    assert "shard 0/1" in told.stdout + "".join(p.read_text() for p in (tmp_path / "logs").rglob("*.log"))


def test_a_judged_run_that_reports_fewer_cases_than_the_spec_scores_nothing():
    """A grader run cut short (one case of fifteen came back, all passed) must not score the kernel."""
    from grader.frontends.notebook import verdict
    from grader.processes.launch import GraderRun

    one = CaseResult("02", "add", "small_1024", "passed", {}, "max abs err 0", checked="simulated").to_dict()
    run = GraderRun.from_document({"results": [one], "runs": []}, 0, "", 1.0)
    assert verdict("add", run, [], "02", 60.0).passed  # the learner's own check: no spec to hold it to
    cut = verdict("add", run, [], "02", 60.0, expected=15)
    assert not cut.passed
    assert cut.summary == "add: the grader reported 1 of its 15 cases; grade it again"


def test_the_judge_counts_a_kernels_cases_from_the_course_spec_and_the_hidden_file(tmp_path):
    import json

    from grader.nbgrader.judge import JudgeChecks

    judge = JudgeChecks()
    public = judge.case_count("02", "add")
    assert public and public >= 5
    hidden = tmp_path / "hidden.json"
    entry = {"puzzle": "02", "kernel": "add", "sizes": {"N": 777}, "params": {"BLOCK": 128, "THREADS": 128}, "seed": 1}
    hidden.write_text(json.dumps({"cases": [entry]}))
    assert JudgeChecks(hidden_cases=str(hidden)).case_count("02", "add") == public + 1
    assert judge.case_count("02", "no_such_kernel") is None


def test_a_check_cell_whose_metadata_the_student_made_a_string_is_still_recorded(monkeypatch):
    """The submitted notebook's metadata is the student's: with ``tilelang_course`` set to a string in a check
    cell, writing the judge's record raised TypeError and autograde exited 1 for the whole run (the second red
    team). The record replaces it."""
    from nbformat.v4 import new_code_cell

    import grader.processes.launch as launch
    from grader.nbgrader.judge import JudgeChecks

    monkeypatch.setattr(launch, "grade", lambda *args, **kwargs: launch.GraderRun(None, 1, "", 0.1))
    cell = new_code_cell('check("add")', metadata={"tilelang_course": "forged"})
    judge = JudgeChecks(device="cpu")
    judge._sandbox, judge._device = {}, "cpu"
    module = "import tilelang\n\n@tilelang.jit\ndef add(A, B, C):\n    pass\n"
    judge._judge("02", module, [(1, "cell1")], [(cell, "add")])
    record = cell.metadata["tilelang_course"]["judge"]
    assert record["passed"] is False and record["device"] == "cpu" and record["cases"] == []


def test_the_judge_times_the_bench_case_only_where_asked_and_a_gpu_grades(monkeypatch):
    """The class report's speed section reads the bench figures autograde recorded: JudgeChecks.bench asks for
    them (--bench), on a GPU only (a CPU gives no timing), and not by default (it takes each check longer)."""
    from nbformat.v4 import new_code_cell

    import grader.processes.launch as launch
    from grader.nbgrader.judge import JudgeChecks

    asked: list[tuple[bool, bool, str]] = []

    def grade(puzzle_id, module, options, *args, **kwargs):
        asked.append((options.full, options.bench, options.device))
        return launch.GraderRun(None, 1, "", 0.1)

    monkeypatch.setattr(launch, "grade", grade)
    module = "import tilelang\n\n@tilelang.jit\ndef add(A, B, C):\n    pass\n"
    for bench, device in ((False, "cuda"), (True, "cpu"), (True, "cuda")):
        judge = JudgeChecks(bench=bench)
        judge._sandbox, judge._device = {}, device
        judge._judge("02", module, [(1, "cell1")], [(new_code_cell('check("add")'), "add")])
    assert asked == [(True, False, "cuda"), (True, False, "cpu"), (True, True, "cuda")]
