"""Time the last-wave candidates against matmul_tuned and torch.matmul (cuBLAS) on one GPU.

    python scripts/streamk/sweep.py            # everything below, about 3-5 minutes on an H200
    python scripts/streamk/sweep.py --quick    # 4096^3 only, the first five variants
    python scripts/streamk/sweep.py --compile-only [--quick]   # no GPU: trace and compile for sm_90a

Writes everything under $OUT (or /tmp/streamk-sweep): sweep.txt (the table), sweep.json (one record
per run), and log.txt. Each variant is compiled from the TIR the grader's own tracer gives (trace,
admit, tilelang.compile), checked against torch's float64 answer with the grader's tolerance (on the
first input set, and again after the timing loop, so a workspace left dirty by one call shows), and
timed as grader/pipeline/bench.py times: the median of CUDA events over INPUT_SETS rotated input sets. torch
is timed right before each variant, and the ratio is against that adjacent figure.

Kernels: matmul_tuned and matmul_streamk from solutions/p08_matrix.py ("p08.") with their own case
parameters (large_4096, large_8192: SMS 132, the H200's count); matmul_persistent
and matmul_streamk from scripts/streamk/kernels.py. Compiles run in threads (nvcc is a subprocess);
tracing stays on the main thread.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SIZES = (4096, 8192)
BASE = {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "THREADS": 256}
# (label, kernel, overrides of the case parameters); SMS is filled in from the device
VARIANTS = (
    ("tuned (p08 solution)", "p08.matmul_tuned", {}),
    ("streamk (p08 solution)", "p08.matmul_streamk", {}),
    ("persistent s3 staged", "matmul_persistent", {**BASE, "STAGES": 3, "PANEL": 8, "STAGED": 1}),
    ("streamk chunk1 s3 staged", "matmul_streamk", {**BASE, "STAGES": 3, "PANEL": 8, "STAGED": 1, "CHUNK": 1}),
    ("streamk_dyn s3 staged", "matmul_streamk_dyn", {**BASE, "STAGES": 3, "PANEL": 8, "STAGED": 1}),
    ("streamk chunk4 s3 staged", "matmul_streamk", {**BASE, "STAGES": 3, "PANEL": 8, "STAGED": 1, "CHUNK": 4}),
    ("persistent s4 direct", "matmul_persistent", {**BASE, "STAGES": 4, "PANEL": 8, "STAGED": 0}),
    ("streamk chunk1 s4 direct", "matmul_streamk", {**BASE, "STAGES": 4, "PANEL": 8, "STAGED": 0, "CHUNK": 1}),
)
CHECKED = 5  # the tails below are checked for VARIANTS[1:CHECKED]
# correctness only (not timed): tile counts that are no multiple of the SM count, tails in M, N and K
# (rows of 16-byte multiples: TMA needs them, and without TMA a pipelined loop of varying length, as in
# matmul_streamk_dyn, does not compile)
CHECKS = ({"M": 1000, "N": 1000, "K": 1000}, {"M": 3000, "N": 2504, "K": 1000}, {"M": 4096, "N": 8192, "K": 776})


def main(argv: list[str]) -> int:
    import tilelang
    import torch

    from grader.discover import load_module, load_puzzle
    from grader.pipeline.build import compile_tir
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import make_inputs, poisoned_outputs, reference_outputs
    from grader.pipeline.timing import INPUT_SETS, median_ms
    from grader.pipeline.trace import trace_tir
    from grader.spec import Case

    out = Path(os.environ.get("OUT") or "/tmp/streamk-sweep")
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "log.txt", "w")

    def say(text: str) -> None:
        print(text, flush=True)
        log.write(text + "\n")
        log.flush()

    tilelang.disable_cache()  # threads saving to one cache directory trip over each other's staging
    quick, compile_only = "--quick" in argv, "--compile-only" in argv
    sizes = SIZES[:1] if quick else SIZES
    variants = VARIANTS[:CHECKED] if quick else VARIANTS
    if compile_only:
        from grader.pipeline.build import COMPILE_ONLY_TARGET as target

        sms = 132
        say(f"compile only, for {target}, {sms} SMs")
    else:
        target = "cuda"
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        say(f"device: {torch.cuda.get_device_name(0)}, {sms} SMs; torch {torch.__version__}")

    solutions = ROOT / "solutions" / "p08_matrix.py"
    ours = ROOT / "scripts" / "streamk" / "kernels.py"
    modules = {path: load_module(path) for path in (solutions, ours)}
    puzzles = {path: load_puzzle(module) for path, module in modules.items()}

    def where(function: str) -> Path:
        return solutions if function.startswith("p08.") else ours

    def named(function: str) -> str:
        return function.removeprefix("p08.")

    # -------- trace everything on this thread, compile in a pool
    jobs = []  # (label, function, case, timed)
    for size in sizes:
        for label, function, override in variants:
            kernel = puzzles[where(function)].kernel(named(function))
            base = kernel.case(f"large_{size}") if where(function) == solutions else kernel.case("large_4096")
            params = {**base.params, **override}
            if where(function) == ours:
                params["SMS"] = sms
            case = Case(f"{size}^3", {"M": size, "N": size, "K": size}, params, 8500 + size)
            jobs.append((label, function, case, True))
    for label, function, override in variants[1:CHECKED]:  # the tails
        for sizes_ in CHECKS:
            kernel = puzzles[where(function)].kernel(named(function))
            params = {**kernel.case("large_4096").params, **override}
            name = "x".join(str(sizes_[d]) for d in "MNK")
            jobs.append((label, function, Case(name, sizes_, params, 8600), False))

    traced = []
    for label, function, case, timed in jobs:
        path = where(function)
        kernel = puzzles[path].kernel(named(function))
        try:
            tir = trace_tir(getattr(modules[path], named(function)), kernel, case, path)
            traced.append((label, function, case, timed, tir))
        except Exception as error:
            say(f"{label:26} {case.name:16} trace failed: {str(error).splitlines()[0][:120]}")

    def build(item):
        label, function, case, timed, tir = item
        started = time.time()
        try:
            kernel = puzzles[where(function)].kernel(named(function))
            return compile_tir(tir, target, where(function), kernel), time.time() - started
        except Exception as error:
            return error, time.time() - started

    started = time.time()
    with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
        built = list(pool.map(build, traced))
    say(f"compiled {len(traced)} variants in {time.time() - started:.0f} s")
    if compile_only:
        for (label, _, case, _, _), (compiled, seconds) in zip(traced, built):
            failed = f"FAILED: {str(compiled).splitlines()[0][:100]}" if isinstance(compiled, Exception) else "ok"
            say(f"{label:26} {case.name:16} compile {seconds:5.1f} s {failed}")
        return 1 if any(isinstance(c, Exception) for c, _ in built) else 0

    # -------- check and time, one at a time
    records, lines = [], []
    header = f"{'variant':26} {'shape':16} {'check':6} {'ms':>8} {'TFLOP/s':>8} "
    header += f"{'torch ms':>9} {'torch TF':>8} {'ratio':>6}"
    say(header)
    for (label, function, case, timed, _), (compiled, seconds) in zip(traced, built):
        kernel = puzzles[where(function)].kernel(named(function))
        record = {"variant": label, "kernel": function, "case": case.name, "sizes": dict(case.sizes)}
        record.update(params=dict(case.params), compile_s=round(seconds, 1))
        if isinstance(compiled, Exception):
            record["error"] = "".join(traceback.format_exception_only(type(compiled), compiled))[:2000]
            line = f"{label:26} {case.name:16} build failed: {str(compiled).splitlines()[0][:100]}"
            say(line)
            lines.append(line)
            records.append(record)
            continue
        try:
            tol = kernel.tolerance_for("float16")

            def check(inputs, outputs, kernel=kernel, tol=tol) -> str:
                want = reference_outputs(kernel, inputs)[0]
                verdict = compare("C", outputs[0], want.to(outputs[0].device), tol)
                return "ok" if verdict.ok else "WRONG"

            inputs, outputs = make_inputs(kernel, case, "cuda"), poisoned_outputs(kernel, case, "cuda")
            compiled(*inputs, *outputs)
            torch.cuda.synchronize()
            verdict = check(inputs, outputs)
            record["check"] = verdict
            if not timed:
                compiled(*inputs, *outputs)  # a second call: a dirty workspace would show here
                torch.cuda.synchronize()
                record["check_again"] = check(inputs, outputs)
                line = f"{label:26} {case.name:16} {verdict}/{record['check_again']}"
                say(line)
                lines.append(line)
                records.append(record)
                del inputs, outputs
                torch.cuda.empty_cache()
                continue
            sets = [make_inputs(kernel, case, "cuda", 1000 * (i + 1)) for i in range(INPUT_SETS)]
            theirs = median_ms(lambda args, k=kernel: k.baseline(*args), sets)
            mine = median_ms(lambda args, c=compiled, o=outputs: c(*args, *o), sets)
            compiled(*inputs, *outputs)
            torch.cuda.synchronize()
            record["check_after_timing"] = check(inputs, outputs)
            flops = 2.0 * case.sizes["M"] * case.sizes["N"] * case.sizes["K"]
            record.update(ms=mine, torch_ms=theirs, tflops=flops / mine / 1e9, torch_tflops=flops / theirs / 1e9)
            record["ratio"] = theirs / mine
            both = verdict if verdict == record["check_after_timing"] else f"{verdict}/{record['check_after_timing']}"
            line = (
                f"{label:26} {case.name:16} {both:6} {mine:8.4f} {record['tflops']:8.1f} {theirs:9.4f} "
                f"{record['torch_tflops']:8.1f} {record['ratio']:5.3f}x"
            )
            say(line)
            lines.append(line)
            del sets
        except Exception as error:
            record["error"] = "".join(traceback.format_exception_only(type(error), error))[:2000]
            line = f"{label:26} {case.name:16} run failed: {str(error).splitlines()[0][:100]}"
            say(line)
            lines.append(line)
        records.append(record)
        torch.cuda.empty_cache()

    for size in sizes:
        timed_ok = [r for r in records if r["case"] == f"{size}^3" and "ratio" in r and r.get("check") == "ok"]
        if timed_ok:
            best = max(timed_ok, key=lambda r: r["ratio"])
            line = f"best at {size}^3: {best['variant']}, {best['tflops']:.1f} TFLOP/s, {best['ratio']:.3f}x torch"
            say(line)
            lines.append(line)
    (out / "sweep.txt").write_text(header + "\n" + "\n".join(lines) + "\n")
    document = {"device": torch.cuda.get_device_name(0), "sms": sms, "runs": records}
    (out / "sweep.json").write_text(json.dumps(document, indent=1))
    say(f"wrote {out}/sweep.txt and sweep.json")
    checks = ("check", "check_again", "check_after_timing")
    bad = [r for r in records if r.get("error") or any(r.get(c) == "WRONG" for c in checks)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
