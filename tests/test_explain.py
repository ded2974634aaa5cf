"""--explain: the recorder's steps match what the kernels' indexing implies, the marked step of known-wrong kernels
is their buggy line, and the CLI prints the view and writes its page (grader/pipeline/explain)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader.discover import load_module, load_puzzle, puzzle_files
from grader.pipeline.execute import reversed_blocks
from grader.pipeline.explain import explain_case
from grader.pipeline.explain.record import pack, unpack
from grader.pipeline.inputs import make_inputs, poisoned_outputs
from grader.pipeline.trace import kernel_function, trace_tir
from tests.conftest import ROOT

SOLUTIONS = puzzle_files(ROOT / "solutions")
WRONG = ROOT / "tests" / "wrong"


def explained(puzzle_id: str, function: str, case_name: str, path: Path | None = None, block=None):
    spec = load_puzzle(load_module(SOLUTIONS[puzzle_id]))
    path = path or SOLUTIONS[puzzle_id]
    kernel = spec.kernel(function)
    case = kernel.case(case_name)
    tir = trace_tir(kernel_function(load_module(path), kernel), kernel, case, path)

    def fresh():
        return make_inputs(kernel, case, "cpu", 0), poisoned_outputs(kernel, case, "cpu")

    return explain_case(tir, kernel, case, fresh, path.read_text(), block, reverse_blocks=reversed_blocks(kernel, case))


def boxes(step, buffer: str, mode: str) -> list[list[int]]:
    return [box for t in step.touches if t.buffer == buffer and t.mode == mode for box in t.boxes]


def test_gemv_block_1_reads_rows_64_to_127_of_a_in_every_k_tile_and_stores_its_64_outputs():
    explanation = explained("08", "gemv", "square_256", block=(1,))
    assert explanation.block == [1] and explanation.grid == [4] and not explanation.problem
    reads = [boxes(s, "A", "read") for s in explanation.steps if s.op == "copy" and boxes(s, "A", "read")]
    assert reads == [[[64, 128, 64 * k, 64 * (k + 1)]] for k in range(4)]
    assert [s.loops for s in explanation.steps if boxes(s, "A", "read")] == [{"k": k} for k in range(4)]
    store = explanation.steps[-1]
    assert store.op == "copy" and boxes(store, "C", "write") == [[64, 128]] and "T.copy(acc" in store.source
    reduces = [s for s in explanation.steps if s.op == "reduce"]
    assert len(reduces) == 4 and all("T.reduce_sum" in s.source for s in reduces)
    acc = next(t for t in reduces[-1].tiles if t.buffer == "acc")
    assert acc.shape == [64] and acc.cell == [1, 2] and all(v is not None for v in acc.values[0])


def test_a_tail_tile_reads_past_the_edge_as_zeros_and_a_parallel_store_records_its_elements():
    explanation = explained("08", "gemv", "odd_127x129", block=(1,))
    last_b = [s for s in explanation.steps if boxes(s, "B", "read")][-1]
    zero = next(t for t in last_b.touches if t.buffer == "B" and t.mode == "zero")
    assert boxes(last_b, "B", "read") == [[128, 129]] and zero.count == 63  # K = 129: one real element of 64
    products = next(s for s in explanation.steps if s.op == "parallel")
    written = next(t for t in products.touches if t.buffer == "products" and t.mode == "write")
    assert written.count == 64 * 64 and bool(unpack(written.mask, written.shape).all())


def test_packed_masks_round_trip():
    import torch

    mask = torch.rand(7, 13) > 0.5
    assert torch.equal(unpack(pack(mask), [7, 13]), mask)


@pytest.mark.parametrize(
    ("puzzle_id", "function", "case", "wrong", "buggy"),
    [
        ("08", "gemv", "odd_127x129", "p08/gemv_reduce_clears.py", "T.reduce_sum(products, acc, dim=1)"),
        ("08", "gemv", "odd_127x129", "p08/gemv_no_clear.py", "T.reduce_sum(products, acc, dim=1, clear=False)"),
        ("08", "matmul_pipelined", "odd_127x129x131", "p08/matmul_pipelined_no_clear.py", "T.gemm(A_tile, B_tile"),
    ],
)
def test_the_view_of_a_known_wrong_kernel_opens_at_its_buggy_line(puzzle_id, function, case, wrong, buggy):
    path = WRONG / wrong
    explanation = explained(puzzle_id, function, case, path)
    marked = next(s for s in explanation.steps if s.index == explanation.marked)
    assert buggy in marked.source, (explanation.why, marked.source)
    assert marked.source == path.read_text().splitlines()[marked.line - 1].strip()
    assert "the likely cause" in explanation.why and explanation.target["buffer"] in explanation.why


def test_without_evidence_the_view_opens_at_the_store_of_the_wrong_element_and_names_no_cause():
    # softmax_online that leaves the padding past N unmasked: its running max and sum are carried across the
    # key tiles as a correct kernel's are, so nothing in the steps' shape points at a cause; the view opens where
    # the wrong element was stored and the learner steps back from there.
    path = WRONG / "p06" / "softmax_online_padding_not_masked.py"
    explanation = explained("06", "softmax_online", "odd_127x129", path)
    marked = next(s for s in explanation.steps if s.index == explanation.marked)
    assert marked.op == "copy" and marked.source.startswith("T.copy(tile, C[")
    assert "was stored at" in explanation.why and "likely cause" not in explanation.why


def test_an_element_no_block_writes_is_said_and_the_last_block_shown():
    explanation = explained("08", "gemv", "odd_127x129", WRONG / "p08" / "gemv_tail_dropped.py")
    assert explanation.why.startswith("no block wrote C[")
    assert explanation.block == [n - 1 for n in explanation.grid]


def test_a_block_outside_the_grid_is_a_problem_not_an_error():
    explanation = explained("08", "gemv", "square_256", block=(9,))
    assert "no block [9]" in explanation.problem and not explanation.steps


def test_the_cli_explains_the_failed_case_and_writes_the_page(tmp_path):
    wrong = WRONG / "p08" / "gemv_reduce_clears.py"
    command = [sys.executable, "-m", "grader", "08", "--file", str(wrong), "--explain", "gemv"]
    command += ["--case", "odd_127x129", "--json", str(tmp_path / "out.json")]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # started elsewhere, so its page lands in tmp_path
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "see inside: python -m grader 08 --explain gemv --case odd_127x129" in out
    assert ">> step" in out and "the likely cause" in out
    pages = list((tmp_path / "explain").glob("p08_gemv_odd_127x129_block*.html"))
    assert len(pages) == 1 and "T.reduce_sum(products, acc, dim=1)" in pages[0].read_text()
    results = json.loads((tmp_path / "out.json").read_text())["results"]
    assert [r["status"] for r in results] == ["failed"]  # the view never changes a verdict
    assert results[0]["explanation"]["marked"] >= 0


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["08", "--block", "1"], "--block picks the block --explain shows"),
        (["08", "09", "--explain", "gemv"], "--explain wants one puzzle id"),
    ],
)
def test_the_cli_refuses_explain_options_that_cannot_work(argv, says):
    done = subprocess.run([sys.executable, "-m", "grader", *argv], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and says in done.stderr, done.stderr


def test_explain_leaves_hidden_cases_out_and_parses_blocks():
    from dataclasses import replace

    from grader.pipeline.shape import explained_only, parse_block

    puzzle = load_puzzle(load_module(SOLUTIONS["08"]))
    gemv = puzzle.kernel("gemv")
    secret = replace(gemv.cases[0], name="hidden_" + gemv.cases[0].name)
    puzzle = replace(puzzle, kernels=(replace(gemv, cases=(*gemv.cases, secret)), *puzzle.kernels[1:]))
    only = explained_only(puzzle, "gemv")
    assert [k.function for k in only.kernels] == ["gemv"]
    assert secret.name not in [c.name for c in only.kernels[0].cases]
    assert parse_block("1,0") == (1, 0) and parse_block("") is None
    for bad in ("x", "1,2,3,4", "-1"):
        with pytest.raises(ValueError, match="--block"):
            parse_block(bad)
    with pytest.raises(ValueError, match="no such kernel"):
        explained_only(puzzle, "gemm")


def test_the_why_sentence_reads_in_chinese():
    from grader.i18n import tr

    why = explained("08", "gemv", "odd_127x129", WRONG / "p08" / "gemv_reduce_clears.py").why
    said = tr(why, "zh_CN")
    assert "可能的原因" in said and "覆盖了 acc" in said and "第 27 行" in said, said
    assert "the likely cause" not in said and "overwrote" not in said


def test_a_never_written_element_reads_nan_after_the_json_a_notebook_reads(tmp_path):
    # The record travels to a notebook as JSON (the grading run's stream, grader.processes.stream; --json's file
    # too), whose NaN would be null: the view then said "C[0] = None, expected 7.65566" where the terminal said nan.
    import json

    from grader.frontends import explain_view, render
    from grader.outcome import CaseResult
    from grader.processes import stream

    explanation = explained("08", "gemv", "odd_127x129", WRONG / "p08" / "gemv_tail_dropped.py")
    assert explanation.target["got"] == "nan" and isinstance(explanation.target["expected"], float)
    case = CaseResult("08", "gemv", "odd_127x129", "failed", {"M": 127}, checked="simulated", explanation=explanation)
    render.write_json(tmp_path / "out.json", {"results": [case.to_dict()], "runs": []})
    from_file = CaseResult.from_dict(json.loads((tmp_path / "out.json").read_text())["results"][0]).explanation
    streamed = stream.decode(stream.encode(stream.Graded(case))).result.explanation
    for back in (from_file, streamed):
        said = explain_view.target_text(back, lang="en")
        assert " = nan, expected " in said and "None" not in said, said
        assert said == explain_view.target_text(explanation, lang="en")  # as the terminal says it
