import json
import math
from pathlib import Path

import pytest

from grader import outcome
from grader.discover import course_root, normalize_id
from grader.frontends import render as report
from grader.frontends.cli import UsageError, parser, targets
from grader.outcome import Bench, CaseResult

ROOT = course_root()


def result(status=outcome.FAILED, **extra):
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
    assert len(report.case_lines(result(outcome.PASSED, details=["x"]))) == 1


def test_json_is_strict_and_complete(tmp_path: Path):
    results = [
        result(max_abs_error=math.inf),
        result(outcome.PASSED, bench=Bench(kernel_ms=2.0, torch_ms=1.0, tflops=1.5)),
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
    lines = report.bench_lines([result(outcome.PASSED, bench=Bench(kernel_ms=0.25, torch_ms=0.2, tflops=550.0))])
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
