"""The class report's facts: what one autograde recorded, read back and counted (``python -m grader class-report``).

Nothing here runs a student's code or grades again. The judge (grader.nbgrader.judge) leaves, in each graded
check cell of an autograded notebook, a record under ``cell.metadata["tilelang_course"]["judge"]`` (its
docstring gives the schema): the verdict, where each case ran, each case's typed cause, the bench figures on a
GPU, and a MinHash sketch of the kernel's admitted TIR. :func:`read_course` turns an nbgrader course folder into
:class:`KernelRecord` s (one per student and graded kernel); every other function is pure, over those records,
and builds one part of the report's JSON document (:func:`build_report`; the field names are listed in
``REPORT_FIELDS`` and docs/instructor.md). grader.nbgrader.class_report_page writes the page, the JSON and the CSVs.

A notebook graded before the judge recorded cases or structure is read all the same: its kernels count as
"not recorded" in the parts that need those facts, and nothing fails.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import verified
from grader.outcome import GOOD

SCHEMA = "tilelang-course class-report 1"

# Look-alike submissions. Two kernels' structures are compared by the estimated Jaccard similarity of their
# sketches (grader.pipeline.structure.similarity). Students who start from one stub and follow one set of hints
# write kernels close to the course's reference, and so close to each other: a pair is flagged only where it is
# SIMILARITY_THRESHOLD or more alike AND more alike, by REFERENCE_MARGIN, than either kernel is to the reference.
# Both figures come from the course's right corpus (tests/right): of the pairs of right variants of one kernel
# that differ in more than three lines each way (written apart), none is flagged; the closest are 0.66 alike and
# 0.28 over the reference (mul_relu_forward) and 0.94 alike and 0.13 over it (softmax). A renamed, reordered copy
# of a row_sum_tiled is flagged, and a matmul_shared with an unused local declared first stays above the
# threshold. tests/test_class_report.py and tests/test_structure.py measure all of these.
SIMILARITY_THRESHOLD = 0.85
REFERENCE_MARGIN = 0.15
# A TIR this short (tokens, without the frame every kernel shares) leaves little room for two people to write it
# differently: vector add (76), the copies of puzzle 01 (71 to 120), outer_add (120). Their kernels are not compared.
MIN_TOKENS = 150
# Without the reference's structure (it could not be traced): a structure that this share of a kernel's compared
# students (and at least COMMON_MIN of them) have exactly is taken for the kernel's common form, not flagged.
COMMON_SHARE = 0.25
COMMON_MIN = 3

HIDDEN = "hidden_"  # grader.pipeline.hidden.PREFIX: the judge names hidden cases hidden_1, hidden_2, ...


# ------------------------------------------------------------------------------ records


@dataclass(frozen=True)
class CaseRecord:
    """One case of one student's kernel, as the judge recorded it."""

    case: str
    hidden: bool
    status: str
    checked: str  # grader.verified: "gpu", "simulated", "compiled", or ""
    cause_kind: str  # grader.outcome.CauseKind's value; "" where the judge named none
    facts: Mapping[str, Any]
    wrong: int | None
    total: int | None
    sizes: Mapping[str, int]
    line: str
    bench: Mapping[str, Any] | None

    @property
    def passed(self) -> bool:
        return self.status in GOOD

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CaseRecord:
        cause = data.get("cause") if isinstance(data.get("cause"), Mapping) else None
        name = str(data.get("case", ""))
        return cls(
            case=name,
            hidden=bool(data.get("hidden", name.startswith(HIDDEN))),
            status=str(data.get("status", "")),
            checked=str(data.get("checked", "")),
            cause_kind=str(cause.get("kind", "")) if cause else "",
            facts=dict(cause["facts"]) if cause and isinstance(cause.get("facts"), Mapping) else {},
            wrong=_int_or_none(data.get("wrong")),
            total=_int_or_none(data.get("total")),
            sizes={str(k): int(v) for k, v in sizes.items() if _is_int(v)}
            if isinstance(sizes := data.get("sizes"), Mapping)
            else {},
            line=str(data.get("line", "")),
            bench=dict(data["bench"]) if isinstance(data.get("bench"), Mapping) else None,
        )


@dataclass(frozen=True)
class KernelRecord:
    """One student's graded kernel: the judge's record of its check cell and the kernel's source."""

    student: str
    notebook: str
    puzzle: str
    kernel: str
    recorded: bool  # the check cell holds a judge record at all
    passed: bool = False
    device: str = ""  # "cuda" or "cpu"
    checked: Mapping[str, int] = field(default_factory=dict)
    cases: tuple[CaseRecord, ...] | None = None  # None: this autograde did not record cases
    sketch: tuple[int, ...] | None = None  # None: no structure recorded (not admitted, or not recorded)
    tokens: int = 0
    structure_case: str = ""  # the case whose TIR was sketched
    source: str = ""  # the %%puzzle cell(s) that define the kernel, as submitted

    @property
    def key(self) -> tuple[str, str]:
        return self.puzzle, self.kernel


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_or_none(value: Any) -> int | None:
    return int(value) if _is_int(value) else None


def visible_controls(text: str) -> str:
    """``text`` with each control, bidirectional or line-separator character (grader.outcome.CONTROL) shown as its
    code point, ``<U+202E>``: a source shown for review must look as the compiler reads it (a right-to-left override
    can make a line read otherwise, "Trojan Source"), and a terminal escape must not act."""
    from grader.outcome import CONTROL

    return CONTROL.sub(lambda found: f"<U+{ord(found.group()):04X}>", text)


def kernel_source(cells: Mapping[str, str], kernel: str) -> str:
    """The ``%%puzzle`` cells the kernel was graded from, for review: the cells that define ``kernel`` (a later one
    under the same name replaced the earlier), then the notebook's other ``%%puzzle`` cells, each under its
    ``%%puzzle`` line. The judge grades them as one module, so a later cell can rebind the name (``row_sum_tiled =
    _from_a_classmate``): shown the defining cell alone, a review would read a decoy, not the kernel graded."""
    cells = {visible_controls(name): visible_controls(source) for name, source in cells.items()}
    defining = re.compile(rf"^def {re.escape(kernel)}\(", re.M)
    first = [name for name, source in cells.items() if defining.search(source)]
    if len(first) == len(cells):
        return "\n".join(source.rstrip() for source in cells.values())
    order = first + [name for name in cells if name not in first]
    return "\n\n".join(f"%%puzzle {name}\n{cells[name].rstrip()}" for name in order)


def notebook_records(student: str, notebook_name: str, notebook: Any) -> list[KernelRecord]:
    """The records of one autograded notebook (an nbformat NotebookNode)."""
    from grader.nbgrader.records import check_cells, judge_record, puzzle_cells

    cells = puzzle_cells(notebook)
    found = []
    for cell, puzzle, kernel in check_cells(notebook):
        judge = judge_record(cell)
        source = kernel_source(cells, kernel)
        if judge is None:
            found.append(KernelRecord(student, notebook_name, puzzle, kernel, recorded=False, source=source))
            continue
        cases = judge.get("cases")
        structure = judge.get("structure") if isinstance(judge.get("structure"), Mapping) else None
        sketch = structure.get("sketch") if structure else None
        found.append(
            KernelRecord(
                student,
                notebook_name,
                puzzle,
                kernel,
                recorded=True,
                passed=bool(judge.get("passed")),
                device=str(judge.get("device", "")),
                checked={k: judge.get("checked", {}).get(k, 0) for k in verified.KINDS},
                cases=tuple(CaseRecord.from_json(c) for c in cases if isinstance(c, Mapping))
                if isinstance(cases, list)
                else None,
                sketch=tuple(sketch) if isinstance(sketch, list) and all(type(h) is int for h in sketch) else None,
                tokens=tokens if structure and type(tokens := structure.get("tokens")) is int else 0,
                structure_case=str(structure.get("case", "")) if structure else "",
                source=source,
            )
        )
    return found


def read_course(course: Path, assignment: str) -> tuple[list[KernelRecord], list[str]]:
    """Every autograded notebook of ``assignment`` in the course folder, as records, and the students who
    submitted but have no autograded notebook (not graded yet, or their grading failed)."""
    import nbformat

    records: list[KernelRecord] = []
    graded = set()
    autograded = course / "autograded"
    assigned = assignment_notebooks(course, assignment)
    for folder in sorted(autograded.glob(f"*/{assignment}")) if autograded.is_dir() else []:
        student = folder.parent.name
        for path in sorted(folder.glob("*.ipynb")):
            if not autograded_by_nbgrader(path, assigned):
                continue
            try:
                notebook = nbformat.read(path, as_version=4)
            except (OSError, ValueError):
                continue  # a notebook nbformat cannot read: the student counts as not graded for it
            graded.add(student)
            records += notebook_records(student, path.stem, notebook)
    submitted = course / "submitted"
    waiting = sorted(p.parent.name for p in submitted.glob(f"*/{assignment}") if p.parent.name not in graded)
    return records, waiting


def assignment_notebooks(course: Path, assignment: str) -> set[str] | None:
    """The names of the assignment's notebooks in the instructor's source/ (the notebooks nbgrader autogrades),
    or None where that folder is gone."""
    source = course / "source" / assignment
    if not source.is_dir():
        return None
    return {p.name for p in source.glob("*.ipynb") if not p.name.startswith(".")}


def autograded_by_nbgrader(path: Path, assigned: set[str] | None) -> bool:
    """Whether ``path`` is a notebook autograde wrote, not a file of the submission copied as it was. nbgrader
    copies every file of a submission but its notebooks, which it finds with glob's ``*.ipynb``, and glob skips
    a name starting with a dot: a student's ``.x.ipynb`` lands in autograded/ untouched, with whatever judge
    records its check cells carry (a forged pass and a 0.0001 ms bench). Only the assignment's own notebooks
    are read; a dot name never."""
    if path.name.startswith(".") or path.is_symlink() or not path.is_file():
        return False
    return assigned is None or path.name in assigned


# ------------------------------------------------------------------------------ similarity


def similarity(a: Sequence[int], b: Sequence[int]) -> float:
    """Estimated Jaccard similarity of two recorded sketches (grader.pipeline.structure.similarity)."""
    from grader.outcome import Structure
    from grader.pipeline.structure import similarity as estimate

    return float(estimate(Structure(list(a), 0, ""), Structure(list(b), 0, "")))


# ------------------------------------------------------------------------------ the report's parts


def by_kernel(records: Iterable[KernelRecord]) -> dict[tuple[str, str], list[KernelRecord]]:
    """(puzzle, kernel) -> its records, kernels in puzzle order and then as the notebooks list them."""
    grouped: dict[tuple[str, str], list[KernelRecord]] = {}
    for record in records:
        grouped.setdefault(record.key, []).append(record)
    order = {key: n for n, key in enumerate(grouped)}
    return {
        key: sorted(grouped[key], key=lambda r: r.student) for key in sorted(grouped, key=lambda k: (k[0], order[k]))
    }


def case_label(case: CaseRecord, hidden_names: Mapping[str, str] | None) -> str:
    """A case's name on the page: hidden ones only as "hidden case" unless the instructor allows their names
    (``hidden_names``: hidden_N -> the name, from the hidden cases file)."""
    if not case.hidden:
        return case.case
    if hidden_names is None:
        return "hidden case"
    return hidden_names.get(case.case, case.case)


def case_sizes(case: CaseRecord, hidden_sizes: Mapping[str, Mapping[str, int]] | None) -> dict[str, int]:
    """A case's sizes on the page: a hidden case's only from the hidden cases file, where the instructor allows."""
    if not case.hidden:
        return dict(case.sizes)
    return dict((hidden_sizes or {}).get(case.case, {}))


def pass_shares(
    records: Sequence[KernelRecord],
    hidden_names: Mapping[str, str] | None = None,
    hidden_sizes: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, Any]:
    """One kernel: how many students it was graded for, how many pass, and for each case the share failing it.
    Hidden cases are one row each, named only when ``hidden_names`` is given (their sizes with it)."""
    graded = [r for r in records if r.recorded]
    passed = [r.student for r in graded if r.passed]
    with_cases = [r for r in graded if r.cases is not None]
    rows: dict[str, dict[str, Any]] = {}
    for record in with_cases:
        for number, case in enumerate(record.cases or ()):
            key = case.case  # hidden_N stays one case across students: the judge numbers them the same way
            row = rows.setdefault(
                key,
                {
                    "case": case_label(case, hidden_names),
                    "hidden": case.hidden,
                    "sizes": case_sizes(case, hidden_sizes if hidden_names is not None else None),
                    "order": number,
                    "graded": 0,
                    "failed": 0,
                    "failed_students": [],
                },
            )
            row["graded"] += 1
            if not case.passed:
                row["failed"] += 1
                row["failed_students"].append(record.student)
    cases = sorted(rows.values(), key=lambda row: (row["hidden"], row["order"]))
    for row in cases:
        row.pop("order")
        row["fail_share"] = _share(row["failed"], row["graded"])
    return {
        "students": len(records),
        "graded": len(graded),
        "passed": len(passed),
        "pass_share": _share(len(passed), len(graded)),
        "not_recorded": sorted(r.student for r in records if not r.recorded),
        "cases_not_recorded": sorted(r.student for r in graded if r.cases is None),
        "cases": cases,
    }


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


NO_CAUSE = "unnamed"  # a failed case the judge named no cause for: grouped by its status instead


def cause_key(case: CaseRecord) -> str:
    """What a failed case is grouped under: its cause's kind, else "unnamed:STATUS" (still a typed fact)."""
    return case.cause_kind or f"{NO_CAUSE}:{case.status}"


def causes(records: Sequence[KernelRecord]) -> list[dict[str, Any]]:
    """One kernel's failed cases grouped by the judge's typed cause, most common first: how many cases, which
    students, and one representative feedback line (the first student's, in name order). Counted from the
    typed fields only, never from the feedback's words."""
    groups: dict[str, dict[str, Any]] = {}
    for record in records:
        for case in record.cases or ():
            if case.passed:
                continue
            key = cause_key(case)
            group = groups.setdefault(
                key, {"kind": key, "cases": 0, "students": [], "line": "", "example": "", "facts": []}
            )
            group["cases"] += 1
            if record.student not in group["students"]:
                group["students"].append(record.student)
            if not group["line"] and case.line:
                group["line"], group["example"] = case.line, record.student
            if case.facts and len(group["facts"]) < 5:
                group["facts"].append({"student": record.student, "case": case.case, "facts": dict(case.facts)})
    ordered = sorted(groups.values(), key=lambda g: (-len(g["students"]), -g["cases"], g["kind"]))
    for group in ordered:
        group["students"].sort()
    return ordered


def checked_where(records: Sequence[KernelRecord]) -> dict[str, Any]:
    """How one kernel's cases were checked across the class (as autograde-status says it per student): the case
    counts by kind, and the students with cases only compiled or only simulated (their numbers unchecked on a GPU)."""
    graded = [r for r in records if r.recorded]
    return {
        "counts": verified.total(r.checked for r in graded),
        "devices": {d: sum(1 for r in graded if r.device == d) for d in sorted({r.device for r in graded})},
        "only_compiled": sorted(r.student for r in graded if r.checked.get(verified.COMPILED, 0)),
        "simulated": sorted(r.student for r in graded if r.checked.get(verified.SIMULATED, 0)),
    }


def speed(records: Sequence[KernelRecord], name_students: bool = False) -> dict[str, Any]:
    """Where the class went on a GPU for one kernel: each passing kernel's bench figures from a GPU run, fastest
    first. A record graded on the CPU is never ranked (listed apart); neither is a failing kernel. Students are
    named only when ``name_students``; else each point is "#rank"."""
    points, on_cpu, failing = [], [], []
    for record in records:
        if not record.recorded:
            continue
        if record.device != "cuda":
            on_cpu.append(record.student)
            continue
        benched = [c for c in record.cases or () if c.bench and c.checked == verified.GPU]
        if not benched:
            continue
        if not record.passed:
            failing.append(record.student)
            continue
        case = benched[-1]  # the bench case: the judge times one case per kernel
        bench = case.bench or {}
        kernel_ms, torch_ms = float(bench.get("kernel_ms") or 0), float(bench.get("torch_ms") or 0)
        if not (kernel_ms > 0 and math.isfinite(kernel_ms)):
            continue
        floor_ms = bench.get("floor_ms")
        points.append(
            {
                "student": record.student,
                "case": case.case,
                "kernel_ms": kernel_ms,
                "torch_ms": torch_ms,
                "floor_ms": float(floor_ms) if floor_ms else None,
                "bound": str(bench.get("bound", "")),
                "vs_torch": round(torch_ms / kernel_ms, 4),
                "roofline": round(float(floor_ms) / kernel_ms, 4) if floor_ms else None,
            }
        )
    points.sort(key=lambda p: (p["kernel_ms"], p["student"]))
    for rank, point in enumerate(points, 1):
        point["rank"] = rank
        if not name_students:
            point["student"] = None
    return {"ranked": points, "cpu_not_ranked": sorted(on_cpu), "failed_not_ranked": sorted(failing)}


def _clusters(members: list[str], edges: list[tuple[str, str, float]]) -> list[list[str]]:
    parent = {m: m for m in members}

    def root(m: str) -> str:
        while parent[m] != m:
            parent[m] = parent[parent[m]]
            m = parent[m]
        return m

    for a, b, _ in edges:
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for m in members:
        groups.setdefault(root(m), []).append(m)
    return sorted((sorted(g) for g in groups.values() if len(g) > 1), key=lambda g: (-len(g), g))


def look_alikes(
    records: Sequence[KernelRecord],
    reference: Sequence[int] | None = None,
    threshold: float = SIMILARITY_THRESHOLD,
    margin: float = REFERENCE_MARGIN,
    min_tokens: int = MIN_TOKENS,
) -> dict[str, Any]:
    """One kernel's look-alike submissions, for review: clusters of students (single link) whose admitted TIR's
    structures are at least ``threshold`` similar and, where the reference's sketch is known, more similar to
    each other by ``margin`` than either is to the reference. Each cluster lists its flagged pairs.

    Being right is no sign of copying: kernels at ``threshold`` or closer to the reference are listed as the
    reference's form (a kernel like vector add has one natural right form), and two of them are flagged only by
    the margin rule. Without the reference, the exact structure that COMMON_SHARE of the students share is
    taken for the common form and left out. Left out too: kernels with no recorded structure (an empty or unbuilt
    submission). Where the TIR is shorter than ``min_tokens`` tokens nothing is compared; ``status`` says which."""
    with_structure = [r for r in records if r.sketch]
    result: dict[str, Any] = {
        "status": "compared",
        "threshold": threshold,
        "margin": margin if reference else None,
        "reference": bool(reference),
        "compared": len(with_structure),
        "no_structure": sorted(r.student for r in records if r.recorded and not r.sketch),
        "common_form": [],
        "clusters": [],
    }
    if not with_structure:
        result["status"] = "not recorded"
        return result
    tokens = sorted(r.tokens for r in with_structure)[len(with_structure) // 2]
    result["median_tokens"] = tokens
    if tokens < min_tokens:
        result["status"] = "too small"
        return result
    to_reference = {r.student: similarity(r.sketch or (), reference) for r in with_structure} if reference else {}
    if reference:
        result["common_form"] = sorted(s for s, score in to_reference.items() if score >= threshold)
        compared = with_structure
    else:
        forms: dict[tuple[int, ...], list[str]] = {}
        for record in with_structure:
            forms.setdefault(record.sketch or (), []).append(record.student)
        common = max(forms.values(), key=len)
        if len(common) >= max(COMMON_MIN, math.ceil(COMMON_SHARE * len(with_structure))):
            result["common_form"] = sorted(common)
        compared = [r for r in with_structure if r.student not in set(result["common_form"])]
    if len(result["common_form"]) == len(with_structure):
        result["status"] = "one form"
        return result
    edges = []
    for i, a in enumerate(compared):
        for b in compared[i + 1 :]:
            score = similarity(a.sketch or (), b.sketch or ())
            nearest = max(to_reference.get(a.student, 0.0), to_reference.get(b.student, 0.0))
            if score >= threshold and (not reference or score - nearest >= margin):
                edges.append((a.student, b.student, round(score, 4)))
    sources = {r.student: r.source for r in compared}
    for members in _clusters([r.student for r in compared], edges):
        inside = set(members)
        pairs = [
            {
                "a": a,
                "b": b,
                "similarity": score,
                "to_reference": [round(to_reference[a], 4), round(to_reference[b], 4)] if reference else None,
            }
            for a, b, score in edges
            if a in inside and b in inside
        ]
        pairs.sort(key=lambda p: (-p["similarity"], p["a"], p["b"]))
        result["clusters"].append({"students": members, "pairs": pairs, "sources": {m: sources[m] for m in members}})
    return result


def reference_structures(keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], tuple[int, ...]]:
    """(puzzle, kernel) -> the sketch of the course's own kernel (solutions/) at ``case``, traced and admitted
    in this process as the judge admits a learner's (trusted files only: grader.pipeline.trace.trace_tir).
    ``keys``: (puzzle, kernel, case) triples. A kernel that cannot be traced here is left out."""
    found: dict[tuple[str, str], tuple[int, ...]] = {}
    keys = list(keys)
    if not keys:
        return found
    from grader.discover import course_root, load_module, load_puzzle, puzzle_files
    from grader.pipeline.structure import of_tir
    from grader.pipeline.trace import kernel_function, trace_tir

    files = puzzle_files(course_root() / "solutions")
    modules: dict[str, Any] = {}
    for puzzle_id, name, case_name in keys:
        try:
            if puzzle_id not in modules:
                modules[puzzle_id] = load_module(files[puzzle_id])
            module = modules[puzzle_id]
            kernel = load_puzzle(module).kernel(name)
            case = next((c for c in kernel.cases if c.name == case_name), kernel.cases[0])
            tir = trace_tir(kernel_function(module, kernel), kernel, case, files[puzzle_id])
            found[(puzzle_id, name)] = tuple(of_tir(tir, case.name).sketch)
        except Exception:  # the report then compares by similarity alone, and says so
            continue
    return found


def structure_cases(records: Iterable[KernelRecord]) -> list[tuple[str, str, str]]:
    """(puzzle, kernel, case) of every kernel with a recorded structure: the case its sketches were made at."""
    found: dict[tuple[str, str], str] = {}
    for record in records:
        if record.sketch and record.key not in found:
            found[record.key] = record.structure_case
    return [(puzzle, kernel, case) for (puzzle, kernel), case in found.items()]


@dataclass(frozen=True)
class Options:
    """What the instructor chose (nbgrader_config.py's ClassReport section, or the command's flags)."""

    name_students: bool = False  # the speed leaderboard names students (else "#rank")
    show_hidden_cases: bool = False  # hidden cases' names and sizes (else "hidden case")
    threshold: float = SIMILARITY_THRESHOLD
    margin: float = REFERENCE_MARGIN
    min_tokens: int = MIN_TOKENS


def build_report(
    assignment: str,
    records: Sequence[KernelRecord],
    options: Options = Options(),
    not_graded: Sequence[str] = (),
    hidden_entries: Sequence[Mapping[str, Any]] = (),
    references: Mapping[tuple[str, str], Sequence[int]] | None = None,
) -> dict[str, Any]:
    """The report's JSON document (REPORT_FIELDS): per kernel, pass shares, causes, where the cases were
    checked, speed on a GPU and look-alikes. ``hidden_entries``: the hidden cases file's entries, read only
    where the instructor allows their names (grader.pipeline.hidden.read_entries). ``references``: (puzzle,
    kernel) -> the reference kernel's sketch (reference_structures), for the look-alikes."""
    kernels = []
    for (puzzle, kernel), group in by_kernel(records).items():
        names, sizes = hidden_labels(puzzle, kernel, hidden_entries) if options.show_hidden_cases else (None, None)
        kernels.append(
            {
                "puzzle": puzzle,
                "kernel": kernel,
                **pass_shares(group, names, sizes),
                "causes": causes(group),
                "checked": checked_where(group),
                "speed": speed(group, options.name_students),
                "look_alikes": look_alikes(
                    group,
                    (references or {}).get((puzzle, kernel)),
                    options.threshold,
                    options.margin,
                    options.min_tokens,
                ),
            }
        )
    students = sorted({r.student for r in records})
    return {
        "schema": SCHEMA,
        "assignment": assignment,
        "options": {
            "name_students": options.name_students,
            "show_hidden_cases": options.show_hidden_cases,
            "threshold": options.threshold,
            "margin": options.margin,
            "min_tokens": options.min_tokens,
            "common_share": COMMON_SHARE,
            "common_min": COMMON_MIN,
        },
        "students": students,
        "not_graded": sorted(not_graded),
        "kernels": kernels,
    }


def hidden_labels(
    puzzle: str, kernel: str, entries: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """hidden_N -> the entry's own name (else hidden_N), and its sizes, numbered as the judge numbers them
    (grader.pipeline.hidden.hidden_cases: the file's entries for this kernel, in order)."""
    names, sizes = {}, {}
    mine = [e for e in entries if str(e.get("puzzle", "")).zfill(2) == puzzle and e.get("kernel") == kernel]
    for number, entry in enumerate(mine, 1):
        key = f"{HIDDEN}{number}"
        names[key] = str(entry.get("name") or key)
        sizes[key] = {str(k): int(v) for k, v in dict(entry.get("sizes", {})).items()}
    return names, sizes


# What each field of the JSON document holds (docs/instructor.md lists the same).
REPORT_FIELDS = {
    "schema": "this layout's name and version",
    "assignment": "the assignment",
    "options": "name_students, show_hidden_cases, threshold (look-alike similarity), margin (over the reference), "
    "min_tokens, common_share, common_min",
    "students": "every student with an autograded notebook",
    "not_graded": "students who submitted and have no autograded notebook",
    "kernels[]": "puzzle, kernel, students, graded, passed, pass_share, not_recorded, cases_not_recorded, "
    "cases[], causes[], checked, speed, look_alikes",
    "kernels[].cases[]": "case (hidden: 'hidden case' unless allowed), hidden, sizes, graded, failed, fail_share, "
    "failed_students",
    "kernels[].causes[]": "kind (CauseKind's value, or unnamed:STATUS), cases, students, line, example, facts",
    "kernels[].checked": "counts (gpu, simulated, compiled cases), devices, only_compiled, simulated",
    "kernels[].speed": "ranked[] (rank, student or null, case, kernel_ms, torch_ms, floor_ms, bound, vs_torch, "
    "roofline), cpu_not_ranked, failed_not_ranked",
    "kernels[].look_alikes": "status (compared, too small, one form, not recorded), threshold, margin, reference "
    "(whether the reference's sketch was known), compared, median_tokens, no_structure, common_form (the reference's "
    "or the common form: not flagged), clusters[] (students, pairs[] of a, b, similarity, to_reference; sources)",
}
