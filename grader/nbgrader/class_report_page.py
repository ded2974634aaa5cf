"""``python -m grader class-report ASSIGNMENT``: one HTML page, one JSON file and CSVs from one autograde.

Run in the nbgrader course folder (or give ``--course DIR``). It reads the autograded notebooks
(grader.nbgrader.class_report) and writes, into ``reports/ASSIGNMENT/`` (or ``--out DIR``):

* ``class-report.html``: per kernel, the share passing and failing each case, the most common causes, where the
  cases were checked (GPU, simulated, only compiled), the speed on a GPU as a plot, and look-alike submissions
  side by side, for review. No script; every student-derived string is escaped.
* ``class-report.json``: the same facts (grader.nbgrader.class_report.REPORT_FIELDS).
* ``kernels.csv``, ``causes.csv``, ``students.csv``: one row per kernel, per kernel and cause, per student and
  kernel, for the instructor's own tools.

What the instructor may choose, in ``nbgrader_config.py`` (or by the flags of the same names)::

    c.ClassReport.name_students = True      # the speed leaderboard names students (default: ranks only)
    c.ClassReport.show_hidden_cases = True  # hidden cases by their names and sizes (default: "hidden case")
    c.ClassReport.threshold = 0.85          # look-alike similarity (default: class_report.SIMILARITY_THRESHOLD)

No student code runs here, and nothing is graded again.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from grader import verified
from grader.i18n import current, tr
from grader.nbgrader import class_report as facts

OUTPUTS = ("class-report.html", "class-report.json", "kernels.csv", "causes.csv", "students.csv")

# The judge's cause kinds (grader.outcome.CauseKind), in a few words for the page; the JSON keeps the values.
CAUSE_LABELS = {
    "wrong_shape": "output of the wrong shape",
    "signature": "tensors that are not the puzzle's",
    "zeros": "every element 0",
    "underflow": "every element 0, the expected values tiny",
    "nothing_written": "nothing written",
    "overflow": "infinite elements",
    "unwritten_end": "the last positions never written",
    "uncovered_tail": "the partial edge tiles never written (too few blocks)",
    "unguarded_tail": "the partial edge tiles wrong (unguarded reads or writes)",
    "unwritten": "some elements never written",
    "nan_spread": "NaN from a buffer read before it was set",
    "imprecise": "small errors past the tolerance",
    "clamp": "a clamp's pattern",
    "shifted": "one error shared by runs of elements",
    "wrong_values": "wrong values",
    "side_effect": "stored to an input or past an output",
    "several_steps": "right in one step, wrong over several",
    "large_inputs": "wrong on large inputs only",
    "never_initialized": "an accumulator nothing clears",
    "added_never_set": "added into a buffer never set",
    "corner_copy": "copies only the corner tile",
    "rounds_down": "a count that rounds down",
    "reduce_restart": "a reduction that restarts",
    "mask_offset": "a mask counted from 0 in every tile",
    "overwritten": "an accumulator overwritten every step",
    "loop_short": "a loop one step short",
    "tile_step": "a tile copy that steps by another length than its tile",
    "repeated_update": "an update repeated by a T.Parallel loop",
    "concept_miss": "misses the construct the puzzle teaches",
    "empty_launch": "a grid of 0 blocks",
    "shared_memory": "a block over the GPU's shared memory",
    "race": "two blocks on one element",
    "fault": "stopped by the simulator (out of bounds)",
    "miscompiled": "a construct TileLang compiles wrongly",
    "crashed": "crashed",
    "timed_out": "ran past its time limit",
    "unsupported": "the simulator cannot run a construct",
    "not_implemented": "not implemented (the stub's TODO)",
    "missing_kernel": "no kernel under the stub's name",
    "not_a_kernel": "a plain Python function, not a kernel",
    "load_error": "the cell failed to run",
    "refused": "refused by admission",
    "build_error": "did not build",
    "not_run": "not run (an earlier case crashed or hung)",
    "not_applicable": "not applicable on this GPU",
    "compile_only": "only compiled",
    "setup": "this machine cannot grade",
    "out_of_memory": "out of memory",
    "internal_error": "a grader error",
}


def cause_label(kind: str) -> str:
    if kind.startswith(f"{facts.NO_CAUSE}:"):
        status = kind.split(":", 1)[1]
        return tr(f"no cause named (status {status})")
    return tr(CAUSE_LABELS[kind]) if kind in CAUSE_LABELS else kind


# ------------------------------------------------------------------------------ options


def configured(course: Path) -> dict[str, Any]:
    """The ClassReport section of the course's nbgrader_config.py, and JudgeChecks.hidden_cases."""
    from traitlets.config.loader import PyFileConfigLoader

    try:
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    except Exception:  # a config nbgrader itself could not load: the defaults, and the flags
        return {}
    section = config.ClassReport if "ClassReport" in config else {}
    chosen = {k: section[k] for k in ("name_students", "show_hidden_cases", "threshold") if k in section}
    if "JudgeChecks" in config and "hidden_cases" in config.JudgeChecks:
        chosen["hidden_cases"] = str(config.JudgeChecks.hidden_cases)
    return chosen


def hidden_entries(path: str) -> list[dict[str, Any]]:
    from grader.pipeline.hidden import HiddenCasesError, read_entries

    try:
        return read_entries(Path(path)) if path else []
    except HiddenCasesError:
        return []


# ------------------------------------------------------------------------------ the page

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1180px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{border-bottom:2px solid #ccc;padding-top:.6em}h3{font-size:1.05em;margin:1.2em 0 .3em}
table{border-collapse:collapse;margin:.4em 0}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left;
vertical-align:top}th{background:#f3f3f3}.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{display:inline-block;height:10px;background:#c0392b;vertical-align:middle}
.pass{display:inline-block;height:10px;background:#27ae60;vertical-align:middle}
.note{color:#555;font-size:.92em}.review{background:#fff5d6;border:1px solid #e0c060;padding:.5em .8em;margin:.6em 0}
.sides{display:grid;grid-template-columns:1fr 1fr;gap:.6em}.sides pre{background:#f7f7f7;border:1px solid #ddd;
padding:.5em;overflow:auto;max-height:22em;font-size:12px;margin:0}.who{font-weight:600}
nav a{margin-right:1em}
"""


def _percent(share: float | None) -> str:
    return "–" if share is None else f"{100 * share:.0f}%"


def _bar(share: float | None, css: str) -> str:
    width = 0 if share is None else round(120 * share)
    return f'<span class="{css}" style="width:{width}px"></span>'


def _students(names: Sequence[str], limit: int = 12) -> str:
    shown = ", ".join(escape(n) for n in names[:limit])
    more = len(names) - limit
    return shown + (escape(tr(f" and {more} more")) if more > 0 else "")


def speed_svg(points: Sequence[Mapping[str, Any]], name_students: bool) -> str:
    """The class's times on one kernel as two strips of dots: against torch (log scale, right of 1x is faster)
    and against the roofline (the fraction of the hardware's floor). Drawn here, no script."""
    width, left, right, strip = 760, 150, 30, 46
    span = width - left - right
    ratios = [p["vs_torch"] for p in points if p.get("vs_torch")]
    low = min([0.25, *ratios]) if ratios else 0.25
    high = max([4.0, *ratios]) if ratios else 4.0
    lo, hi = math.log10(low), math.log10(high)

    def x_torch(value: float) -> float:
        return left + span * (math.log10(value) - lo) / (hi - lo)

    def x_roof(value: float) -> float:
        return left + span * min(max(value, 0.0), 1.0)

    height = 2 * strip + 62  # two strips, their tick labels below each
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'font-size="11" font-family="sans-serif">'
    ]
    rows = ((tr("vs torch (log)"), 20), (tr("of the roofline"), 20 + strip + 22))
    for label, top in rows:
        parts.append(f'<text x="4" y="{top + strip / 2 + 4}">{escape(label)}</text>')
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{top + strip / 2}" y2="{top + strip / 2}" stroke="#bbb"/>'
        )
    top_torch, top_roof = rows[0][1], rows[1][1]
    for tick in (0.25, 0.5, 1, 2, 4, 8, 16):
        if low <= tick <= high:
            x = x_torch(tick)
            colour = "#555" if tick == 1 else "#ddd"
            parts.append(
                f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top_torch}" y2="{top_torch + strip}" stroke="{colour}"/>'
            )
            parts.append(f'<text x="{x:.1f}" y="{top_torch + strip + 12}" text-anchor="middle">{tick:g}x</text>')
    for tick in (0, 0.25, 0.5, 0.75, 1):
        x = x_roof(tick)
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top_roof}" y2="{top_roof + strip}" stroke="#ddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{top_roof + strip + 12}" text-anchor="middle">{100 * tick:.0f}%</text>')
    for n, point in enumerate(points):
        jitter = (n * 7) % (strip - 12) + 6  # points that tie stay visible
        who = point["student"] if name_students and point.get("student") else f"#{point['rank']}"
        title = escape(f"{who}: {point['kernel_ms']:.4g} ms, torch {point['torch_ms']:.4g} ms")
        if point.get("vs_torch"):
            x = x_torch(point["vs_torch"])
            parts.append(
                f'<circle cx="{x:.1f}" cy="{top_torch + jitter}" r="4" fill="#2471a3" fill-opacity=".7">'
                f"<title>{title}</title></circle>"
            )
        if point.get("roofline") is not None:
            x = x_roof(point["roofline"])
            parts.append(
                f'<circle cx="{x:.1f}" cy="{top_roof + jitter}" r="4" fill="#884ea0" fill-opacity=".7">'
                f"<title>{title}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


def kernel_section(kernel: Mapping[str, Any], options: Mapping[str, Any]) -> str:
    name = f"p{kernel['puzzle']} {kernel['kernel']}"
    out = [f'<h2 id="{escape(_anchor(kernel))}">{escape(name)}</h2>']
    graded, passed = kernel["graded"], kernel["passed"]
    out.append(
        f"<p>{_bar(kernel['pass_share'], 'pass')} "
        f"{escape(tr(f'{passed} of {graded} student(s) pass'))} ({_percent(kernel['pass_share'])})</p>"
    )
    if kernel["not_recorded"]:
        said = tr("graded before the judge kept records (not recorded)")
        out.append(f'<p class="note">{escape(said)}: {_students(kernel["not_recorded"])}</p>')
    if kernel["cases_not_recorded"]:
        said = tr("no per-case record (an older autograde)")
        out.append(f'<p class="note">{escape(said)}: {_students(kernel["cases_not_recorded"])}</p>')

    if kernel["cases"]:
        out.append(f"<h3>{escape(tr('Cases'))}</h3><table><tr>")
        for head in (tr("case"), tr("sizes"), tr("failing"), tr("students failing")):
            out.append(f"<th>{escape(head)}</th>")
        out.append("</tr>")
        for case in kernel["cases"]:
            label = tr("hidden case") if case["case"] == "hidden case" else case["case"]
            sizes = ", ".join(f"{k}={v}" for k, v in case["sizes"].items())
            out.append(
                f"<tr><td>{escape(label)}</td><td>{escape(sizes)}</td>"
                f'<td class="num">{_bar(case["fail_share"], "bar")} {_percent(case["fail_share"])} '
                f"({case['failed']}/{case['graded']})</td><td>{_students(case['failed_students'])}</td></tr>"
            )
        out.append("</table>")

    out.append(f"<h3>{escape(tr('Most common causes'))}</h3>")
    if kernel["causes"]:
        out.append("<table><tr>")
        for head in (tr("cause"), tr("cases"), tr("students"), tr("one feedback line")):
            out.append(f"<th>{escape(head)}</th>")
        out.append("</tr>")
        for cause in kernel["causes"]:
            line = f"{cause['example']}: {cause['line']}" if cause["line"] else ""
            out.append(
                f'<tr><td>{escape(cause_label(cause["kind"]))}<br><code class="note">{escape(cause["kind"])}</code>'
                f'</td><td class="num">{cause["cases"]}</td><td>{len(cause["students"])}: '
                f"{_students(cause['students'])}</td><td><code>{escape(line)}</code></td></tr>"
            )
        out.append("</table>")
    else:
        out.append(f'<p class="note">{escape(tr("No failed case was recorded."))}</p>')

    checked = kernel["checked"]
    counts = checked["counts"]
    out.append(f"<h3>{escape(tr('Where the cases were checked'))}</h3>")
    out.append(f"<p>{escape(tr(verified.line(name, counts)))}</p>")
    if checked["only_compiled"]:
        said = tr("only compiled, numbers not checked, for")
        out.append(f'<p class="note">{escape(said)}: {_students(checked["only_compiled"])}</p>')

    out.append(f"<h3>{escape(tr('Speed on a GPU'))}</h3>")
    speed = kernel["speed"]
    if speed["ranked"]:
        out.append(speed_svg(speed["ranked"], bool(options.get("name_students"))))
        said = tr(
            "One dot per passing kernel timed on a GPU. Top: torch's time over the kernel's (right of 1x: faster "
            "than torch). Bottom: the roofline's time over the kernel's (100%: as fast as the hardware allows)."
        )
        out.append(f'<p class="note">{escape(said)}</p>')
        out.append("<table><tr>")
        for head in ("#", tr("student"), "kernel ms", "torch ms", "vs torch", "roofline"):
            out.append(f"<th>{escape(head)}</th>")
        out.append("</tr>")
        for point in speed["ranked"][:10]:
            who = point["student"] if point["student"] else tr("(not named)")
            roof = "–" if point["roofline"] is None else f"{100 * point['roofline']:.0f}% {point['bound']}"
            out.append(
                f'<tr><td class="num">{point["rank"]}</td><td>{escape(who)}</td>'
                f'<td class="num">{point["kernel_ms"]:.4g}</td><td class="num">{point["torch_ms"]:.4g}</td>'
                f'<td class="num">{point["vs_torch"]:.2f}x</td><td class="num">{escape(roof)}</td></tr>'
            )
        out.append("</table>")
    else:
        out.append(f'<p class="note">{escape(tr("No passing kernel was timed on a GPU."))}</p>')
    if speed["cpu_not_ranked"]:
        said = tr("graded on the CPU, never ranked")
        out.append(f'<p class="note">{escape(said)}: {_students(speed["cpu_not_ranked"])}</p>')
    if speed["failed_not_ranked"]:
        said = tr("failed, not ranked")
        out.append(f'<p class="note">{escape(said)}: {_students(speed["failed_not_ranked"])}</p>')

    out.append(look_alike_section(kernel["look_alikes"]))
    return "\n".join(out)


def look_alike_section(found: Mapping[str, Any]) -> str:
    out = [f"<h3>{escape(tr('Look-alike submissions'))}</h3>"]
    status = found["status"]
    threshold = f"{found['threshold']:.2f}"

    def note(text: str) -> None:
        out.append(f'<p class="note">{escape(text)}</p>')

    if status == "not recorded":
        note(tr("No structure was recorded for this kernel (not recorded)."))
        return "\n".join(out)
    if status == "too small":
        tokens = found.get("median_tokens", 0)
        note(tr(f"Too small to tell copies apart: its TIR has about {tokens} tokens. Nothing was compared."))
        return "\n".join(out)
    count = len(found["common_form"])
    if status == "one form":
        note(tr(f"Every compared kernel has the reference's or the common form ({count} students): nothing to flag."))
        return "\n".join(out)
    if found["reference"]:
        margin = f"{found['margin']:.2f}"
        note(tr(f"Flagged: pairs {threshold} or more alike, and {margin} more alike than either is to the reference."))
        if count:
            said = tr(f"{count} students wrote kernels close to the reference's: none is flagged for that alone.")
            out.append(f'<p class="note">{escape(said)} {_students(found["common_form"])}</p>')
    else:
        note(tr(f"The reference could not be traced: pairs {threshold} or more alike are flagged."))
        if count:
            said = tr(f"{count} students share one exact form, the common one: not flagged.")
            out.append(f'<p class="note">{escape(said)} {_students(found["common_form"])}</p>')
    if not found["clusters"]:
        note(tr("No pair of kernels is flagged."))
    for cluster in found["clusters"]:
        names = ", ".join(cluster["students"])
        out.append(f'<div class="review"><p class="who">{escape(tr(f"For review, not a verdict: {names}"))}</p>')
        for pair in cluster["pairs"][:6]:
            score = f"{pair['similarity']:.2f}"
            said = tr(f"similarity {score}")
            if pair.get("to_reference"):
                first, second = (f"{value:.2f}" for value in pair["to_reference"])
                said = tr(f"similarity {score}; to the reference {first} and {second}")
            out.append(
                f'<p>{escape(pair["a"])} – {escape(pair["b"])}: {escape(said)}</p><div class="sides">'
                f"<pre>{escape(cluster['sources'].get(pair['a'], ''))}</pre>"
                f"<pre>{escape(cluster['sources'].get(pair['b'], ''))}</pre></div>"
            )
        out.append("</div>")
    return "\n".join(out)


def _anchor(kernel: Mapping[str, Any]) -> str:
    return f"p{kernel['puzzle']}-{kernel['kernel']}"


def page(report: Mapping[str, Any]) -> str:
    """The report as one HTML page: no script, every student-derived string escaped."""
    options = report["options"]
    assignment = report["assignment"]
    students = len(report["students"])
    title = tr(f"Class report: {assignment}")
    head = [
        "<!DOCTYPE html>",
        f'<html lang="{"zh-CN" if current() == "zh_CN" else "en"}"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{escape(tr(f'{students} student(s) with an autograded notebook.'))}</p>",
    ]
    if report["not_graded"]:
        said = tr("submitted, no autograded notebook")
        head.append(f'<p class="note">{escape(said)}: {_students(report["not_graded"])}</p>')
    said = tr(
        "Look-alikes are for review, never a verdict. The admitted TIR is compared, so names and the order of "
        "independent statements do not count. The thresholds leave every pair of independently written right "
        "kernels in the course's right corpus unflagged."
    )
    head.append(f'<p class="note">{escape(said)}</p>')
    links = " ".join(
        f'<a href="#{escape(_anchor(k))}">{escape("p" + k["puzzle"] + " " + k["kernel"])}</a>'
        for k in report["kernels"]
    )
    head.append(f"<nav>{links}</nav>")
    body = [kernel_section(kernel, options) for kernel in report["kernels"]]
    return "\n".join([*head, *body, "</body></html>\n"])


# ------------------------------------------------------------------------------ JSON and CSV


def write_csvs(report: Mapping[str, Any], records: Sequence[facts.KernelRecord], folder: Path) -> None:
    with open(folder / "kernels.csv", "w", newline="") as handle:
        out = csv.writer(handle, quoting=csv.QUOTE_ALL)  # a ';' in a field stays in it
        out.writerow(["puzzle", "kernel", "students", "graded", "passed", "pass_share", "gpu", "simulated", "compiled"])
        for k in report["kernels"]:
            counts = k["checked"]["counts"]
            out.writerow(
                [k["puzzle"], k["kernel"], k["students"], k["graded"], k["passed"], k["pass_share"]]
                + [counts.get(kind, 0) for kind in ("gpu", "simulated", "compiled")]
            )
    with open(folder / "causes.csv", "w", newline="") as handle:
        out = csv.writer(handle, quoting=csv.QUOTE_ALL)  # a ';' in a field stays in it
        out.writerow(["puzzle", "kernel", "kind", "cases", "students", "student_names", "example", "line"])
        for k in report["kernels"]:
            for cause in k["causes"]:
                out.writerow(
                    [k["puzzle"], k["kernel"], cause["kind"], cause["cases"], len(cause["students"])]
                    + [_cell(";".join(cause["students"])), _cell(cause["example"]), _cell(cause["line"])]
                )
    with open(folder / "students.csv", "w", newline="") as handle:
        out = csv.writer(handle, quoting=csv.QUOTE_ALL)  # a ';' in a field stays in it
        out.writerow(
            ["student", "puzzle", "kernel", "recorded", "passed", "device", "gpu", "simulated", "compiled"]
            + ["failed_cases", "causes", "kernel_ms", "torch_ms", "floor_ms"]
        )
        for r in sorted(records, key=lambda r: (r.student, r.puzzle, r.kernel)):
            failed = [c for c in r.cases or () if not c.passed]
            benched = [c.bench for c in r.cases or () if c.bench and c.checked == "gpu"]
            bench = benched[-1] if benched and r.device == "cuda" else {}
            out.writerow(
                [_cell(r.student), r.puzzle, r.kernel, r.recorded, r.passed, r.device]
                + [r.checked.get(kind, 0) for kind in ("gpu", "simulated", "compiled")]
                + [";".join(c.case for c in failed), ";".join(sorted({facts.cause_key(c) for c in failed}))]
                + [bench.get("kernel_ms", ""), bench.get("torch_ms", ""), bench.get("floor_ms", "") or ""]
            )


def _cell(text: str) -> str:
    """A spreadsheet would run a cell starting with = + - @ (or a tab or carriage return before one) as a formula:
    student text never starts one. Every field is quoted too, so a spreadsheet that splits on ';' finds none inside."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_report(
    course: Path, assignment: str, out: Path, options: facts.Options, hidden_cases: str = "", reference: bool = True
) -> dict[str, Any]:
    records, not_graded = facts.read_course(course, assignment)
    entries = hidden_entries(hidden_cases) if options.show_hidden_cases else []
    references = facts.reference_structures(facts.structure_cases(records)) if reference else {}
    report = facts.build_report(assignment, records, options, not_graded, entries, references)
    out.mkdir(parents=True, exist_ok=True)
    (out / "class-report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    (out / "class-report.html").write_text(page(report))
    write_csvs(report, records, out)
    return report


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m grader class-report",
        description="One HTML page, one JSON file and CSVs from one autograde: per kernel, who passed and why not, "
        "the speed on a GPU and look-alike submissions. No student code runs.",
    )
    p.add_argument("assignment", metavar="ASSIGNMENT", help="the assignment's name, e.g. ps1")
    p.add_argument("--course", type=Path, metavar="DIR", help="the course directory (default: this folder)")
    p.add_argument("--out", type=Path, metavar="DIR", help="where to write (default: DIR/reports/ASSIGNMENT)")
    p.add_argument(
        "--name-students",
        action="store_true",
        default=None,
        help="name students in the speed leaderboard (also c.ClassReport.name_students = True)",
    )
    p.add_argument(
        "--show-hidden-cases",
        action="store_true",
        default=None,
        help="show hidden cases' names and sizes (also c.ClassReport.show_hidden_cases = True)",
    )
    p.add_argument(
        "--threshold",
        type=float,
        metavar="S",
        help=f"look-alike similarity, 0 to 1 (default {facts.SIMILARITY_THRESHOLD}; also c.ClassReport.threshold)",
    )
    p.add_argument(
        "--no-reference",
        action="store_true",
        help="do not trace the course's own kernels (solutions/) to tell their form from look-alikes",
    )
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(list(argv))
    course = (args.course or Path.cwd()).resolve()
    if not (course / "nbgrader_config.py").is_file():
        print(
            f"grader: no nbgrader_config.py in {course}: run from the course directory or give --course",
            file=sys.stderr,
        )
        return 2
    chosen = configured(course)
    threshold = (
        args.threshold if args.threshold is not None else float(chosen.get("threshold", facts.SIMILARITY_THRESHOLD))
    )
    if not 0 < threshold <= 1:
        print("grader: --threshold takes a similarity above 0 and at most 1", file=sys.stderr)
        return 2
    options = facts.Options(
        name_students=bool(args.name_students if args.name_students is not None else chosen.get("name_students")),
        show_hidden_cases=bool(
            args.show_hidden_cases if args.show_hidden_cases is not None else chosen.get("show_hidden_cases")
        ),
        threshold=threshold,
    )
    out = (args.out or course / "reports" / args.assignment).resolve()
    hidden = str(chosen.get("hidden_cases", ""))
    report = write_report(course, args.assignment, out, options, hidden, reference=not args.no_reference)
    kernels = len(report["kernels"])
    students = len(report["students"])
    print(tr(f"class report of {args.assignment}: {students} student(s), {kernels} kernel(s)"))
    for name in OUTPUTS:
        print(f"  {out / name}")
    return 0
