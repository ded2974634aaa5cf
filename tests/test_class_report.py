"""The class report (grader.nbgrader.class_report, class_report_page) over a synthetic class of 19 students.

Each student is an autograded notebook built here with nbformat: a ``%%puzzle`` cell holding a kernel of puzzle
05's row_sum_tiled (independent right kernels from tests/right/p05, wrong ones from tests/wrong/p05, two copies
of one student's kernel, an empty stub) and a check cell whose judge record (grader.nbgrader.judge's schema) says
what autograde found: each case's status, where it ran, its typed cause (grader.outcome.CauseKind), the bench
figures on a GPU, and the structure sketch of the kernel. Nothing is graded: the report reads records only.
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import itertools
import json
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from grader.nbgrader import class_report as facts
from grader.nbgrader import class_report_page as report_page
from grader.outcome import CauseKind
from tests.conftest import ROOT
from tests.inprocess import spec

ASSIGNMENT = "ps1"
PUZZLE, KERNEL = "05", "row_sum_tiled"
NOTEBOOK = "p05_reduce_sum"
# The kernel's public cases, as the course's own spec gives them (a hidden case, hidden_1, comes after them)
SIZES = {case.name: dict(case.sizes) for case in spec(PUZZLE).kernel(KERNEL).cases}
CASES = tuple(SIZES)
SIMULATED = CASES[:5]  # on the CPU the large case is only compiled
RIGHT = ROOT / "tests" / "right" / "p05"
WRONG = ROOT / "tests" / "wrong" / "p05"

# ------------------------------------------------------------------------------ structure sketches
# As the judge makes them (grader.pipeline.structure.of_tir): each student's kernel traced and admitted at the
# kernel's first public case, here in the test process (grader.pipeline.trace.trace_tir, the same admission).


def traced_structure(source: str, folder: Path) -> dict | None:
    """The judge's structure record for a kernel's source; None where it does not trace (the empty stub)."""
    from grader.discover import load_module, load_puzzle, puzzle_files
    from grader.pipeline.build import BuildFailed, NotImplementedYet
    from grader.pipeline.structure import of_tir
    from grader.pipeline.trace import kernel_function, trace_tir

    kernel = load_puzzle(load_module(puzzle_files(ROOT / "solutions")[PUZZLE])).kernel(KERNEL)
    path = folder / f"kernel_{hashlib.sha1(source.encode()).hexdigest()[:12]}.py"
    path.write_text(source)
    try:
        tir = trace_tir(kernel_function(load_module(path), kernel), kernel, kernel.cases[0], path)
    except (BuildFailed, NotImplementedYet):
        return None
    structure = of_tir(tir, kernel.cases[0].name)
    return {"sketch": structure.sketch, "tokens": structure.tokens, "case": structure.case}


def kernel_text(path: Path) -> str:
    """A corpus file as a student's %%puzzle cell: the imports and the kernel, without the corpus's docstring."""
    text = path.read_text()
    return text[text.index("import tilelang") :]


SOURCE = kernel_text(RIGHT / "row_sum_tiled_reduce_each_tile.py")
# The same kernel with every name changed and the two independent allocations swapped.
RENAMED = (
    SOURCE.replace("wide", "block_tile")
    .replace("sums", "acc")
    .replace("bx", "row_block")
    .replace("for k in", "for step in")
    .replace("k * BLOCK_N", "step * BLOCK_N")
)
RENAMED = RENAMED.replace(
    "        block_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)\n"
    "        acc = T.alloc_fragment((BLOCK_M,), T.float32)\n",
    "        acc = T.alloc_fragment((BLOCK_M,), T.float32)\n"
    "        block_tile = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)\n",
)
assert RENAMED.count("acc = T.alloc_fragment") == 1 and "wide" not in RENAMED
# The same kernel with an extra loop that changes nothing: one step around the clear.
NO_OP = SOURCE.replace("        T.clear(sums)\n", "        for spare in T.serial(1):\n            T.clear(sums)\n")
assert NO_OP != SOURCE
STUB = (
    "import tilelang\nimport tilelang.language as T\n\n\n@tilelang.jit\n"
    "def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):\n    raise NotImplementedError()\n"
)

# ------------------------------------------------------------------------------ the class


def case(name: str, device: str, status: str = "passed", cause: CauseKind | None = None, facts_: dict | None = None):
    hidden = name.startswith("hidden_")
    checked = "gpu" if device == "cuda" else "simulated" if name in SIMULATED or hidden else "compiled"
    if status == "not_implemented":
        checked = ""
    line = f"{name}: {'passed' if status == 'passed' else status}" + (f" ({cause.value})" if cause else "")
    return {
        "case": name,
        "hidden": hidden,
        "status": status if not (checked == "compiled" and status == "passed") else "compiled",
        "checked": checked,
        "cause": {"kind": cause.value, "facts": facts_ or {}} if cause else None,
        "wrong": 7 if status == "failed" and not hidden else None,
        "total": 1000 if status == "failed" and not hidden else None,
        "sizes": {} if hidden else SIZES[name],
        "line": line,
        "bench": None,
    }


def student(
    name: str,
    source: str,
    device: str = "cpu",
    failing: dict[str, tuple[str, CauseKind | None]] | None = None,
    kernel_ms: float | None = None,
    structure: dict | None | str = "traced",
):
    """One student: ``failing`` case -> (status, cause); every other case passes. ``kernel_ms``: the bench case's
    time (torch takes 0.050 ms, the floor 0.020 ms). ``structure``: "traced" (the fixture ``klass`` traces the
    source), or the record itself (None: not admitted)."""
    failing = failing or {}
    cases = [case(c, device, *failing.get(c, ("passed", None))) for c in (*CASES, "hidden_1")]
    if kernel_ms is not None:
        bench = cases[-2]  # large_16384x8192, the bench case
        bench["bench"] = {"kernel_ms": kernel_ms, "torch_ms": 0.050, "floor_ms": 0.020, "bound": "memory"}
    passed = not failing
    checked = {k: sum(1 for c in cases if c["checked"] == k) for k in ("gpu", "simulated", "compiled")}
    judge = {"passed": passed, "seconds": 3.0, "kernels_in_run": 1, "device": device, "checked": checked}
    judge["cases"] = cases
    judge["structure"] = structure
    return name, source, judge


def right(file: str, name: str, **kwargs):
    return student(name, kernel_text(RIGHT / f"row_sum_tiled_{file}.py"), **kwargs)


def wrong(file: str, name: str, failing: dict, **kwargs):
    return student(name, kernel_text(WRONG / f"row_sum_tiled_{file}.py"), failing=failing, **kwargs)


ROUNDS_DOWN = ("failed", CauseKind.ROUNDS_DOWN)
WRONG_VALUES = ("failed", CauseKind.WRONG_VALUES)
CLASS = [
    # independent right kernels, in the right corpus's different styles; six of them graded on a GPU
    right("column_in_alloc_var", "amy", device="cuda", kernel_ms=0.040),
    right("first_tile_clears", "ben", device="cuda", kernel_ms=0.025),
    right("macro_peeled", "cat", device="cuda", kernel_ms=0.100),
    student("dan", SOURCE, device="cuda", kernel_ms=0.030),  # the source of the two copies below
    right("scalar_atomic_per_row", "eve", device="cuda", kernel_ms=0.500),
    right("serial_with_step", "fay", device="cuda", kernel_ms=0.060),
    right("shift_offsets", "gus"),
    right("split_columns_atomic", "hal"),
    right("transposed_reduce_dim0", "ida", kernel_ms=0.001),  # on the CPU: a bench figure never ranks
    # copies of dan's kernel
    student("jon_renamed", RENAMED),
    student("kim_no_op_loop", NO_OP, device="cuda", kernel_ms=0.031),
    # wrong kernels with known causes
    wrong(
        "columns_rounded_down",
        "lea",
        {"tail_1000": ROUNDS_DOWN, "odd_127x129": ROUNDS_DOWN, "long_rows_37x50001": ROUNDS_DOWN},
    ),
    wrong("column_offset", "max", {"tail_1000": WRONG_VALUES, "hidden_1": WRONG_VALUES}),
    wrong(
        "partial_not_cleared",
        "ned",
        {c: ("failed", CauseKind.NEVER_INITIALIZED) for c in SIMULATED},
        device="cuda",
        kernel_ms=0.010,  # timed, but failing: not ranked
    ),
    wrong("race_zeroed_in_same_launch", "ola", {"long_rows_37x50001": ("failed", CauseKind.RACE)}),
    wrong("cursor_advanced_first", "pam", {c: WRONG_VALUES for c in CASES[:3]}),
    wrong("fp16_accumulator", "quin", {"long_rows_37x50001": ("failed", CauseKind.IMPRECISE)}),
    wrong("scalar_atomic_not_zeroed", "sam", {c: ("failed", CauseKind.NEVER_INITIALIZED) for c in CASES[:2]}),
    # an empty submission: the stub, nothing admitted, no structure
    student(
        "rae_empty",
        STUB,
        failing={c: ("not_implemented", CauseKind.NOT_IMPLEMENTED) for c in (*CASES, "hidden_1")},
        structure=None,
    ),
]
INDEPENDENT_RIGHT = ["amy", "ben", "cat", "dan", "eve", "fay", "gus", "hal", "ida"]


def notebook(source: str, judge: dict | None):
    """An autograded notebook: the %%puzzle cell, and the check cell with the judge's record (None: an autograde
    from before the judge kept records)."""
    check = new_code_cell(f'check("{KERNEL}")')
    check.metadata["nbgrader"] = {"grade": True, "grade_id": f"p{PUZZLE}_{KERNEL}_check", "points": 1}
    if judge is not None:
        check.metadata["tilelang_course"] = {"judge": judge}
    return new_notebook(cells=[new_code_cell(f"%%puzzle {KERNEL}\n{source}"), check])


def records(batch: list) -> list[facts.KernelRecord]:
    found = []
    for name, source, judge in batch:
        found += facts.notebook_records(name, NOTEBOOK, notebook(source, judge))
    return found


def kernel_part(report: dict) -> dict:
    (part,) = report["kernels"]
    return part


@pytest.fixture(scope="module")
def klass(tmp_path_factory: pytest.TempPathFactory) -> list:
    """CLASS with every "traced" structure made as the judge makes it."""
    folder = tmp_path_factory.mktemp("kernels")
    traced: dict[str, dict | None] = {}
    batch = []
    for name, source, judge in CLASS:
        if judge["structure"] == "traced":
            if source not in traced:
                traced[source] = traced_structure(source, folder)
            judge = {**judge, "structure": traced[source]}
        batch.append((name, source, judge))
    return batch


@pytest.fixture(scope="module")
def reference() -> dict:
    """The course's own row_sum_tiled, sketched as the command sketches it (class_report.reference_structures)."""
    found = facts.reference_structures([(PUZZLE, KERNEL, CASES[0])])
    assert set(found) == {(PUZZLE, KERNEL)} and len(found[(PUZZLE, KERNEL)]) == 128
    return found


@pytest.fixture(scope="module")
def report(klass: list, reference: dict) -> dict:
    return facts.build_report(ASSIGNMENT, records(klass), references=reference)


# ------------------------------------------------------------------------------ the three questions


def test_every_cause_is_counted_exactly(report: dict):
    part = kernel_part(report)
    assert (part["students"], part["graded"], part["passed"]) == (19, 19, 11)
    found = {c["kind"]: (c["cases"], c["students"]) for c in part["causes"]}
    assert found == {
        "never_initialized": (7, ["ned", "sam"]),
        "wrong_values": (5, ["max", "pam"]),
        "not_implemented": (7, ["rae_empty"]),
        "rounds_down": (3, ["lea"]),
        "imprecise": (1, ["quin"]),
        "race": (1, ["ola"]),
    }
    assert list(found) == list(dict(sorted(found.items(), key=lambda kv: (-len(kv[1][1]), -kv[1][0], kv[0]))))
    rounds = next(c for c in part["causes"] if c["kind"] == "rounds_down")
    assert (rounds["example"], rounds["line"]) == ("lea", "tail_1000: failed (rounds_down)")
    by_case = {c["case"]: (c["failed"], c["failed_students"]) for c in part["cases"]}
    assert by_case["tail_1000"] == (6, ["lea", "max", "ned", "pam", "rae_empty", "sam"])
    assert by_case["large_16384x8192"] == (1, ["rae_empty"])
    assert by_case["hidden case"] == (2, ["max", "rae_empty"])  # named only where the instructor allows it
    assert part["pass_share"] == round(11 / 19, 4)


def test_copies_cluster_with_their_source_and_independent_right_kernels_do_not(report: dict):
    found = kernel_part(report)["look_alikes"]
    assert found["status"] == "compared" and found["reference"] is True
    assert found["no_structure"] == ["rae_empty"] and found["compared"] == 18
    assert [c["students"] for c in found["clusters"]] == [["dan", "jon_renamed", "kim_no_op_loop"]]
    (cluster,) = found["clusters"]
    pairs = {(p["a"], p["b"]): p for p in cluster["pairs"]}
    for copy in ("jon_renamed", "kim_no_op_loop"):
        pair = pairs[("dan", copy)]
        assert pair["similarity"] >= facts.SIMILARITY_THRESHOLD, pair
        assert pair["similarity"] - max(pair["to_reference"]) >= facts.REFERENCE_MARGIN, pair
    assert pairs[("dan", "kim_no_op_loop")]["similarity"] == 1.0  # a loop of one step reads as its body
    assert cluster["sources"]["jon_renamed"] == RENAMED.rstrip()
    # the wrong kernels one edit away from the reference are in its form, and flagged with nobody
    assert {"lea", "ned", "quin"} <= set(found["common_form"])


def test_speed_is_ranked_only_from_passing_gpu_runs(klass: list, report: dict):
    speed = kernel_part(report)["speed"]
    assert [p["kernel_ms"] for p in speed["ranked"]] == [0.025, 0.030, 0.031, 0.040, 0.060, 0.100, 0.500]
    assert [p["rank"] for p in speed["ranked"]] == list(range(1, 8))
    assert all(p["student"] is None for p in speed["ranked"])  # named only where the instructor says so
    assert speed["ranked"][0]["vs_torch"] == 2.0 and speed["ranked"][0]["roofline"] == 0.8
    assert "ida" in speed["cpu_not_ranked"] and speed["failed_not_ranked"] == ["ned"]
    named = kernel_part(facts.build_report(ASSIGNMENT, records(klass), facts.Options(name_students=True)))["speed"]
    assert [p["student"] for p in named["ranked"]][:3] == ["ben", "dan", "kim_no_op_loop"]


def test_where_the_cases_were_checked(report: dict):
    checked = kernel_part(report)["checked"]
    assert checked["devices"] == {"cpu": 11, "cuda": 8}
    assert "ida" in checked["only_compiled"] and "amy" not in checked["only_compiled"]
    # on a GPU: 7 cases each; on the CPU: 6 simulated (5 public, 1 hidden) and 1 compiled, but the empty one's none
    assert checked["counts"] == {"gpu": 8 * 7, "simulated": 10 * 6, "compiled": 10}


def test_the_threshold_leaves_the_right_corpus_unflagged():
    """SIMILARITY_THRESHOLD and REFERENCE_MARGIN against the right corpus: of every kernel's right variants (where
    the report compares at all: MIN_TOKENS), two that differ in more than three lines each way (written apart,
    not one edited into the other) are never flagged. The closest pairs are those class_report's comment cites."""
    independent = []
    for folder in sorted((ROOT / "tests" / "right").glob("p[0-9][0-9]")):
        kernels: dict[str, list[Path]] = {}
        for path in sorted(folder.glob("*.py")):
            kernels.setdefault(re.search(r'^KERNEL = "(.*)"$', path.read_text(), re.M).group(1), []).append(path)
        for name, paths in kernels.items():
            sketches = corpus_sketches(folder.name[1:], name, paths)
            reference, tokens = sketches.pop("reference")
            if tokens < facts.MIN_TOKENS:
                continue  # the report says such a kernel is too small to compare
            for (a, (first, _)), (b, (second, _)) in itertools.combinations(sketches.items(), 2):
                if changed_lines(a, b) > 6:
                    score = facts.similarity(first, second)
                    over = score - max(facts.similarity(first, reference), facts.similarity(second, reference))
                    independent.append((round(score, 2), round(over, 2), name))
    flagged = [p for p in independent if p[0] >= facts.SIMILARITY_THRESHOLD and p[1] >= facts.REFERENCE_MARGIN]
    assert flagged == [] and len(independent) > 50, flagged
    most_alike = max(p for p in independent if p[1] >= facts.REFERENCE_MARGIN)
    most_over = max((p for p in independent if p[0] >= facts.SIMILARITY_THRESHOLD), key=lambda p: p[1])
    closest = ((0.66, 0.28, "mul_relu_forward"), (0.94, 0.13, "softmax"))
    assert (most_alike, most_over) == closest, (most_alike, most_over)


def corpus_sketches(puzzle_id: str, name: str, paths: list[Path]) -> dict:
    from grader.discover import load_module, load_puzzle, puzzle_files
    from grader.pipeline.structure import of_tir
    from grader.pipeline.trace import kernel_function, trace_tir

    solution = puzzle_files(ROOT / "solutions")[puzzle_id]
    kernel = load_puzzle(load_module(solution)).kernel(name)
    case = kernel.cases[0]
    found = {}
    for key, path in (("reference", solution), *((p, p) for p in paths)):
        tir = trace_tir(kernel_function(load_module(path), kernel), kernel, case, path)
        structure = of_tir(tir, case.name)
        found[key] = (structure.sketch, structure.tokens)
    return found


def changed_lines(a: Path, b: Path) -> int:
    """Lines added or removed between two corpus kernels (their code from the decorator on, comments left out)."""

    def body(path: Path) -> list[str]:
        text = path.read_text()
        lines = text[text.index("@tilelang.jit") :].splitlines()
        return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]

    return sum(1 for line in difflib.ndiff(body(a), body(b)) if line[:1] in "+-")


# ------------------------------------------------------------------------------ what the page must not do


def test_hidden_cases_are_named_only_where_allowed(klass: list, report: dict):
    entries = [{"puzzle": "05", "kernel": KERNEL, "name": "secret_tall", "sizes": {"M": 4097, "N": 3}, "seed": 1}]
    options = facts.Options(show_hidden_cases=True)
    shown = kernel_part(facts.build_report(ASSIGNMENT, records(klass), options, hidden_entries=entries))
    row = next(c for c in shown["cases"] if c["hidden"])
    assert (row["case"], row["sizes"]) == ("secret_tall", {"M": 4097, "N": 3})
    hidden = next(c for c in kernel_part(report)["cases"] if c["hidden"])
    assert (hidden["case"], hidden["sizes"]) == ("hidden case", {})
    assert "secret_tall" not in json.dumps(report) and "secret_tall" not in report_page.page(report)


def test_older_notebooks_and_missing_keys_are_not_recorded_never_a_crash():
    old_judge = {"passed": True, "seconds": 1.0, "kernels_in_run": 1, "device": "cpu", "checked": {"simulated": 5}}
    batch = [("old_cases", SOURCE, old_judge), ("no_judge", SOURCE, None), ("odd", SOURCE, {"cases": [{"x": 1}]})]
    part = kernel_part(facts.build_report(ASSIGNMENT, records(batch)))
    assert part["not_recorded"] == ["no_judge"] and part["cases_not_recorded"] == ["old_cases"]
    assert part["look_alikes"]["status"] == "not recorded"
    page = report_page.page(facts.build_report(ASSIGNMENT, records(batch)))
    assert "not recorded" in page


def shape(first: int, tokens: int = 300) -> dict:
    """A made-up structure record: 128 hashes from ``first`` on (two of them alike as their ranges overlap)."""
    return {"sketch": list(range(first, first + 128)), "tokens": tokens, "case": CASES[0]}


def test_a_tiny_kernel_or_one_shared_form_flags_nobody():
    tiny = [student(f"s{n}", SOURCE, structure=shape(0, tokens=40)) for n in range(4)]
    found = kernel_part(facts.build_report(ASSIGNMENT, records(tiny)))["look_alikes"]
    assert found["status"] == "too small" and found["clusters"] == [] and found["median_tokens"] == 40
    same = [student(f"s{n}", SOURCE, structure=shape(0)) for n in range(6)]
    found = kernel_part(facts.build_report(ASSIGNMENT, records(same)))["look_alikes"]
    assert found["status"] == "one form" and found["clusters"] == [] and len(found["common_form"]) == 6
    # without the reference: four students with one exact form among three others is the common form
    common = [student(f"ref{n}", SOURCE, structure=shape(0)) for n in range(4)]
    others = [student(f"own{n}", SOURCE, structure=shape(1000 * (n + 1))) for n in range(3)]
    found = kernel_part(facts.build_report(ASSIGNMENT, records(common + others)))["look_alikes"]
    assert found["common_form"] == ["ref0", "ref1", "ref2", "ref3"] and found["clusters"] == []
    # with it: the same four are the reference's form; a pair of others alike flags, one near the reference not
    pair = [student("own_a", SOURCE, structure=shape(5000)), student("own_b", SOURCE, structure=shape(5001))]
    near = [student("near", SOURCE, structure=shape(1))]
    references = {(PUZZLE, KERNEL): tuple(range(128))}
    report = facts.build_report(ASSIGNMENT, records(common + pair + near), references=references)
    found = kernel_part(report)["look_alikes"]
    assert found["common_form"] == ["near", "ref0", "ref1", "ref2", "ref3"]
    assert [c["students"] for c in found["clusters"]] == [["own_a", "own_b"]]


HOSTILE = '</pre><script>alert("x")</script><img src=x onerror=alert(1)>'


def test_every_student_derived_string_is_escaped():
    batch = [
        student(
            f"a{HOSTILE}",
            SOURCE + f"# {HOSTILE}\n",
            failing={"tail_1000": ("failed", CauseKind.RACE)},
            structure=shape(0),
        ),
        student(f"b{HOSTILE}", SOURCE + f"# {HOSTILE}\n", device="cuda", kernel_ms=0.02, structure=shape(0)),
    ]
    batch[0][2]["cases"][1]["line"] = HOSTILE
    batch[0][2]["cases"][1]["cause"]["kind"] = HOSTILE  # a forged kind is shown as text too
    page = report_page.page(facts.build_report(ASSIGNMENT, records(batch), facts.Options(name_students=True)))
    assert (
        "<script" not in page and "<img" not in page and "onerror=alert" not in page.replace("onerror=alert(1)&gt;", "")
    )
    assert "&lt;script&gt;" in page
    assert len(re.findall(r"<pre>", page)) == 2  # the look-alike pair side by side; the forged </pre> stayed text


# ------------------------------------------------------------------------------ the command


def test_the_command_writes_the_page_the_json_and_the_csvs(klass: list, tmp_path: Path):
    course = tmp_path / "course"
    (course / "submitted").mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()\nc.ClassReport.name_students = True\n")
    for name, source, judge in klass:
        folder = course / "autograded" / name / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(notebook(source, judge), folder / f"{NOTEBOOK}.ipynb")
        (course / "submitted" / name / ASSIGNMENT).mkdir(parents=True)
    (course / "submitted" / "zed_late" / ASSIGNMENT).mkdir(parents=True)
    from grader.__main__ import main

    assert main(["class-report", ASSIGNMENT, "--course", str(course)]) == 0
    out = course / "reports" / ASSIGNMENT
    assert sorted(p.name for p in out.iterdir()) == sorted(report_page.OUTPUTS)
    written = json.loads((out / "class-report.json").read_text())
    assert written["schema"] == facts.SCHEMA and written["not_graded"] == ["zed_late"]
    assert written["options"]["name_students"] is True  # from the course's config
    assert kernel_part(written)["speed"]["ranked"][0]["student"] == "ben"
    page = (out / "class-report.html").read_text()
    assert "<svg" in page and "<script" not in page and "For review, not a verdict" in page
    with open(out / "causes.csv", newline="") as handle:
        rows = {row["kind"]: row for row in csv.DictReader(handle)}
    assert (rows["never_initialized"]["cases"], rows["never_initialized"]["student_names"]) == ("7", "ned;sam")
    with open(out / "students.csv", newline="") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert len(rows) == 19 and rows["lea"]["causes"] == "rounds_down" and rows["ben"]["kernel_ms"] == "0.025"
    # the command traced the reference itself: the copies flag, the reference's form does not
    look = kernel_part(written)["look_alikes"]
    assert look["reference"] is True and [c["students"] for c in look["clusters"]] == [
        ["dan", "jon_renamed", "kim_no_op_loop"]
    ]


def test_student_text_stays_text_in_the_csvs_and_the_review(tmp_path: Path):
    """A feedback line with `;=2*3` (a spreadsheet that splits on ';', as Excel does in a German locale, would read a
    formula there) is quoted whole, and a cell starting with a tab before '=' is defused; a source with a
    right-to-left override or a terminal escape shows each as its code point in the review (the red team's round
    on the instructor's outputs, 2026-12-05)."""
    import grader.nbgrader.class_report_page as page_module

    report = {
        "kernels": [
            {
                "puzzle": "02",
                "kernel": "add",
                "students": 1,
                "graded": 1,
                "passed": 0,
                "pass_share": 0.0,
                "checked": {"counts": {}},
                "causes": [
                    {
                        "kind": "build_error",
                        "cases": 1,
                        "students": ["\t=1+1"],
                        "example": "\t=1+1",
                        "line": "ValueError: see;=2*3;=cmd|' -C calc'!A0",
                    }
                ],
            }
        ]
    }
    page_module.write_csvs(report, [], tmp_path)
    text = (tmp_path / "causes.csv").read_text()
    assert "\"ValueError: see;=2*3;=cmd|' -C calc'!A0\"" in text  # one quoted field
    assert '"\'\t=1+1"' in text
    for line in text.splitlines()[1:]:
        assert all(field.startswith('"') for field in line.split('","')[:1]), line
    source = facts.kernel_source({"mine": "x = 1  # \u202e evil \u202c\n\x1b[2Jy = 2\n"}, "add")
    assert "\u202e" not in source and "\x1b" not in source
    assert "<U+202E> evil <U+202C>" in source and "<U+001B>[2Jy = 2" in source


DECOY = """import tilelang
import tilelang.language as T


@tilelang.jit
def row_sum_tiled(A, BLOCK_M: int, BLOCK_N: int, THREADS: int = 128):
    # my own approach: a plain loop per row
    M, N = T.const("M, N")
    A: T.Tensor((M, N), T.float16)
    C = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = 0
    return C
"""


def test_the_review_shows_every_cell_the_kernel_was_graded_from(klass: list, reference: dict, tmp_path: Path):
    """A later cell can rebind the kernel's name: mallory's first cell defines a row_sum_tiled of her own, her
    second holds dan's kernel under another name and then ``row_sum_tiled = _from_a_classmate``; the judge grades
    dan's kernel (its structure is recorded). The review's pane must show that second cell, not only the decoy."""
    copied = SOURCE.replace("def row_sum_tiled(", "def _from_a_classmate(") + "\n\nrow_sum_tiled = _from_a_classmate\n"
    graded = traced_structure(f"{DECOY}\n\n{copied}", tmp_path)
    assert graded is not None
    check = new_code_cell(f'check("{KERNEL}")')
    check.metadata["nbgrader"] = {"grade": True, "grade_id": f"p{PUZZLE}_{KERNEL}_check", "points": 1}
    check.metadata["tilelang_course"] = {"judge": student("mallory", "", structure=graded)[2]}
    cells = [new_code_cell(f"%%puzzle mine\n{DECOY}"), new_code_cell(f"%%puzzle tidy\n{copied}"), check]
    dan = next(entry for entry in klass if entry[0] == "dan")
    found = records([dan]) + facts.notebook_records("mallory", NOTEBOOK, new_notebook(cells=cells))
    look = kernel_part(facts.build_report(ASSIGNMENT, found, references=reference))["look_alikes"]
    (cluster,) = look["clusters"]
    assert cluster["students"] == ["dan", "mallory"]
    shown = cluster["sources"]["mallory"]
    assert "row_sum_tiled = _from_a_classmate" in shown and "T.reduce_sum(" in shown
    assert shown.index("%%puzzle mine") < shown.index("%%puzzle tidy")  # the cell defining it first
    assert cluster["sources"]["dan"] == SOURCE.rstrip()  # one cell: shown as it was


def test_only_the_notebooks_autograde_wrote_are_read(tmp_path: Path):
    """nbgrader copies a submission's other files into autograded/ as they are, and finds the notebooks it leaves
    out with glob's *.ipynb, which skips a name starting with a dot. mallory's stub fails; her ".judge.ipynb",
    copied untouched, holds a forged record: passed, 0.0001 ms on a GPU. The report reads neither it nor a notebook
    the assignment does not have."""
    from nbgrader.utils import find_all_files

    course = tmp_path / "course"
    (course / "source" / ASSIGNMENT).mkdir(parents=True)
    nbformat.write(notebook(STUB, None), course / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb")
    submitted = course / "submitted" / "mallory" / ASSIGNMENT
    submitted.mkdir(parents=True)
    forged = student("mallory", STUB, device="cuda", kernel_ms=0.0001, structure=None)[2]
    for name in (".judge.ipynb", "extra.ipynb"):
        nbformat.write(notebook(STUB, forged), submitted / name)
    # what nbgrader's autograde copies of the submission as it is (BaseConverter.init_assignment's call)
    copied = [Path(f).name for f in find_all_files(str(submitted), ["*.ipynb"])]
    assert copied == [".judge.ipynb"]
    folder = course / "autograded" / "mallory" / ASSIGNMENT
    folder.mkdir(parents=True)
    for name in (".judge.ipynb", "extra.ipynb"):  # extra.ipynb: as a later nbgrader might copy it
        (folder / name).write_bytes((submitted / name).read_bytes())
    failing = {c: ("not_implemented", CauseKind.NOT_IMPLEMENTED) for c in (*CASES, "hidden_1")}
    nbformat.write(
        notebook(STUB, student("mallory", STUB, failing=failing, structure=None)[2]), folder / f"{NOTEBOOK}.ipynb"
    )
    found, _ = facts.read_course(course, ASSIGNMENT)
    assert [(r.student, r.notebook, r.passed) for r in found] == [("mallory", NOTEBOOK, False)]
    part = kernel_part(facts.build_report(ASSIGNMENT, found))
    assert (part["graded"], part["passed"], part["speed"]["ranked"]) == (1, 0, [])
    # without source/, only the dot name is left out
    (course / "source" / ASSIGNMENT / f"{NOTEBOOK}.ipynb").unlink()
    (course / "source" / ASSIGNMENT).rmdir()
    assert sorted(r.notebook for r in facts.read_course(course, ASSIGNMENT)[0]) == ["extra", NOTEBOOK]


def test_the_page_speaks_chinese(monkeypatch: pytest.MonkeyPatch, report: dict):
    monkeypatch.setenv("TILELANG_COURSE_LANG", "zh_CN")
    page = report_page.page(report)
    assert "班级报告" in page and "最常见的原因" in page and "GPU 上的速度" in page


# ------------------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
def test_speed_on_a_gpu_ranks_the_bench_figures_of_gpu_runs(grade, tmp_path: Path):
    """On a GPU: four right row_sum_tiled kernels graded with --bench, each case kept as the judge keeps it in a
    check cell (grader.nbgrader.records.case_record). The report ranks all four by their measured time, with torch's
    time and the roofline beside it, and draws them; a fifth, the same figures recorded as a CPU run, is not ranked."""
    from grader import verified
    from grader.nbgrader.records import case_record
    from grader.outcome import GOOD, CaseResult

    names = ("first_tile_clears", "macro_peeled", "reduce_each_tile", "split_columns_atomic")
    batch = []
    for name in names:
        path = RIGHT / f"row_sum_tiled_{name}.py"
        run = grade(PUZZLE, "--file", str(path), "-k", KERNEL, "--bench")
        results = [CaseResult.from_dict(r) for r in run.doc["results"] if r["kernel"] == KERNEL]
        assert results and all(r.status in GOOD and r.checked == "gpu" for r in results), run.out + run.err
        judge = {"passed": True, "seconds": 1.0, "kernels_in_run": 1, "device": "cuda"}
        judge |= {
            "checked": verified.counts(results),
            "cases": [case_record(r, [(1, KERNEL)], PUZZLE) for r in results],
        }
        batch.append((name, kernel_text(path), judge))
    batch.append(("graded_on_cpu", batch[0][1], {**batch[0][2], "device": "cpu"}))
    report = facts.build_report(ASSIGNMENT, records(batch), facts.Options(name_students=True))
    speed = kernel_part(report)["speed"]
    ranked = speed["ranked"]
    assert sorted(p["student"] for p in ranked) == sorted(names) and speed["cpu_not_ranked"] == ["graded_on_cpu"]
    assert [p["kernel_ms"] for p in ranked] == sorted(p["kernel_ms"] for p in ranked)
    for point in ranked:
        assert point["kernel_ms"] > 0 and point["torch_ms"] > 0 and point["floor_ms"] > 0, point
        assert point["vs_torch"] == round(point["torch_ms"] / point["kernel_ms"], 4)
        assert 0 < point["roofline"] <= 1.05 and point["bound"] in ("memory", "compute"), point
    page = report_page.page(report)
    assert page.count("<circle") == 2 * len(names)  # one dot a kernel on each strip
    print(
        "\n".join(
            f"{p['rank']} {p['student']}: {p['kernel_ms']:.4f} ms, {p['vs_torch']:.2f}x torch, "
            f"{100 * p['roofline']:.0f}% of the roofline ({p['bound']})"
            for p in ranked
        )
    )


def test_every_cause_kind_has_a_label_on_the_page_in_both_languages():
    """A cause kind added to the judge (grader.outcome.CauseKind) is named in the report's words, not as its raw
    value, in English and in Chinese."""
    from grader.i18n import tr
    from grader.nbgrader.class_report_page import CAUSE_LABELS
    from grader.outcome import CauseKind

    assert sorted(kind.value for kind in CauseKind if kind.value not in CAUSE_LABELS) == []
    untranslated = [label for label in CAUSE_LABELS.values() if tr(label, lang="zh_CN") == label]
    assert untranslated == []


def test_a_check_cells_metadata_of_any_shape_is_read_as_no_record():
    """A student's notebook carries whatever metadata she gives it, and the class report reads it after the judge
    wrote its records: a "tilelang_course" that is a string, a judge record that is a string or whose counts are
    not integers is no record (grader.nbgrader.records.judge_record, which the shards read too); a record with a
    sketch of strings or sizes given as a list keeps no sketch and no sizes. None of them stops the report."""
    good = student("mallory", STUB, structure=None)[2]
    odd = {**good, "structure": {"sketch": ["x"], "tokens": "many", "case": 3}}
    odd["cases"] = [{**odd["cases"][0], "sizes": [1, 2], "cause": {"kind": "x", "facts": "y"}}]

    def check(kernel: str, meta: object, grade: object = True) -> nbformat.NotebookNode:
        cell = new_code_cell(f'check("{kernel}")')
        cell.metadata.update({"nbgrader": {"grade_id": f"p{PUZZLE}_{kernel}_check", "grade": grade}})
        cell.metadata["tilelang_course"] = meta
        return cell

    cells = [new_code_cell("x = 1", metadata={"tilelang_course": "x", "nbgrader": "y"})]
    cells += [check("row_sum", "x"), check("row_sum_tiled", {"judge": {"checked": {"gpu": "many"}}})]
    cells += [check("row_sum_tiled", {"judge": "forged"}), check("row_sum_tiled", {"judge": odd})]
    cells += [check("row_sum_tiled", {"judge": good}, grade="yes")]  # not a graded cell: not read
    found = facts.notebook_records("mallory", NOTEBOOK, new_notebook(cells=cells))
    assert [(r.kernel, r.recorded) for r in found] == [
        ("row_sum", False), ("row_sum_tiled", False), ("row_sum_tiled", False), ("row_sum_tiled", True)
    ]  # fmt: skip
    last = found[-1]
    assert last.sketch is None and last.tokens == 0 and last.cases[0].sizes == {} and last.cases[0].facts == {}
    facts.build_report(ASSIGNMENT, found)
