"""Tiered hints: the stubs' TODO comments never hold an expression of the solution; tier 1 says why,
not what the TODO comment already says; the hard kernels have four tiers and the others three; no
kernel's tiers together dictate more than a fifth of the solution's expressions; and ``--hint`` /
``hint()`` give each tier and say when one does not exist."""

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
# Four tiers (idea, data layout, control flow, expressions) for these; three (why, how, close) for the rest.
HARD_KERNELS = {
    "softmax_online",
    "flash_attention",
    "matmul_tuned",
    "matmul_streamk",
    "flash_attention_tensor_cores",
    "conv1d_im2col",
    "conv1d_implicit",
    "conv1d_channels_last",
    "dequant_matmul",
    "dequant_matmul_decode",
    "dequant_gemv",
}
MAX_DICTATED = 0.2  # at most this fraction of a solution's expressions may be quoted across all its tiers
MAX_TODO_OVERLAP = 0.25  # at most this fraction of tier 1's word trigrams may come from the TODO comment
LOOP_HEADERS = {"serial", "Parallel", "Pipelined", "unroll", "vectorized"}


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


def _is_variable(token: str, before: str) -> bool:
    """A lowercase name that is not an attribute (``acc``, ``row_max``, ``k``): a hint may call it anything.
    Capitalised names (``BLOCK_K``, ``A``, ``T``) and attributes (``T.exp2``) must match as written."""
    return re.fullmatch(r"[a-z_]\w*", token) is not None and before != "."


def quotes(text: tuple[str, ...], expression: tuple[str, ...]) -> bool:
    """Whether the text holds the expression token for token, up to a consistent renaming of its
    variables: ``(chunk * CHUNK + k) * BLOCK_K`` quotes ``(c * CHUNK + kk) * BLOCK_K``."""
    for start in range(len(text) - len(expression) + 1):
        window, renamed, named = text[start : start + len(expression)], {}, {}
        for position, (want, got) in enumerate(zip(expression, window)):
            variable = _is_variable(want, expression[position - 1] if position else "")
            if variable != _is_variable(got, text[start + position - 1] if start + position else ""):
                break
            if not variable and want != got:
                break
            if variable and (renamed.setdefault(want, got) != got or named.setdefault(got, want) != want):
                break
        else:
            return True
    return False


def solution_expressions(code: str) -> set[tuple[str, ...]]:
    """The code's index and arithmetic expressions, as tokens: every operator (``bx * BLOCK``,
    ``j < N``) and every call that gives a value (``T.exp2(...)``, ``T.ceildiv(...)``), subexpressions
    included; not the statements (``T.copy(...)``), the allocations, or the loop headers themselves."""
    tree = ast.parse(code)
    skipped = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    skipped |= {id(n.iter) for n in ast.walk(tree) if isinstance(n, ast.For)}
    found: set[tuple[str, ...]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if id(node) in skipped or name.startswith("alloc_") or name in LOOP_HEADERS:
                continue
        elif not isinstance(node, (ast.BinOp, ast.BoolOp, ast.Compare)) and not (
            isinstance(node, ast.UnaryOp) and not isinstance(node.operand, ast.Constant)
        ):
            continue
        if len(tokens(ast.unparse(node))) >= MIN_TOKENS:
            found.add(tokens(ast.unparse(node)))
    return found


def dictated(tiers: list[str], solution_region: str) -> tuple[list[str], int]:
    """The solution's expressions that some tier quotes, and how many expressions the solution has.
    All tiers count together: a learner who asks for the last one has read them all."""
    expressions_ = solution_expressions(region_code(solution_region))
    quoted = [e for e in expressions_ if any(quotes(tokens(tier), e) for tier in tiers)]
    return sorted(" ".join(e) for e in quoted), len(expressions_)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_.]+", text.lower())


def todo_overlap(tier: str, comment: str) -> float:
    """The fraction of the tier's word trigrams that the TODO comment also has (1.0: a restatement)."""
    said = {tuple(words(comment)[i : i + 3]) for i in range(len(words(comment)) - 2)}
    trigrams = [tuple(words(tier)[i : i + 3]) for i in range(len(words(tier)) - 2)]
    return sum(t in said for t in trigrams) / max(1, len(trigrams))


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
def test_every_kernel_has_its_tiers_and_tier_1_says_what_the_stub_does_not(puzzle_id):
    data = hints.load(puzzle_id)
    stub = STUBS[puzzle_id].read_text()
    comments, solution = hints.todo_comments(stub), kernel_regions(SOLUTIONS[puzzle_id].read_text())
    for kernel in graded_kernels(stub):
        assert kernel in data, f"{hints.hints_file(puzzle_id).name} has no hints for {kernel}"
        assert len(data[kernel]) == (4 if kernel in HARD_KERNELS else 3), f"{kernel}: {len(data[kernel])} tiers"
        title, comment = comments[kernel]
        overlap = todo_overlap(data[kernel][0], f"{title} {comment}")
        assert overlap <= MAX_TODO_OVERLAP, f"{kernel}: tier 1 restates the TODO comment ({overlap:.0%})"
        quoted, _ = dictated(data[kernel][:1], solution[kernel])
        assert not quoted, f"{kernel}: tier 1 holds an expression of the solution: {quoted}"
    assert set(data) <= set(graded_kernels(stub)), "hints for a kernel the puzzle lacks"


@pytest.mark.parametrize("puzzle_id", PUZZLES)
def test_no_kernel_s_tiers_dictate_its_solution(puzzle_id):
    solution = kernel_regions(SOLUTIONS[puzzle_id].read_text())
    over = {}
    for kernel, tiers in hints.load(puzzle_id).items():
        quoted, total = dictated(tiers, solution[kernel])
        if len(quoted) > MAX_DICTATED * total:
            over[kernel] = f"{len(quoted)} of {total}: {quoted}"
    assert not over, f"hints that quote more than {MAX_DICTATED:.0%} of the solution's expressions: {over}"


STREAMK_LIKE = """# TODO begin: a made-up solution
lo = pid * work // SMS
for step in T.serial(waves * chunks + share):
    c = T.if_then_else(step < waves * chunks, step % chunks, g % chunks)
    for k in T.Pipelined(CHUNK, num_stages=STAGES):
        T.copy(A[row * BLOCK_M, (c * CHUNK + k) * BLOCK_K], A_tile)
# TODO end"""


def test_the_dictation_measure_counts_a_transliteration_renamed_or_not_and_lets_words_pass():
    expressions_ = solution_expressions(region_code(STREAMK_LIKE))
    assert ("T", ".", "Pipelined", "(", "CHUNK", ",", "num_stages", "=", "STAGES", ")") not in expressions_
    assert tokens("(c * CHUNK + k) * BLOCK_K") in expressions_ and tokens("step % chunks") in expressions_
    transliteration = (
        "Set lo to pid * work // SMS and loop step over T.serial(waves * chunks + share); c is "
        "T.if_then_else(step < waves * chunks, step % chunks, g % chunks); loop k over T.Pipelined(CHUNK, "
        "num_stages=STAGES) and copy A[row * BLOCK_M, (c * CHUNK + k) * BLOCK_K] into A_tile."
    )
    quoted, total = dictated([transliteration], STREAMK_LIKE)
    assert len(quoted) == total == len(expressions_)
    renamed = transliteration.replace("step", "s").replace(" c ", " chunk ").replace("(c ", "(chunk ")
    assert dictated(["A first tier in words.", renamed], STREAMK_LIKE)[0] == quoted
    in_words = (
        "Each block takes an equal share of the last wave's chunks; a step is a whole tile or one chunk of "
        "the share, and its K steps start where the chunk does."
    )
    assert dictated([in_words], STREAMK_LIKE) == ([], total)
    one = dictated(["A chunk's K steps start at (chunk * CHUNK + kk) * BLOCK_K of A."], STREAMK_LIKE)[0]
    assert one == ["( c * CHUNK + k ) * BLOCK_K", "c * CHUNK", "c * CHUNK + k"]
    assert MAX_DICTATED * total < len(quoted), "a transliteration fails the bound"
    # names that are not variables must match as written: another constant is another expression
    assert dictated(["(chunk * CHUNK + kk) * BLOCK_N"], STREAMK_LIKE)[0] == ["c * CHUNK", "c * CHUNK + k"]
    assert not quotes(tokens("x * y"), tokens("a * a")), "one name cannot stand for two"


def test_the_bound_rejects_the_hints_that_dictated_the_code():
    """The tiers of flash attention, stream-K and the implicit convolution as they stood before the bound
    (tests/data/hints_that_dictated.json): each quoted more than the bound allows."""
    before = json.loads((ROOT / "tests" / "data" / "hints_that_dictated.json").read_text(encoding="utf-8"))
    for old in before["hints"]:
        solution = kernel_regions(SOLUTIONS[old["puzzle"]].read_text())[old["kernel"]]
        quoted, total = dictated(old["tiers"], solution)
        assert len(quoted) > MAX_DICTATED * total, f"{old['kernel']}: {len(quoted)} of {total} passes the bound"


def test_the_overlap_with_the_todo_comment_finds_a_restatement():
    comment = "Walk K in tiles with a T.serial loop and fold each row into running sums with T.reduce_sum."
    assert todo_overlap(comment, comment) == 1.0
    assert todo_overlap("Walk K in tiles with a T.serial loop, then sum.", comment) > MAX_TODO_OVERLAP
    why = "A matrix-vector product reads every element of A once, so its speed is the speed of memory."
    assert todo_overlap(why, comment) == 0.0


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

    assert "from grader.nb import bench, check, explain, hint" in setup_source("08").splitlines()
