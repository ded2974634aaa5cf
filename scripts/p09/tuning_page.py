"""Write puzzle 09's conv1d_channels_last tuning page from the raw outputs of three device calls: two rounds of
candidates timed turn by turn with cuDNN (scripts/p09/channels_last_candidates.py), every case of the builds
graded on the GPU with --bench, the course's kernel profiled, and the channels-last corpus graded on the GPU.
The page holds no figure that is not in those files.

    python scripts/p09/tuning_page.py DATA_DIR PAGE.md --commit SHA --date YYYY-MM-DD
    python scripts/p09/tuning_page.py ... --check     # exit 1 if PAGE.md differs from what DATA_DIR gives

DATA_DIR holds the files named below (their commands: DATA_DIR/README.txt).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for scripts.page_output
from scripts.page_output import data_folder_main, profile_columns  # noqa: E402

CANDIDATES = ("call2-channels-last-candidates.json", "call5-channels-last-candidates.json")
GRADE = "call2-conv-grade.txt"
SOLUTION_BENCH = "call6-solution-bench.txt"
SOLUTION_PROFILE = "call6-solution-profile.txt"
CORPORA = "call6-corpora.txt"
BASELINE = "cuDNN (torch, channels-last)"
COURSE = "course build (bench block)"  # the kernel as it was: 128 x 128, 128 threads, no warp specialization
STAGED = "staged, ws 128x256/256"
SWIZZLED = "staged, ws 128x256/256 swizzled out"  # the kernel as the course now writes it
# puzzle 09 · Convolution — solutions/p09_conv1d.py — NVIDIA H100 80GB HBM3
HEADING = re.compile(r"^puzzle 09 · .* — (?P<file>\S+) — (?P<device>NVIDIA .+)$")
# 09 conv1d_channels_last large_256_131072_k5    0.2239    6.9%    383.7      602      39% com    0.1428 ...  0.64x
BENCH_LINE = re.compile(
    r"^09 conv1d_channels_last (?P<case>\S+)\s+(?P<ms>[\d.]+)\s+(?P<spread>[\d.]+%)\s+(?P<tflops>[\d.]+)\s+\d+\s+"
    r"\d+% \w+\s+(?P<torch_ms>[\d.]+)\s+[\d.]+%\s+(?P<ratio>[\d.]+x)"
)
COUNTS = re.compile(r"^(?:(?P<failed>\d+) failed)?(?:, )?(?:(?P<passed>\d+) passed)? in [\d.]+s$")
CORPUS_FILE = re.compile(r"^== (?P<file>tests/\S+\.py)$")
PROFILE_ROWS = [
    "time under the profiler",
    "Tensor Core pipe busy",
    "SM throughput, % of peak",
    "worst shared-memory bank conflict",
    "shared-memory wavefronts lost to bank conflicts",
    "top warp stall reasons",
    "registers per thread",
    "shared memory per block",
    "threads per block",
    "waves of blocks over the SMs",
]


def medians(data: dict) -> dict[str, list[float]]:
    """Variant -> its median time (ms) in each round, in the order the script timed them."""
    names = list(data["rounds"][0])
    return {name: [statistics.median(r[name]["runs_ms"]) for r in data["rounds"]] for name in names}


def graded(raw: str) -> list[dict[str, str]]:
    """One entry per graded run: the file, the device, its bench line's fields and how many cases passed."""
    runs: list[dict[str, str]] = []
    for line in raw.splitlines():
        if match := HEADING.match(line.strip()):
            runs.append(dict(match.groupdict()))
        elif (match := BENCH_LINE.match(line.strip())) and runs:
            runs[-1].update(match.groupdict())
        elif (match := COUNTS.match(line.strip())) and runs and match["passed"]:
            runs[-1]["passed"] = match["passed"]
    if not runs or any("ms" not in r or "passed" not in r for r in runs):
        raise ValueError("every graded run needs a heading, a bench line and a 'N passed' line")
    return runs


def corpus_verdicts(raw: str) -> list[tuple[str, int, int]]:
    """(file, cases failed, cases passed) for each corpus file graded, in order."""
    found: list[tuple[str, int, int]] = []
    current = None
    for line in raw.splitlines():
        if match := CORPUS_FILE.match(line.strip()):
            current = match["file"]
        elif current and (match := COUNTS.match(line.strip())) and (match["failed"] or match["passed"]):
            found.append((current, int(match["failed"] or 0), int(match["passed"] or 0)))
            current = None
    if not found:
        raise ValueError("no corpus file with its counts")
    return found


def candidates_table(times: dict[str, list[float]]) -> list[str]:
    rounds = len(next(iter(times.values())))
    out = [
        "| variant | " + " | ".join(f"round {i + 1} ms" for i in range(rounds)) + " | x cuDNN, by round |",
        "| --- | " + " | ".join("---:" for _ in range(rounds)) + " | --- |",
    ]
    base = times[BASELINE]
    for name, ms in times.items():
        ratios = ", ".join(f"{b / t:.2f}" for b, t in zip(base, ms))
        out.append(f"| {name} | " + " | ".join(f"{t:.4f}" for t in ms) + f" | {ratios} |")
    return out


def span(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}"


def page(data: Path, commit: str, date: str) -> str:
    first, second = (json.loads((data / name).read_text()) for name in CANDIDATES)
    runs, solution = graded((data / GRADE).read_text()), graded((data / SOLUTION_BENCH).read_text())
    gpu = first["device"]
    if {second["device"], *(r["device"] for r in runs + solution)} != {gpu}:
        raise ValueError("the calls ran on different kinds of device")
    one, two = medians(first), medians(second)
    for times, needed in ((one, (BASELINE, COURSE, STAGED)), (two, (BASELINE, COURSE, STAGED, SWIZZLED))):
        if missing := [name for name in needed if name not in times]:
            raise ValueError(f"the candidates lack {missing}")
    readme = f"{data.resolve().parent.name}/{data.resolve().name}/README.txt"
    out = [
        f"# Puzzle 09's `conv1d_channels_last` tuned toward cuDNN ({gpu}, {date})",
        "",
        f"Measured on {date} from commit {commit}, on {gpu} cards (the device tool's; the course's figures are an",
        "H200's where it lends one). The bench case is `large_256_131072_k5`: C_in = C_out = 256, L = 131072,",
        "K = 5, a GEMM of 131072 x 256 with a reduction 1280 deep (86 GFLOP). Each call may get another machine,",
        "and the same kernel's time moved by up to a sixth between machines: compare rows of one table. Commands,",
        f"raw outputs and each card's state are in [the data folder]({readme}) (`{data.name}/`), whose README",
        "numbers the calls as the headings below do.",
        "",
        "Every figure is the median of five repetitions, each a median of CUDA-event timings over three input sets,",
        "the variants and cuDNN (torch's convolution on the same channels-last layout) taking turns. *Staged* stores",
        "the output tile through shared memory (one TMA store); *ws* builds with TileLang's warp specialization on",
        "(a producer warpgroup issuing TMA copies); *course build* and *reference* are the course's kernel body as",
        f"it was, built without and with it. `{COURSE}` is the kernel as it was (128 x 128 tiles, 128",
        "threads, no staged store, no warp specialization).",
        "",
        "## Call 2: the tile, the staged store, warp specialization",
        "",
        *candidates_table(one),
        "",
        f"`{STAGED}` is {span([c / t for c, t in zip(one[COURSE], one[STAGED])])}x as fast as `{COURSE}` round by",
        "round. Warp specialization is most of it; the 128 x 256 tile without it gains little.",
        "",
        "## Call 5: the output tile swizzled",
        "",
        "`python -m grader 09 --profile --static` showed the staged store's `Y_tile` written 8 ways conflicted:",
        "its rows are 512 bytes, so the 16-byte rows one `stmatrix` writes at once fall in the same four banks.",
        f"`{SWIZZLED}` annotates the tile with `make_swizzled_layout`. Another machine:",
        "",
        *candidates_table(two),
        "",
        f"The swizzle takes `{STAGED}` from {span([b / t for b, t in zip(two[BASELINE], two[STAGED])])}x to",
        f"{span([b / t for b, t in zip(two[BASELINE], two[SWIZZLED])])}x cuDNN; against `{COURSE}` it is",
        f"{span([c / t for c, t in zip(two[COURSE], two[SWIZZLED])])}x as fast. It is the kernel the course now",
        "writes.",
        "",
        "## The course's kernel, every case on the GPU",
        "",
        "`python -m grader 09 --solutions --device cuda --bench --repeat 5 -k conv1d_channels_last --exact`, twice",
        "in call 6 (a third machine), and before it, in call 2, the old body at the new block and the staged variant",
        "(`tests/right/p09/conv1d_channels_last_staged_store.py`):",
        "",
        "| run | file | cases passed | ms | spread | TFLOP/s | cuDNN ms | x cuDNN |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    labels = [f"call 2, {i + 1}" for i in range(len(runs))] + [f"call 6, {i + 1}" for i in range(len(solution))]
    for label, run in zip(labels, runs + solution):
        out.append(
            f"| {label} | `{run['file']}` | {run['passed']} | {run['ms']} | {run['spread']} | {run['tflops']} |"
            f" {run['torch_ms']} | {run['ratio']} |"
        )
    rows = profile_columns((data / SOLUTION_PROFILE).read_text(), PROFILE_ROWS)  # (the kernel's, the course's)
    out += [
        "",
        "Its profile (`python -m grader 09 --solutions --profile conv1d_channels_last`, Nsight Compute):",
        "",
        "| row | value |",
        "| --- | --- |",
        *(f"| {label} | {rows[label][0]} |" for label in PROFILE_ROWS),
        "",
        "## The channels-last corpus on the GPU",
        "",
        "Every `tests/right/p09/conv1d_channels_last*.py` and `tests/wrong/p09/channels_last*.py`, graded with",
        "`--device cuda` (the corpus's decorators as the stub's now: warp specialization on, but for the serial-taps",
        "variant, which turns it off):",
        "",
        "| file | cases failed | cases passed |",
        "| --- | ---: | ---: |",
        *(f"| `{f}` | {failed} | {passed} |" for f, failed, passed in corpus_verdicts((data / CORPORA).read_text())),
    ]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    return data_folder_main(argv, __doc__, "scripts/p09/tuning_page.py", page)


if __name__ == "__main__":
    sys.exit(main())
