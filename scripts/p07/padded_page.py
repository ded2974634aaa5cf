"""Write puzzle 07's experiment 4 page (its K tile padded to D + 2 columns) from the raw outputs of one device
call: the bench turns, course kernel and padded kernel alternating, and the padded kernel's profile beside the
course's. The page holds no figure that is not in those two files.

    python scripts/p07/padded_page.py DATA_DIR PAGE.md --commit SHA --date YYYY-MM-DD
    python scripts/p07/padded_page.py ... --check     # exit 1 if PAGE.md differs from what DATA_DIR gives

DATA_DIR holds ``p07-padded-bench.txt`` and ``p07-padded-profile.txt`` (their commands: DATA_DIR/README.txt).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root, for scripts.page_output
from scripts.page_output import data_folder_main, profile_columns  # noqa: E402

BENCH = "p07-padded-bench.txt"
PROFILE = "p07-padded-profile.txt"
# == turn 1 course   /   == turn 1 padded
TURN = re.compile(r"^== turn (?P<turn>\d+) (?P<which>course|padded)$")
# 07 flash_attention large_16384x4096    1.3990    3.7%     12.3        4      18% fma    0.0467   21.1%     0.03x
BENCH_LINE = re.compile(
    r"^07 flash_attention (?P<case>\S+)\s+(?P<ms>[\d.]+)\s+(?P<spread>[\d.]+%)\s+(?P<tflops>[\d.]+)\s+\d+\s+"
    r"(?P<roofline>\d+% \w+)"
)
DEVICE = re.compile(r"^puzzle 07 · .* — (?P<device>NVIDIA .+)$")
# The profile rows the experiment is about, in the order the page shows them.
PROFILE_ROWS = [
    "worst shared-memory bank conflict",
    "shared-memory wavefronts lost to bank conflicts",
    "top warp stall reasons",
    "FMA pipe busy",
    "SM throughput, % of peak",
    "time under the profiler",
    "registers per thread",
    "shared memory per block",
    "achieved occupancy",
]


def turns(raw: str) -> list[tuple[int, str, dict[str, str]]]:
    """(turn, "course" or "padded", its bench line's fields) in the order they ran."""
    found: list[tuple[int, str, dict[str, str]]] = []
    heading = None
    for line in raw.splitlines():
        if match := TURN.match(line.strip()):
            heading = (int(match["turn"]), match["which"])
        elif (match := BENCH_LINE.match(line.strip())) and heading is not None:
            found.append((*heading, match.groupdict()))
            heading = None
    if not found or len({which for _, which, _ in found}) != 2:
        raise ValueError("no bench lines of both kernels under '== turn N course|padded' headings")
    return found


def device(raw: str) -> str:
    names = {m["device"] for line in raw.splitlines() if (m := DEVICE.match(line.strip()))}
    if len(names) != 1:
        raise ValueError(f"expected one device in the raw output, found {sorted(names)}")
    return names.pop()


def page(data: Path, commit: str, date: str) -> str:
    """The page's text, for a page written beside the folder that holds DATA_DIR (docs/results/ and data/)."""
    bench_raw, profile_raw = (data / BENCH).read_text(), (data / PROFILE).read_text()
    gpu = device(bench_raw)
    if device(profile_raw) != gpu:
        raise ValueError("the bench and the profile ran on different devices")
    rows = turns(bench_raw)
    by_turn: dict[int, dict[str, dict[str, str]]] = {}
    for turn, which, fields in rows:
        by_turn.setdefault(turn, {})[which] = fields
    case = rows[0][2]["case"]
    readme = f"{data.resolve().parent.name}/{data.resolve().name}/README.txt"
    out = [
        f"# Puzzle 07's experiment 4: the K tile padded to D + 2 columns ({gpu}, {date})",
        "",
        f"Measured on {date} at commit {commit}, on an {gpu} (the device tool's card; the course's figures are an",
        "H200's where it lends one). The padded kernel is `tests/right/p07/flash_k_tile_padded.py`: the course's",
        "`flash_attention` with `K_tile` allocated `(BLOCK_N, D + 2)` and filled as experiment 4 says. Commands,",
        f"raw outputs and the card's state are in [the data folder]({readme}) (`{data.name}/`).",
        "",
        f"## Time at the bench case, `{case}`",
        "",
        "`--bench --repeat 5`, the two kernels alternating turn by turn on one machine: the median of five",
        "repetitions, each a median of CUDA-event timings; spread = (slowest - fastest) / median.",
        "",
        "| turn | kernel | ms | spread | TFLOP/s | roofline |",
        "| --- | --- | ---: | ---: | ---: | --- |",
    ]
    names = {"course": "`flash_attention` (the course's)", "padded": "`K_tile` padded to D + 2"}
    for turn in sorted(by_turn):
        for which in ("course", "padded"):
            if which in by_turn[turn]:
                f = by_turn[turn][which]
                out.append(f"| {turn} | {names[which]} | {f['ms']} | {f['spread']} | {f['tflops']} | {f['roofline']} |")
    both = [t for t in by_turn.values() if len(t) == 2]
    ratios = sorted(float(t["course"]["ms"]) / float(t["padded"]["ms"]) for t in both)
    out += [
        "",
        f"The padded kernel is {ratios[0]:.2f}-{ratios[-1]:.2f}x as fast, turn by turn (the course kernel's time over"
        " the padded one's).",
        "",
        "## The profile, padded against the course kernel",
        "",
        "`--profile flash_attention` on the padded file (Nsight Compute, one launch each, the course kernel profiled",
        "beside it by the grader):",
        "",
        "| row | padded | course kernel |",
        "| --- | --- | --- |",
    ]
    found = profile_columns(profile_raw, PROFILE_ROWS)
    out += [f"| {label} | {found[label][0]} | {found[label][1]} |" for label in PROFILE_ROWS]
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    return data_folder_main(argv, __doc__, "scripts/p07/padded_page.py", page)


if __name__ == "__main__":
    sys.exit(main())
