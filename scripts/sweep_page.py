"""Write a results page from the raw output of block sweeps (``scripts/sweep.py`` lines under ``== ...`` headings,
as ``scripts/p07/sweep_cuda_cores.sh`` prints them). The page holds no figure that is not in that file.

    python scripts/sweep_page.py RAW.txt PAGE.md --title T --command C --commit SHA --date YYYY-MM-DD
    python scripts/sweep_page.py ... --check     # exit 1 if PAGE.md differs from what RAW.txt gives
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for scripts.page_output, when run as python scripts/sweep_page.py
from scripts.page_output import write_or_check  # noqa: E402

# {"BLOCK_M": 64, ...}   ok    1.4444 ms    11.9 TFLOP/s      4 GB/s  torch   0.0444 ms   0.03x
LINE = re.compile(
    r"^(?P<best>best: )?(?P<params>\{.*\})\s+(?P<verdict>\S+)\s+(?P<ms>[\d.]+) ms"
    r"(?:\s+(?P<tflops>[\d.]+) TFLOP/s)?(?:\s+(?P<gbps>[\d.]+) GB/s)?"
    r"\s+torch\s+(?P<torch>[\d.]+) ms\s+(?P<ratio>[\d.]+)x$"
)


def sections(raw: str, headings: list[str] | None = None) -> list[tuple[str, list[dict[str, str]]]]:
    """(heading, rows) per ``== heading``; a row is one variant's line (the ``best:`` repeat is left out). A raw
    file of sweeps printed one after another, with no headings, is cut after each ``best:`` line instead, and
    its sections take ``headings`` in order (the sweeps the script ran)."""
    found: list[tuple[str, list[dict[str, str]]]] = []
    given = list(headings or [])
    open_section = False
    for line in raw.splitlines():
        if line.startswith("== "):
            found.append((line[3:].strip(), []))
            open_section = True
            continue
        match = LINE.match(line.strip())
        if match is None:
            if line.strip():
                raise ValueError(f"not a sweep line: {line!r}")
            continue
        if not open_section:
            if not given:
                raise ValueError("a sweep line with no '== ' heading and no heading left to give it")
            found.append((given.pop(0), []))
            open_section = True
        if match["best"]:
            open_section = bool(headings is None)  # without given headings, a section runs to the next '=='
        else:
            found[-1][1].append(match.groupdict())
    if given:
        raise ValueError(f"{len(given)} heading(s) given for sweeps the file does not hold: {given}")
    return found


def _params(text: str) -> str:
    params = json.loads(text)
    passes = params.pop("_pass", None)
    shown = ", ".join(f"{name} {value}" for name, value in params.items()) or "as in the case"
    return shown + (f" ({', '.join(f'{k}={v}' for k, v in passes.items())})" if passes else "")


def page(raw: str, title: str, command: str, commit: str, date: str, headings: list[str] | None = None) -> str:
    out = [
        f"# {title}",
        "",
        f"Measured on {date} at commit {commit}, on an NVIDIA H200. Command, on the GPU from the repository root:",
        "",
        "```bash",
        command,
        "```",
        "",
        "Each variant is checked on the case before it is timed; `ms` is the kernel's median time, `torch` the",
        "reference's on the same inputs, and the ratio is torch's time over the kernel's. The fastest row of each",
        "table is in bold.",
    ]
    for heading, rows in sections(raw, headings):
        out += ["", f"## {heading}", "", *table(rows)]
    return "\n".join(out) + "\n"


def table(rows: list[dict[str, str]]) -> list[str]:
    """One sweep's rows as markdown table lines, the fastest in bold."""
    fastest = min(float(row["ms"]) for row in rows)
    out = [
        "| block | verdict | ms | TFLOP/s | GB/s | torch ms | vs torch |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        cells = [_params(row["params"]), row["verdict"], row["ms"], row["tflops"] or "-", row["gbps"] or "-"]
        cells += [row["torch"], f"{row['ratio']}x"]
        if float(row["ms"]) == fastest:
            cells = [f"**{cell}**" for cell in cells]
        out.append("| " + " | ".join(cells) + " |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("raw", type=Path)
    parser.add_argument("page", type=Path)
    for name in ("title", "command", "commit", "date"):
        parser.add_argument(f"--{name}", required=True)
    parser.add_argument(
        "--heading", action="append", help="the next section's heading, for a file of sweeps printed without them"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs from what the data gives")
    args = parser.parse_args(argv)
    text = page(args.raw.read_text(), args.title, args.command, args.commit, args.date, args.heading)
    return write_or_check(args.page, text, args.raw, "scripts/sweep_page.py", args.check)


if __name__ == "__main__":
    sys.exit(main())
