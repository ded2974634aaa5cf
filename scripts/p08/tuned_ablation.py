"""What each of matmul_tuned's changes is worth: an ablation on the GPU, one change at a time.

``matmul_tuned``'s bench case differs from ``matmul_pipelined``'s in six things: the tile (128 x 256 x 64
against 64 x 64 x 32), the threads (256 against 128), the stages (4 against 3), the block order
(``T.use_swizzle`` panels of 10 tile rows), the store (through a shared tile), and TileLang's warp
specialization (on; ``matmul_pipelined`` turns it off). This script times, at 4096³ and 8192³:

* ``revert``: ``matmul_tuned`` as shipped, and with each change reverted alone (the others kept);
* ``path``: ``matmul_pipelined`` as shipped, then one change added at a time until it is
  ``matmul_tuned`` (the last step is the ``revert`` group's "as shipped" row);
* ``streamk``: stream-K against the data-parallel kernel with everything else equal (tile, threads,
  3 stages, panels of 8, the staged store): ``matmul_tuned`` with the stream-K bench case's stages and
  panel, and ``matmul_streamk`` as shipped. The one thing that differs is the schedule.

Every variant is checked against the float64 reference with the grader's tolerance before and after
its timing. Times come from ``grader.pipeline.timing.repeated_ms``: each figure is repeated (5 times by
default; each repetition the median of CUDA-event timings over rotating input sets), the variants and
torch taking turns, so drift moves them alike; the JSON keeps every repetition, and min/median/max.

    source .gpu/env.sh && python scripts/p08/tuned_ablation.py /tmp/out/p08-ablation.json
    python scripts/p08/tuned_ablation.py --compile-only           # no GPU: compile every variant for sm_90a
    python scripts/p08/ablation_page.py /tmp/out/p08-ablation.json  # the JSON into docs/results/p08-ablation.md

The variants that need code changes (no panel, a direct store) are ``matmul_variant`` below, which is
``matmul_tuned`` with two switches; ``--compile-only`` checks that with the shipped parameters it
generates the same CUDA as ``matmul_tuned``, and with ``matmul_pipelined``'s the same as that kernel.
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import json
import os
import re
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a file: grader/ and solutions/ live at the repository root
    sys.path.insert(0, str(ROOT))

import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402

SIZES = (4096, 8192)
WS_OFF = {"tl.disable_warp_specialized": True}
COMMAND = "python scripts/p08/tuned_ablation.py"


@tilelang.jit
def matmul_variant(
    A,
    B,
    BLOCK_M: int,
    BLOCK_N: int,
    BLOCK_K: int,
    STAGES: int = 3,
    THREADS: int = 256,
    PANEL: int = 10,
    STAGED: int = 1,
):
    """matmul_tuned with two switches: PANEL = 0 launches the blocks in row order (no T.use_swizzle),
    STAGED = 0 stores the accumulator straight from the fragment into C."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=THREADS) as (bx, by):
        A_tile = T.alloc_shared((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_shared((BLOCK_K, BLOCK_N), T.float16)
        if STAGED:
            C_tile = T.alloc_shared((BLOCK_M, BLOCK_N), T.float16)
        acc = T.alloc_fragment((BLOCK_M, BLOCK_N), T.float32)
        if PANEL:
            T.use_swizzle(panel_size=PANEL)
        T.clear(acc)
        for k in T.Pipelined(T.ceildiv(K, BLOCK_K), num_stages=STAGES):
            T.copy(A[by * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K, bx * BLOCK_N], B_tile)
            T.gemm(A_tile, B_tile, acc)
        if STAGED:
            T.copy(acc, C_tile)
            T.copy(C_tile, C[by * BLOCK_M, bx * BLOCK_N])
        else:
            T.copy(acc, C[by * BLOCK_M, bx * BLOCK_N])

    return C


@dataclass(frozen=True)
class Variant:
    group: str  # "revert", "path" or "streamk"
    label: str
    function: str  # "p08.NAME" (the solution's kernel, with its bench case's parameters) or "matmul_variant"
    params: dict[str, int] = field(default_factory=dict)  # over the bench case's (p08.) or complete (variant)
    pass_configs: dict[str, Any] = field(default_factory=dict)
    same_as: str = ""  # a variant measured under another label (the path's last step)


def tiles_of(params: dict[str, int]) -> dict[str, int]:
    return {key: params[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K")}


def variants(tuned: dict[str, int], pipelined: dict[str, int], streamk: dict[str, int]) -> list[Variant]:
    """The ablation's variants, from the bench cases' parameters (so they follow the puzzle's cases)."""
    shipped = {key: tuned[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "THREADS", "PANEL")}
    small = {key: pipelined[key] for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES")}
    start = {**small, "THREADS": 128, "PANEL": 0, "STAGED": 0}
    tiles = tiles_of(shipped)
    tile_text = "x".join(str(shipped[key]) for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    small_text = "x".join(str(small[key]) for key in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
    revert = [
        Variant("revert", "matmul_tuned as shipped", "p08.matmul_tuned"),
        Variant("revert", f"tiles back to {small_text}", "matmul_variant", {**shipped, **tiles_of(small)}),
        Variant("revert", "128 threads", "matmul_variant", {**shipped, "THREADS": 128}),
        Variant("revert", f"{small['STAGES']} stages", "matmul_variant", {**shipped, "STAGES": small["STAGES"]}),
        Variant("revert", "no panels (row order)", "matmul_variant", {**shipped, "PANEL": 0}),
        Variant("revert", "C stored from the fragment", "matmul_variant", {**shipped, "STAGED": 0}),
        Variant("revert", "warp specialization off", "matmul_variant", dict(shipped), WS_OFF),
    ]
    with_ws = {**start}
    threads = {**with_ws, "THREADS": shipped["THREADS"]}
    wide = {**threads, **tiles}
    deep = {**wide, "STAGES": shipped["STAGES"]}
    panels = {**deep, "PANEL": shipped["PANEL"]}
    path = [
        Variant("path", "matmul_pipelined as shipped", "p08.matmul_pipelined"),
        Variant("path", "+ warp specialization", "matmul_variant", with_ws),
        Variant("path", f"+ {shipped['THREADS']} threads", "matmul_variant", threads),
        Variant("path", f"+ tiles {tile_text}", "matmul_variant", wide),
        Variant("path", f"+ {shipped['STAGES']} stages", "matmul_variant", deep),
        Variant("path", f"+ panels of {shipped['PANEL']}", "matmul_variant", panels),
        Variant("path", "+ staged store (= matmul_tuned)", "p08.matmul_tuned", same_as="matmul_tuned as shipped"),
    ]
    one_change = {"STAGES": streamk["STAGES"], "PANEL": streamk["PANEL"]}
    stream = [
        Variant(
            "streamk",
            f"data-parallel: matmul_tuned, {streamk['STAGES']} stages, panels of {streamk['PANEL']}",
            "p08.matmul_tuned",
            one_change,
        ),
        Variant("streamk", f"stream-K: matmul_streamk as shipped (CHUNK {streamk['CHUNK']})", "p08.matmul_streamk"),
    ]
    return revert + path + stream


# The code of matmul_variant against the solution's kernels: (variant parameters, kernel, pass configs).
FAITHFUL = (("shipped", "p08.matmul_tuned", {}), ("start", "p08.matmul_pipelined", WS_OFF))


@dataclass
class Job:
    variant: Variant
    size: int
    case: Any
    kernel: Any  # the grader's Kernel spec (matmul_tuned's for matmul_variant)
    function: Any
    options: dict[str, Any]
    tir: Any = None
    compiled: Any = None
    error: str = ""
    compile_s: float = 0.0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="?", help="where to write the figures (GPU runs)")
    parser.add_argument("--compile-only", action="store_true", help="no GPU: trace and compile for sm_90a")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated, default 4096,8192")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions of each figure (at least 5)")
    parser.add_argument("--workers", type=int, default=8, help="compiles in parallel (nvcc is a process)")
    parser.add_argument("--only", default="", help="only the variants whose label contains this (a quick look)")
    args = parser.parse_args(argv)
    if not args.compile_only and not args.json:
        parser.error("give the JSON path to write, or --compile-only")
    if args.repeats < 5:
        parser.error("--repeats: at least 5")

    from grader.discover import load_module, load_puzzle
    from grader.pipeline.build import COMPILE_ONLY_TARGET, compile_tir
    from grader.pipeline.trace import jit_options, trace_tir
    from grader.spec import Case

    tilelang.disable_cache()  # threads saving to one cache directory trip over each other's staging
    sizes = [int(size) for size in args.sizes.split(",")]
    solutions = ROOT / "solutions" / "p08_matrix.py"
    module = load_module(solutions)
    puzzle = load_puzzle(module)
    bench = {name: puzzle.kernel(name).case("large_4096").params for name in ("matmul_tuned", "matmul_pipelined")}
    bench["matmul_streamk"] = puzzle.kernel("matmul_streamk").case("large_4096").params
    chosen = variants(bench["matmul_tuned"], bench["matmul_pipelined"], bench["matmul_streamk"])

    if args.compile_only:
        import torch  # noqa: F401 (TileLang's CUDA checks import it; no GPU needed)

        target, sms, device = COMPILE_ONLY_TARGET, 132, "compile only (sm_90a)"
    else:
        import torch

        target, sms = "cuda", torch.cuda.get_device_properties(0).multi_processor_count
        device = torch.cuda.get_device_name(0)
    print(f"{device}: {sms} SMs; sizes {sizes}; {len(chosen)} variants", flush=True)

    def job(variant: Variant, size: int, params: dict[str, Any] | None = None) -> Job:
        name = variant.function.removeprefix("p08.")
        own = variant.function.startswith("p08.")
        kernel = puzzle.kernel(name if own else "matmul_tuned")
        names = {case.name for case in kernel.cases}
        base = kernel.case(f"large_{size}" if f"large_{size}" in names else "large_4096") if own else None
        merged = {**(base.params if base else {}), **(params if params is not None else variant.params)}
        if name == "matmul_streamk":
            merged["SMS"] = sms
        case = Case(f"{size}^3", {"M": size, "N": size, "K": size}, merged, 8400 + size, bench=True)
        function = getattr(module, name) if own else matmul_variant
        options = jit_options(function)
        if variant.pass_configs:
            options["pass_configs"] = {**options.get("pass_configs", {}), **variant.pass_configs}
        return Job(variant, size, case, kernel, function, options)

    jobs = [job(v, size) for size in sizes for v in chosen if not v.same_as]
    if args.only:
        jobs = [item for item in jobs if args.only in item.variant.label]
    faithful = []
    if args.compile_only:  # matmul_variant's code against the kernels it stands in for, at the first size
        reference = {
            "shipped": {**bench["matmul_tuned"], "STAGED": 1},
            "start": {**bench["matmul_pipelined"], "THREADS": 128, "PANEL": 0, "STAGED": 0},
        }
        for label, function, configs in FAITHFUL:
            ours = Variant("faithful", f"matmul_variant ({label})", "matmul_variant", reference[label], configs)
            pair = (job(ours, sizes[0]), job(Variant("faithful", function, function), sizes[0]))
            faithful.append(pair)
            jobs += pair

    for item in jobs:  # trace on this thread: the tracer is not thread-safe
        try:
            item.tir = trace_tir(item.function, item.kernel, item.case, solutions)
        except Exception as error:  # one variant that does not trace must not end the ablation
            item.error = "trace: " + "".join(traceback.format_exception_only(type(error), error)).strip()[:2000]

    def build(item: Job) -> None:
        if item.tir is None:
            return
        started = time.time()
        try:
            item.compiled = compile_tir(item.tir, target, solutions, item.kernel, item.options)
        except Exception as error:  # noqa: BLE001
            item.error = "build: " + "".join(traceback.format_exception_only(type(error), error)).strip()[:2000]
        item.compile_s = time.time() - started

    started = time.time()
    with ThreadPoolExecutor(max_workers=max(1, min(args.workers, os.cpu_count() or 1))) as pool:
        list(pool.map(build, jobs))
    print(f"compiled {len(jobs)} kernels in {time.time() - started:.0f} s", flush=True)

    if args.compile_only:
        for item in jobs:
            verdict = f"FAILED {item.error.splitlines()[0][:110]}" if item.error else "ok"
            print(f"  {item.variant.label:58} {item.case.name:10} {item.compile_s:5.1f} s  {verdict}", flush=True)
        same = []
        for ours, theirs in faithful:
            if ours.error or theirs.error:
                continue
            # the kernel's name in the CUDA is the grade's, not the Python function's: compare the rest
            a, b = (re.sub(r"\b\w+_kernel\(", "KERNEL(", j.compiled.get_kernel_source()) for j in (ours, theirs))
            same.append(a == b)
            print(f"  {ours.variant.label} generates the same CUDA as {theirs.variant.label}: {a == b}", flush=True)
            if a != b:
                diff = difflib.unified_diff(b.splitlines(), a.splitlines(), "theirs", "ours", lineterm="", n=1)
                print("\n".join(list(diff)[:40]), flush=True)
        failed = [item for item in jobs if item.error]
        return 1 if failed or not all(same) or len(same) != len(faithful) else 0
    return measure(args, jobs, chosen, sizes, device, sms)


def measure(args, jobs: list[Job], chosen: list[Variant], sizes: list[int], device: str, sms: int) -> int:
    """Check every variant, then time them and torch together at each size; write the JSON."""
    import torch

    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import make_inputs, poisoned_outputs, reference_outputs
    from grader.pipeline.timing import INPUT_SETS, repeated_ms

    rows: list[dict[str, Any]] = []
    for size in sizes:
        here = [item for item in jobs if item.size == size]
        kernel = here[0].kernel
        case = here[0].case
        sets = [make_inputs(kernel, case, "cuda", 1000 * (i + 1)) for i in range(INPUT_SETS)]
        want = reference_outputs(kernel, sets[0])[0]
        tol = kernel.tolerance_for("float16")

        def check(item: Job, outputs: list[Any], sets=sets, want=want, tol=tol) -> str:
            item.compiled(*sets[0], *outputs)
            torch.cuda.synchronize()
            return "ok" if compare("C", outputs[0], want.to(outputs[0].device), tol).ok else "WRONG"

        calls, checked = {"torch": (lambda a, k=kernel: k.baseline(*a), sets)}, {}
        for item in here:
            if item.error:
                continue
            try:
                outputs = poisoned_outputs(item.kernel, item.case, "cuda")
                checked[item.variant.label] = (item, outputs, check(item, outputs))
                calls[item.variant.label] = (lambda a, c=item.compiled, o=outputs: c(*a, *o), sets)
            except Exception as error:  # noqa: BLE001
                item.error = "run: " + "".join(traceback.format_exception_only(type(error), error)).strip()[:2000]
        print(f"{size}^3: timing {len(calls)} calls x {args.repeats} repetitions", flush=True)
        timed = repeated_ms(calls, args.repeats)
        flops = 2.0 * size**3
        torch_ms = timed["torch"]
        for variant in chosen:
            label = variant.same_as or variant.label
            item = next((j for j in here if j.variant.label == label), None)
            row: dict[str, Any] = {"group": variant.group, "label": variant.label, "size": size}
            row.update(kernel=variant.function, pass_configs=variant.pass_configs, same_as=variant.same_as)
            if item is not None:  # the parameters and pass configs it was built with (a decorator's too)
                row["params"] = dict(item.case.params)
                row["pass_configs"] = dict(item.options.get("pass_configs", {}))
                row["compile_s"] = round(item.compile_s, 1)
            if item is None or item.error or label not in timed:
                row["error"] = item.error if item is not None else "not built"
                rows.append(row)
                continue
            job_, outputs, before = checked[label]
            after = check(job_, outputs)
            mine = timed[label]
            row.update(check=before, check_after_timing=after, runs_ms=list(mine.runs))
            row.update(ms={"min": mine.low, "median": mine.median, "max": mine.high})
            row.update(tflops=flops / mine.median / 1e9, vs_torch=torch_ms.median / mine.median)
            rows.append(row)
            print(
                f"  {variant.group:8} {variant.label:58} {before}/{after:5} {mine.median:8.4f} ms "
                f"({mine.low:.4f}-{mine.high:.4f}) {row['tflops']:6.1f} TFLOP/s {row['vs_torch']:5.3f}x torch",
                flush=True,
            )
        rows.append(
            {
                "group": "torch",
                "label": "torch.matmul (cuBLAS)",
                "size": size,
                "runs_ms": list(torch_ms.runs),
                "ms": {"min": torch_ms.low, "median": torch_ms.median, "max": torch_ms.high},
                "tflops": flops / torch_ms.median / 1e9,
            }
        )
        print(f"  torch    {'torch.matmul (cuBLAS)':58} {torch_ms.median:8.4f} ms", flush=True)
        torch.cuda.empty_cache()

    document = {
        "command": f"{COMMAND} {' '.join(sys.argv[1:])}".strip(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": device,
        "sms": sms,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "tilelang": getattr(tilelang, "__version__", "?"),
        "repeats": args.repeats,
        "rows": rows,
    }
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {args.json}", flush=True)
    bad = [r for r in rows if r.get("error") or "WRONG" in (r.get("check"), r.get("check_after_timing"))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
