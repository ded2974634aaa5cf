import json
import math
import re
from pathlib import Path

import pytest

from grader import outcome
from grader.discover import CELL_END, chosen_kernels, course_root, declared_cases, normalize_id
from grader.frontends import render as report
from grader.frontends.cli import UsageError, check_names, parser, targets
from grader.outcome import Bench, CaseResult, Status

ROOT = course_root()


def result(status=Status.FAILED, **extra):
    return CaseResult(
        "08", "gemv", "tail_1000", status, {"M": 1000, "K": 1000}, "40 of 1000 output elements wrong", **extra
    )


def test_case_lines_show_verdict_shape_details_and_hint():
    lines = report.case_lines(result(details=["C[960] = nan, expected 1"], hint="look at the tail", trace="Traceback"))
    assert lines[0].split()[:4] == ["FAIL", "tail_1000", "M=1000", "K=1000"]
    assert "40 of 1000" in lines[0]
    assert any("C[960] = nan" in line for line in lines)
    assert lines[-1].strip() == "hint: look at the tail"
    assert not any("Traceback" in line for line in lines)  # traces only with --verbose
    assert any("Traceback" in line for line in report.case_lines(result(trace="Traceback"), verbose=True))


def test_passing_case_is_one_line():
    assert len(report.case_lines(result(Status.PASSED, details=["x"]))) == 1


def test_json_is_strict_and_complete(tmp_path: Path):
    results = [
        result(max_abs_error=math.inf),
        result(Status.PASSED, bench=Bench(kernel_ms=2.0, torch_ms=1.0, tflops=1.5)),
    ]
    path = tmp_path / "out.json"
    report.write_json(path, report.to_json(results, [{"puzzle": "08"}]))
    doc = json.loads(path.read_text())  # json.loads accepts NaN; check the text too
    assert "Infinity" not in path.read_text() and "NaN" not in path.read_text()
    assert doc["summary"] == {"failed": 1, "passed": 1}
    assert doc["results"][0]["max_abs_error"] is None
    assert doc["results"][1]["bench"]["kernel_ms"] == 2.0
    assert CaseResult.from_dict(doc["results"][1]).bench.speedup == 0.5


def test_bench_table_ratio_is_torch_over_kernel():
    lines = report.bench_lines([result(Status.PASSED, bench=Bench(kernel_ms=0.25, torch_ms=0.2, tflops=550.0))])
    assert "0.80x" in lines[1]
    assert "550.0" in lines[1]


@pytest.mark.parametrize(("text", "expected"), [("8", "08"), ("08", "08"), ("p08", "08"), ("x", None), ("123", None)])
def test_normalize_id(text, expected):
    assert normalize_id(text) == expected


def args(*argv):
    return parser().parse_args(list(argv))


def test_targets_default_to_puzzles_and_solutions_on_request():
    assert targets(args("08"), ROOT) == [("08", ROOT / "puzzles" / "p08_matrix.py")]
    assert targets(args("08", "--solutions"), ROOT) == [("08", ROOT / "solutions" / "p08_matrix.py")]
    assert ("08", ROOT / "puzzles" / "p08_matrix.py") in targets(args(), ROOT)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["99"], "no puzzle 99"),
        (["eight"], "not a puzzle id"),
        (["08", "--file", "missing.py"], "there is no file"),
        (["--file", str(ROOT / "pyproject.toml")], "name exactly one puzzle id"),
    ],
)
def test_usage_errors_say_what_is_wrong(argv, message):
    with pytest.raises(UsageError, match=message):
        targets(args(*argv), ROOT)


# ------------------------------------------------------------------------- -k names; usage errors said at once


def test_a_k_name_that_is_a_kernels_whole_name_selects_that_kernel_alone():
    kernels = ["add", "mul_relu", "add_fragments"]
    assert chosen_kernels(kernels, "add") == ["add"]  # not add_fragments
    assert chosen_kernels(kernels, "frag") == ["add_fragments"]  # no kernel's whole name: a part of one
    assert chosen_kernels(kernels, "ad") == ["add", "add_fragments"]
    assert chosen_kernels(kernels, "mul,add") == ["add", "mul_relu"]  # in the puzzle's order
    assert chosen_kernels(kernels, "ad", exact=True) == [] and chosen_kernels(kernels, "add", exact=True) == ["add"]
    assert chosen_kernels(kernels, "") == kernels


def test_the_cases_read_from_the_course_files_text_are_the_puzzles_own():
    from grader.discover import load_module, load_puzzle, puzzle_files

    for path in puzzle_files(ROOT / "solutions").values():
        loaded = load_puzzle(load_module(path))
        assert declared_cases(path.read_text()) == {k.function: tuple(c.name for c in k.cases) for k in loaded.kernels}
    # a name that is not a literal: nothing can be said of that kernel's cases from the text
    assert declared_cases('Kernel(function="f", cases=tuple(Case(n, {}, {}, 1) for n in NAMES))') == {"f": None}


def checked_names(*argv):
    parsed = args(*argv)
    check_names(parsed, targets(parsed, ROOT), ROOT)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["08", "-k", "gmv"], "-k gmv: puzzle 08 has no kernel of that name (its kernels: gemv, matmul_cuda_cores, "),
        (["02", "-k", "ad", "--exact"], "-k ad --exact: puzzle 02 has no kernel of that name"),
        (["08", "-k", "gemv,gmv"], "-k gmv: puzzle 08"),
        (["08", "-k", "gemv", "--case", "nope"], "--case nope: no case of that name in puzzle 08; the cases of gemv: "),
        (
            ["02", "-k", "add", "--case", "odd"],
            "--case odd: no case of that name in puzzle 02; the cases of add: even_",
        ),
        (["08", "--explain", "gmv"], "--explain gmv: puzzle 08 has no such kernel (its kernels: gemv, "),
        (["08", "--explain", "gemv", "--case", "tail_100"], "--case tail_100: no case of that name in puzzle 08"),
        (["08", "--profile", "gemv,foo"], "--profile foo: puzzle 08 has no such kernel"),
    ],
)
def test_unknown_kernels_and_cases_are_usage_errors_read_from_the_files_text(argv, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        checked_names(*argv)


def test_the_names_a_puzzle_has_are_no_usage_error():
    checked_names("02", "-k", "add")
    checked_names("02", "-k", "ad")  # a part of two kernels' names
    checked_names("08", "-k", "gemv", "--case", "large_8192,square_256")
    checked_names("08", "--explain", "gemv", "--case", "square_256")
    checked_names("10", "--case", "square_256_g64")  # cases a helper of the module builds
    checked_names("08", "-k", "matmul", "--case", "last_wave_1792x2560x16384")  # a case of some of the kernels


def test_a_file_python_cannot_parse_is_a_usage_error_naming_its_line(tmp_path: Path):
    path = tmp_path / "p08_mine.py"
    path.write_text("import tilelang\n\n\ndef gemv(A:\n    pass\n")
    with pytest.raises(UsageError, match=r"p08_mine\.py:4: syntax error: .* fix line 4 \(a bracket left open"):
        checked_names("08", "--file", str(path), "-k", "gemv")
    # a module of notebook cells goes to the tracer: a cell that does not parse costs only its own kernels there
    path.write_text(f"def gemv(:\n    pass\n\n{CELL_END}\n")
    checked_names("08", "--file", str(path), "-k", "gemv")


@pytest.mark.parametrize(
    "argv",
    [
        ["08", "-k", "gmv"],
        ["08", "-k", "gemv", "--case", "nope"],
        ["08", "--explain", "gmv"],
        ["08", "--profile", "gmv"],
        ["08", "--hint", "gmv"],
        ["99", "-k", "gemv"],
        ["08", "--file", "{bad}", "-k", "gemv"],
    ],
)
def test_usage_errors_answer_in_one_line_before_any_grading_process_starts(tmp_path: Path, argv):
    """Exit 2 and one line on stderr, with the CPU time of the CLI alone: a judge would import torch and TileLang
    (seconds of CPU, about 1.5 s for torch alone) and make its scratch folder in $TMPDIR."""
    import os
    import resource
    import subprocess
    import sys
    import time

    bad = tmp_path / "p08_bad.py"
    bad.write_text("def gemv(:\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "grader", *(a.format(bad=bad) for a in argv)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
    )
    wall, after = time.monotonic() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1 and done.stderr.startswith("grader: ")
    assert list(scratch.iterdir()) == []  # no judge started (nor pytest's tmp folders)
    assert cpu < 1.0, cpu  # the two interpreter starts of the hermetic CLI, and reading the files' text
    assert wall < 15, wall  # 0.2 s on an idle machine; generous for a loaded one


def test_the_cli_process_starts_the_judge_without_importing_torch():
    """Everything the CLI imports up to starting the judge (the supervisor names the judge's entry) stays free of
    torch: importing it there cost seconds before the judge, and the judge's tracer, could even start."""
    import subprocess
    import sys

    modules = (
        "grader.frontends.cli",
        "grader.frontends.plugin",
        "grader.processes.supervisor",
        "grader.processes.judge",
    )
    code = f"import sys; sys.path[:0] = [{str(ROOT)!r}]\n" + "".join(f"import {m}\n" for m in modules)
    code += "heavy = [m for m in ('torch', 'tilelang', 'numpy') if m in sys.modules]\nassert not heavy, heavy\n"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_tvm_errors_become_one_line_with_the_learners_line():
    from grader.pipeline.build import summarize, tvm_location

    error = RuntimeError(
        "Check failed: layout_map.count(buffer) != 0 (0 vs. 0) : The layout for fragment partial can not be "
        "inferred correctly.\n  --> /home/me/puzzles/p05_reduce_sum.py:18:1\n     |\n 18 |         partial = "
        "T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)\n     |         ^"
    )
    assert summarize(error) == "The layout for fragment partial can not be inferred correctly."
    assert tvm_location(error) == "p05_reduce_sum.py:18"
    crash = RuntimeError("CUDA error: an illegal memory access was encountered\nCompile with `TORCH_USE_CUDA_DSA`")
    assert summarize(crash) == "CUDA error: an illegal memory access was encountered"


# ------------------------------------------------------------------------- facts as fields, one renderer


def test_where_a_case_ran_is_said_from_its_fields_not_its_message():
    simulated = result(Status.PASSED, checked="simulated", arch="sm_90a")
    simulated.message = "max abs err 0"
    assert report.message(simulated) == "simulated on CPU: max abs err 0"
    assert report.case_lines(simulated)[0].endswith("simulated on CPU: max abs err 0")
    built = result(Status.COMPILED, checked="compiled", arch="sm_80")
    built.message = "too large to simulate (numbers need a GPU)"
    assert report.message(built) == "compiled for sm_80: too large to simulate (numbers need a GPU)"
    on_gpu = result(Status.FAILED, checked="gpu", arch="sm_90a")
    assert report.message(on_gpu) == "40 of 1000 output elements wrong"  # a GPU run is the usual case: no prefix
    # the simulator lacked a construct: built, numbers unchecked, and its sentence says so without a prefix
    nosim = result(Status.UNSUPPORTED, checked="compiled", arch="sm_90a")
    assert report.message(nosim) == nosim.message
    # the old status strings still compare, hash and serialise as before
    assert outcome.Status("passed") is Status.PASSED == "passed" and {"passed": 1}[Status.PASSED] == 1
    assert json.loads(json.dumps(simulated.to_dict()))["status"] == "passed"
    assert CaseResult.from_dict(simulated.to_dict()) == simulated
    with pytest.raises(ValueError):
        result("passed_maybe")


def test_a_case_the_simulator_cannot_run_is_unchecked_never_failed_and_earns_no_pass():
    """NOSIM is built, numbers unchecked (as a large case only compiled): nothing failed. A kernel whose every
    checked case was NOSIM passes nothing, so a construct the simulator lacks cannot stand in for a right kernel
    on a CPU-graded class. Beside a simulated pass it earns no pass either: a kernel right on one case could take
    a construct the simulator lacks on the cases it gets wrong (the red team's T.reinterpret on every M but 256)."""
    nosim = result(Status.UNSUPPORTED, checked="compiled", arch="sm_90a")
    nosim.message = "the CPU simulator does not support the call tl.atomic_add_ret_elem_op; run on a GPU to check"
    passed = result(Status.PASSED, checked="simulated", arch="sm_90a")
    alone, said = report.summary("gemv", [nosim, nosim], 0, "")
    assert not alone and said.startswith("gemv: not checked:") and "atomic_add_ret_elem_op" in said, said
    nosim.case = "odd_127x129"
    beside, said = report.summary("gemv", [passed, nosim], 0, "")
    assert not beside and said.startswith("gemv: not checked on case odd_127x129:"), said
    assert "atomic_add_ret_elem_op" in said and "though it ran 1 other case(s)" in said, said


def test_the_notebook_and_the_terminal_render_the_same_case_line():
    failed = result(details=["C[960] = nan, expected 1"], hint="look at the tail", checked="simulated", arch="sm_90a")
    terminal = report.case_lines(failed)
    notebook = report.case_lines(failed, layout=report.NOTEBOOK)
    sizes = report.sizes_text(failed.sizes)
    assert terminal[0] == notebook[0][: len("  FAIL  tail_1000              ")] + f"{sizes:26} " + notebook[0][31:]
    assert notebook[0] == "  FAIL  tail_1000              simulated on CPU: 40 of 1000 output elements wrong"
    assert terminal[1:3] == notebook[1:3]  # details and hint: the same words, short enough not to wrap
    # the way in to the explain view is the one thing each front end says its own way
    assert terminal[3] == "        see inside: python -m grader 08 --explain gemv --case tail_1000"
    assert notebook[3] == '        see inside: explain("gemv", case="tail_1000")'


def _string_uses(tree):
    """(node, text) for every string constant outside docstrings."""
    import ast

    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node, node.value


def test_no_grader_module_reads_where_a_case_ran_from_message_text():
    """Where a case ran and its arch are fields (CaseResult.checked, .arch): only the renderer turns them into
    "simulated on CPU: " and "compiled for sm_XX: ", and nothing matches a message's text to get them back."""
    import ast

    facts = re.compile(r"simulated on CPU: |compiled for (sm_|\()|^simulated")
    readers = {"startswith", "removeprefix", "endswith", "search", "match", "fullmatch", "findall", "compile"}
    problems = []
    for path in sorted((ROOT / "grader").rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in readers:
                texts = [a.value for a in ast.walk(node) if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                names = [a.id for a in ast.walk(node) if isinstance(a, ast.Name)]
                if any(facts.search(t) or "compiled for" in t for t in texts) or "SIMULATED" in names:
                    problems.append(f"{where}:{node.lineno}: reads a message for where a case ran")
        if where.as_posix() != "grader/frontends/render.py":
            problems += [
                f"{where}:{node.lineno}: writes {text!r} (the renderer says it, from the fields)"
                for node, text in _string_uses(tree)
                if "simulated on CPU: " in text
            ]
    assert problems == []


def test_a_pass_of_a_quick_check_names_the_large_cases_it_did_not_compile():
    simulated = [result(Status.PASSED, checked="simulated", arch="sm_90a") for _ in range(3)]
    command = "python -m grader 08 -k gemv --full"
    passed, line = report.summary("gemv", simulated, 2, command)
    assert passed and line == (
        f"gemv: passed all 3 cases; 2 large case(s) not compiled in this quick check: {command} compiles them too"
    )
    assert report.summary("gemv", simulated) == (True, "gemv: passed all 3 cases")  # a whole check: as before
    failed = [result(checked="simulated", arch="sm_90a")]
    assert report.summary("gemv", failed, 2, command)[1] == "gemv: 1 of 1 cases did not pass (see above)"
    # the closing line of the terminal, from the JSON's runs
    runs = [{"not_compiled": [{"kernel": "gemv", "case": "tail_1000"}], "compile_all": command}, {"not_compiled": []}]
    assert report.not_compiled_lines(runs) == [
        f"1 large case(s) not compiled in this quick check: {command} compiles them too"
    ]


def test_plain_removes_every_character_that_reorders_or_breaks_a_line():
    """Bidi marks and overrides (the Arabic letter mark too, which the red team found kept) and the Unicode line
    and paragraph separators could make a learner's text display as a line the grader did not print."""
    from grader.outcome import plain

    marks = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029\x1b\r\x00"
    assert plain(f"x{marks}y") == "xy"
    assert plain("列 C[3] = 1.5, 期望 2\tok\n") == "列 C[3] = 1.5, 期望 2\tok\n"
