"""A results page from one bench run's JSON: the table the grader prints (each figure the median of its
repetitions, with the spread, ~ on a ratio inside the noise), the GPU's clocks and power limit, the command, and
where each kernel stands against the course's targets (issue 39), a missed one shown as missed.

    python -m grader --solutions --bench --json bench.json          # on the GPU (--repeat N for more runs)
    python scripts/bench_page.py bench.json docs/results/h200-bench-DATE.md --title "..." --command "..." \\
        [--also gemv1.json ...] [--profiles DIR ...] [--commit HASH]

``--also``: further runs of some kernels (the same command restricted with -k), counted beside the main run in
the targets table. ``--profiles``: directories of ``--profile --json`` documents (pNN.json; a later directory's
file replaces an earlier one's): the Tensor Core instructions each kernel's generated code holds, and the counters
a target names. A kernel whose generated code holds no Tensor Core instruction gets its roofline recomputed
against the CUDA cores' fp32 FMA peak (grader/devices.py), as the grader now computes it; runs made before that
measured it against the Tensor Core peak, and the page says which rows it recomputed.

The JSON is committed beside the page (docs/results/data/), so the page can be rebuilt and checked:
``--check`` fails when the page differs from what the JSON gives (tests/test_bench_page.py runs it).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root, for scripts.page_output

from grader.devices import fma_peak_tflops, tensor_peak_tflops
from grader.frontends import render
from grader.outcome import CaseResult
from grader.pipeline import roofline
from scripts.page_output import write_or_check  # noqa: E402

FA3_TFLOPS = 487.0  # FlashAttention-3 forward on an H200 at (1, 8, 32768, 64), reported in flash-attention #1438


# ------------------------------------------------------------------------------------------ inputs


def profile_results(directories: list[Path]) -> list[dict]:
    """The --profile results of the newest run of each puzzle: a later directory's pNN.json replaces an earlier's."""
    files: dict[str, Path] = {}
    for directory in directories:
        for path in sorted(directory.glob("p*.json")):
            files[path.name] = path
    found: list[dict] = []
    for name in sorted(files):
        found += json.loads(files[name].read_text())["results"]
    return found


def cuda_core_kernels(profiles: list[dict]) -> set[tuple[str, str]]:
    """(puzzle, kernel) of every profiled kernel whose generated code holds no Tensor Core instruction."""
    return {
        (r["puzzle"], r["kernel"])
        for r in profiles
        if ((r.get("profile") or {}).get("yours") or {}).get("tensor_cores") == "none"
    }


def with_fma_roofline(result: CaseResult, board: str) -> bool:
    """Recompute a CUDA-core kernel's roofline against the fp32 FMA peak of ``board`` (the run's device name).
    True where that changed its roofline (a memory-bound kernel keeps its own); False too where the run already
    used that peak (its limits name it) or the board's is not known."""
    b = result.bench
    if b is None or "FMA peak" in b.limits:
        return False
    copy = re.search(r"copy bandwidth ([\d,.]+) GB/s", b.limits)
    if not copy or not fma_peak_tflops(board):
        return False
    limits = roofline.Limits(float(copy.group(1).replace(",", "")), tensor_peak_tflops(board), fma_peak_tflops(board))
    flops = b.tflops * b.kernel_ms * 1e9 if b.tflops else None
    moved = b.gbps * b.kernel_ms * 1e6 if b.gbps else None
    before = b.bound
    b.floor_ms, b.bound = roofline.floor(limits, flops, moved, tensor_cores=False)
    b.limits = limits.describe()
    return b.bound != before


# ------------------------------------------------------------------------------------------ targets


def find(results: list[CaseResult], puzzle: str, kernel: str, case: str) -> CaseResult | None:
    return next((r for r in results if (r.puzzle, r.kernel, r.case) == (puzzle, kernel, case) and r.bench), None)


def spread(b) -> str:
    return f"{b.spread_percent:.1f} %" if b.spread_percent is not None else "-"


def torch_spread(b) -> str:
    return f"{100.0 * (b.torch_range[1] - b.torch_range[0]) / b.torch_ms:.1f} %" if b.torch_range else "-"


def clock(b) -> str:
    gpu = b.gpu or {}
    return f"{gpu['sm_clock_mhz']} MHz" if gpu.get("sm_clock_mhz") else "-"


def verdict(met: bool, overlap: bool = False) -> str:
    return "met" if met else "**missed**" + (" (within the noise: the ranges overlap)" if overlap else "")


def ratio_row(r: CaseResult | None, label: str, baseline: str, at_least: float) -> list[str]:
    if r is None:
        return [label, f"≥ {at_least:.2f}x {baseline}", "not in this run", "-", "-", "**not measured**"]
    b = r.bench
    ratio = b.torch_ms / b.kernel_ms
    return [
        label,
        f"≥ {at_least:.2f}x {baseline}",
        f"{ratio:.2f}x ({b.kernel_ms:.4f} ms against {b.torch_ms:.4f} ms)",
        f"{spread(b)}; {baseline} {torch_spread(b)}",
        clock(b),
        verdict(ratio >= at_least, b.within_spread),
    ]


def targets(results: list[CaseResult], also: list[CaseResult], profiles: list[dict]) -> list[list[str]]:
    rows = []
    for size in ("large_4096", "large_8192"):
        rows.append(ratio_row(find(results, "08", "matmul_tuned", size), f"08 `matmul_tuned` {size}", "cuBLAS", 1.0))

    label = "08 `flash_attention_tensor_cores` heads_32x16384_d64"
    flash = find(results, "08", "flash_attention_tensor_cores", "heads_32x16384_d64")
    rows.append(ratio_row(flash, label, "torch SDPA", 1.0))
    if flash is not None and flash.bench.tflops:
        b = flash.bench
        share = 100.0 * b.tflops / FA3_TFLOPS
        rows.append(
            [
                label,
                f"≥ 85 % of FA3's ~{FA3_TFLOPS:.0f} TFLOP/s",
                f"{share:.0f} % ({b.tflops:.1f} TFLOP/s)",
                spread(b),
                clock(b),
                verdict(share >= 85.0),
            ]
        )

    conv = find(results, "09", "conv1d_channels_last", "large_256_131072_k5")
    rows.append(ratio_row(conv, "09 `conv1d_channels_last` large_256_131072_k5", "cuDNN (channels-last)", 1.0))

    # The one-token target: the decode rung, and dequant_gemv (a rung since 2026-12-05) where a run has it.
    for kernel in ("dequant_matmul_decode", "dequant_gemv"):
        decode = find(results, "10", kernel, "decode_1x8192x8192_g128")
        if decode is None:
            continue
        b = decode.bench
        us, low = 1000.0 * b.kernel_ms, 1000.0 * b.kernel_range[0] if b.kernel_range else 1000.0 * b.kernel_ms
        rows.append(
            [
                f"10 `{kernel}` decode_1x8192x8192_g128",
                "≤ 24 µs",
                f"{us:.1f} µs",
                spread(b),
                clock(b),
                verdict(us <= 24.0, low <= 24.0),
            ]
        )

    tuned = find(results, "08", "matmul_tuned", "last_wave_1792x2560x16384")
    streamk = find(results, "08", "matmul_streamk", "last_wave_1792x2560x16384")
    if tuned is not None and streamk is not None:
        t, s = tuned.bench, streamk.bench
        ratio = t.kernel_ms / s.kernel_ms
        worst = t.kernel_range[0] / s.kernel_range[1] if t.kernel_range and s.kernel_range else ratio
        rows.append(
            [
                "08 `matmul_streamk` last_wave_1792x2560x16384",
                "≥ 1.10x `matmul_tuned`",
                f"{ratio:.2f}x ({s.kernel_ms:.4f} ms against {t.kernel_ms:.4f} ms)",
                f"{spread(s)}; `matmul_tuned` {spread(t)}",
                clock(s),
                verdict(ratio >= 1.10, worst < 1.10 <= ratio),
            ]
        )

    gemvs = [r for r in (find(results, "08", "gemv", "large_8192"), *also) if r is not None and r.kernel == "gemv"]
    if gemvs:
        shares = [r.bench.roofline_percent for r in gemvs if r.bench.roofline_percent is not None]
        rows.append(
            [
                "08 `gemv` large_8192",
                "≥ 90 % of the copy bandwidth, in every run",
                ", ".join(f"{p:.0f} %" for p in shares) + f" ({len(shares)} runs)",
                ", ".join(spread(r.bench) for r in gemvs),
                ", ".join(clock(r.bench) for r in gemvs),
                verdict(all(p >= 90.0 for p in shares)),
            ]
        )

    profiled = next((p for p in profiles if (p["puzzle"], p["kernel"]) == ("07", "flash_attention")), None)
    if profiled is not None:
        y = profiled["profile"]["yours"]
        stall = (y.get("stalls") or [["-", 0]])[0]
        rows.append(
            [
                f"07 `flash_attention` (CUDA cores) {profiled['case']}",
                "the bound named from a profile",
                f"shared memory: {y['bank_conflict_pct']:.0f} % of its wavefronts are bank-conflict replays, "
                f"{stall[0].replace('_', ' ')} {stall[1]:.0f} % of stalls; FMA pipe {y['fma_pct']:.0f} % busy, "
                f"DRAM {y['dram_pct']:.0f} %",
                "one launch under Nsight Compute",
                "-",
                "named",
            ]
        )
    return rows


# ------------------------------------------------------------------------------------------ the page


def page(
    document: dict,
    title: str,
    command: str,
    also: list[dict] | None = None,
    profiles: list[dict] | None = None,
    commit: str = "",
) -> str:
    results = [CaseResult.from_dict(r) for r in document.get("results", [])]
    extra = [CaseResult.from_dict(r) for d in also or [] for r in d.get("results", []) if r.get("bench")]
    profiles = profiles or []
    on_cuda_cores = cuda_core_kernels(profiles)
    runs = document.get("runs", [])
    devices = sorted({run.get("device", "") for run in runs if run.get("device")})
    board = devices[0] if len(devices) == 1 else ""
    recomputed = [
        f"{r.puzzle} `{r.kernel}`"
        for r in [*results, *extra]
        if (r.puzzle, r.kernel) in on_cuda_cores and with_fma_roofline(r, board)
    ]
    passed = sum(1 for r in results if r.status == "passed")
    at = f" at commit {commit}" if commit else ""
    lines = [
        f"# {title}",
        "",
        f"`{command}`{at} on {', '.join(devices) or 'the GPU'}: {passed} of {len(results)} cases passed. Each time",
        "is the median of its repetitions (each repetition itself a median of CUDA-event timings over rotating input",
        "sets); spread is (slowest - fastest) / median; a ratio marked ~ lies within the two times' ranges.",
        "",
        "```",
        *render.bench_lines(results),
        "```",
        "",
    ]
    if recomputed:
        names = ", ".join(dict.fromkeys(recomputed))
        lines += [
            "**The roofline of the kernels on the CUDA cores** is recomputed: the run measured every compute-bound",
            "kernel against the Tensor Core peak, which a kernel with no Tensor Core instruction cannot approach.",
            "The generated code of these holds none (the `tensor_cores` figure of their `--profile` runs, whose",
            "JSON is read beside this run's), so their roofline above is their flops at the CUDA cores' fp32 FMA",
            f"peak (`fma`), from the run's own TFLOP/s: {names}. The grader now does the same when it times them.",
            "",
        ]
    if extra:
        lines += ["Further runs of single kernels, with the same command restricted to them:", "", "```"]
        lines += [*render.bench_lines(extra), "```", ""]
    rows = targets(results, extra, profiles)
    if rows:
        lines += [
            "## Against the targets (issue 39)",
            "",
            "Every target row, met or missed, from the figures above; spread is the kernel's, then its baseline's;",
            "the SM clock is the one read right after the case's timings (the power limit is in the table's last",
            "line).",
            "",
            "| kernel and case | target | measured | spread | SM clock | |",
            "| --- | --- | --- | --- | --- | --- |",
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
        ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", type=Path)
    parser.add_argument("page", type=Path)
    parser.add_argument("--title", required=True)
    parser.add_argument("--command", default="python -m grader --solutions --bench")
    parser.add_argument("--commit", default="")
    parser.add_argument("--also", type=Path, nargs="*", default=[], help="further --bench --json runs")
    parser.add_argument("--profiles", type=Path, nargs="*", default=[], help="directories of --profile --json runs")
    parser.add_argument("--check", action="store_true", help="fail if the page differs from what the JSON gives")
    args = parser.parse_args(argv)
    text = page(
        json.loads(args.json.read_text()),
        args.title,
        args.command,
        [json.loads(path.read_text()) for path in args.also],
        profile_results(args.profiles),
        args.commit,
    )
    return write_or_check(args.page, text, args.json, "scripts/bench_page.py", args.check)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
