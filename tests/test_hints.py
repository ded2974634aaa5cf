"""Tiered hints: the stubs' TODO comments (tier 1) never hold an expression of the solution, the hint
files agree with the stubs, and ``--hint`` / ``hint()`` give each tier and say when one does not exist."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from grader import hints
from grader.discover import REGION, graded_kernels, puzzle_files
from grader.frontends.cli import main
from tests.conftest import ROOT

STUBS, SOLUTIONS = puzzle_files(ROOT / "puzzles"), puzzle_files(ROOT / "solutions")
PUZZLES = sorted(STUBS)
TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d*)?|\*\*|//|>>|<<|<=|>=|==|!=|\S")
MIN_TOKENS = 3  # an expression of fewer tokens (-x) says nothing a sentence would not
VERBATIM_TOKENS = 8  # a solution line at least this long must not appear whole in any tier


def tokens(text: str) -> tuple[str, ...]:
    found = tuple(TOKEN.findall(text))
    while len(found) > 2 and found[0] == "(" and found[-1] == ")" and _balanced(found[1:-1]):
        found = found[1:-1]
    return found


def _balanced(found: tuple[str, ...]) -> bool:
    depth = 0
    for token in found:
        depth += {"(": 1, ")": -1}.get(token, 0)
        if depth < 0:
            return False
    return depth == 0


def contains(text: tuple[str, ...], part: tuple[str, ...]) -> bool:
    return any(text[i : i + len(part)] == part for i in range(len(text) - len(part) + 1))


def region_code(region: str) -> str:
    """A TODO region's lines between ``# TODO begin`` and ``# TODO end``, dedented."""
    return textwrap.dedent("\n".join(region.splitlines()[1:-1]))


def expressions(code: str) -> set[tuple[str, ...]]:
    """Every subexpression of the code with an operator or a call, as tokens (whitespace and the
    outer parentheses do not matter), both as written and as ``ast.unparse`` writes it."""
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(ast.parse(code)):
        operator = isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare, ast.Call))
        if operator or (isinstance(node, ast.UnaryOp) and not isinstance(node.operand, ast.Constant)):
            for form in (ast.unparse(node), ast.get_source_segment(code, node) or ""):
                if len(tokens(form)) >= MIN_TOKENS:
                    found.add(tokens(form))
    return found


def code_lines(code: str) -> set[tuple[str, ...]]:
    """The code's lines (comments and a final colon dropped) long enough to count as the answer."""
    lines = (line.split("#")[0].strip().rstrip(":") for line in code.splitlines())
    return {tokens(line) for line in lines if len(tokens(line)) >= VERBATIM_TOKENS}


def kernel_regions(text: str) -> dict[str, str]:
    """Kernel name -> the text of its TODO region."""
    spans = [(n.lineno, n.end_lineno, n.name) for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)]
    out = {}
    for match in REGION.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        out[next(name for first, last, name in spans if first <= line <= last)] = match.group(0)
    return out


def leaks(stub_region: str, solution_region: str) -> list[str]:
    """The solution's expressions that the stub region's comments (title included) spell out."""
    comment = tokens(" ".join(line.strip()[1:] for line in stub_region.splitlines() if line.strip().startswith("#")))
    found = [e for e in expressions(region_code(solution_region)) if contains(comment, e)]
    return sorted(" ".join(e) for e in found)


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_stub_hints_hold_no_expression_of_the_solution(puzzle_id):
    stub, solution = kernel_regions(STUBS[puzzle_id].read_text()), kernel_regions(SOLUTIONS[puzzle_id].read_text())
    assert stub.keys() == solution.keys()
    found = {kernel: leaks(stub[kernel], solution[kernel]) for kernel in stub}
    assert not {k: v for k, v in found.items() if v}, "tier 1 (the stub's TODO comment) gives the answer away"


def test_the_leak_check_finds_an_expression_and_lets_a_sentence_pass():
    solution = "# TODO begin: unpack\nnibble = (byte >> (4 * (k % 2))) & 15\nT.copy(A[bx * BLOCK], a)\n# TODO end"
    assert leaks("# TODO begin: unpack\n# shift by 4*(k%2) bits\n# TODO end", solution) == ["4 * ( k % 2 )", "k % 2"]
    assert "bx * BLOCK" in leaks("# TODO begin: x\n# copy A[ bx*BLOCK ] in\n# TODO end", solution)
    assert leaks("# TODO begin: x\n# shift by (byte >> (4 * (k % 2))) & 15\n# TODO end", solution)
    said = "# TODO begin: unpack\n# Shift the byte so that the wanted nibble is lowest, then mask it.\n# TODO end"
    assert leaks(said, solution) == []
    assert leaks("# TODO begin: x\n# BLOCK_K*4 and k%20\n# TODO end", solution) == []  # tokens, not characters


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_every_kernel_has_tiers_and_tier_1_is_the_stub_comment(puzzle_id):
    data = hints.load(puzzle_id)
    comments = hints.todo_comments(STUBS[puzzle_id].read_text())
    for kernel in graded_kernels(STUBS[puzzle_id].read_text()):
        assert kernel in data, f"{hints.hints_file(puzzle_id).name} has no hints for {kernel}"
        assert len(data[kernel]) >= 2, f"{kernel}: only the stub's tier"
        assert data[kernel][0] == comments[kernel][1], f"{kernel}: tier 1 differs from the stub's TODO comment"
    assert set(data) <= set(graded_kernels(STUBS[puzzle_id].read_text())), "hints for a kernel the puzzle lacks"


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_no_tier_is_a_line_of_the_solution_verbatim(puzzle_id):
    solution = kernel_regions(SOLUTIONS[puzzle_id].read_text())
    copied = {}
    for kernel, tiers in hints.load(puzzle_id).items():
        lines = code_lines(region_code(solution[kernel]))
        for level, text in enumerate(tiers, 1):
            found = [" ".join(line) for line in lines if contains(tokens(text), line)]
            if found:
                copied[f"{kernel} tier {level}"] = found
    assert not copied, "a hint holds a line of the solution's code"


def test_a_hint_file_must_be_kernel_to_numbered_paragraphs(tmp_path: Path):
    (tmp_path / "puzzles" / "hints").mkdir(parents=True)
    (tmp_path / "puzzles" / "p01_copy.py").write_text((ROOT / "puzzles" / "p01_copy.py").read_text())
    path = tmp_path / "puzzles" / "hints" / "p01_copy.json"
    path.write_text(json.dumps({"copy_serial": {"1": "first", "2": "second  with\tspaces"}}))
    assert hints.load("1", tmp_path) == {"copy_serial": ["first", "second with spaces"]}
    assert hints.get("01", "copy_serial", 2, tmp_path).text == "second with spaces"
    for bad, message in [
        ({"copy_serial": {"1": "a", "3": "c"}}, "must be '1' to '2'"),
        ({"copy_serial": ["a", "b"]}, "must map tiers"),
        ({"copy_serial": {"1": "a\nb"}}, "one non-empty paragraph"),
    ]:
        path.write_text(json.dumps(bad))
        with pytest.raises(hints.HintError, match=message):
            hints.load("01", tmp_path)
    path.unlink()  # no file: the stub's comment is the one tier
    assert hints.get("01", "copy_threads", 1, tmp_path).levels == 1


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_prints_tier_1_by_default_and_any_tier_on_request(capsys):
    tiers = hints.load("01")["copy_serial"]
    code, out, err = _cli(capsys, "01", "--hint", "copy_serial")
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[0] == f"hint 1 of {len(tiers)} for copy_serial (puzzle 01):"
    assert " ".join(line.strip() for line in lines[1:-1]) == tiers[0]
    assert lines[-1] == "more: python -m grader 01 --hint copy_serial --level 2"
    code, out, _ = _cli(capsys, "1", "--hint", "copy_serial", "--level", str(len(tiers)))
    assert code == 0 and out.startswith(f"hint {len(tiers)} of {len(tiers)} for copy_serial (puzzle 01):")
    lines = out.splitlines()
    assert " ".join(line.strip() for line in lines[1:-1]) == tiers[-1] and "last hint" in lines[-1]


def test_cli_says_when_a_level_is_past_the_last_or_the_kernel_is_unknown(capsys):
    last = len(hints.load("01")["copy_serial"])
    code, out, err = _cli(capsys, "01", "--hint", "copy_serial", "--level", str(last + 1))
    assert code == 2 and not out and f"level {last + 1} is past the last" in err and len(err.splitlines()) == 1
    code, out, err = _cli(capsys, "01", "--hint", "copy")
    assert code == 2 and not out and len(err.splitlines()) == 1
    assert err == "grader: puzzle 01 has no kernel 'copy'; its kernels: copy_serial, copy_threads, copy_tiles\n"
    assert _cli(capsys, "01", "--hint", "copy_serial", "--level", "0")[0] == 2
    assert "there is no puzzle '42'" in _cli(capsys, "42", "--hint", "copy")[2]
    code, _, err = _cli(capsys, "08", "--level", "2")
    assert code == 2 and "--level goes with --hint" in err
    code, _, err = _cli(capsys, "--hint", "gemv")
    assert code == 2 and "one puzzle id" in err


def test_notebook_hint_uses_the_notebooks_puzzle(capsys, monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    from grader.frontends.notebook import hint

    monkeypatch.setenv("TILELANG_COURSE_WARM_GRADER", "0")  # no warm grader: nothing here grades
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    try:
        hint("copy_serial")
        assert "run the notebook's setup cell first" in capsys.readouterr().out
        shell.run_cell("%load_ext grader.nb")
        shell.run_cell("%puzzle 1")
        tiers = hints.load("01")["copy_serial"]
        hint("copy_serial", level=2)
        out = capsys.readouterr().out.splitlines()
        assert out[0] == f"hint 2 of {len(tiers)} for copy_serial (puzzle 01):"
        assert " ".join(line.strip() for line in out[1:-1]) == tiers[1]
        assert out[-1] == (
            'more: hint("copy_serial", level=3)'
            if len(tiers) > 2
            else "that is the last hint: the rest is yours to write"
        )
        hint("copy_serial", level=len(tiers) + 1)
        assert "past the last" in capsys.readouterr().out
        hint("row_sum")
        assert (
            "puzzle 01 has no kernel 'row_sum'; its kernels: copy_serial, copy_threads, copy_tiles"
            in capsys.readouterr().out
        )
        hint("row_sum", puzzle="05")
        assert capsys.readouterr().out.startswith("hint 1 of")
    finally:
        InteractiveShell.clear_instance()


def test_notebooks_import_hint_in_their_setup_cell():
    from grader.course.notebooks import setup_source

    assert "from grader.nb import bench, check, hint" in setup_source("08").splitlines()
