"""Run every simulated case on the GPU and in the CPU simulator on the same inputs; print both
verdicts and the largest difference between the two outputs (the H200 cross-check).

    python -m scripts.crosscheck [--wrong] [--rows=PATH]     # on a CUDA GPU, from the project root
References always; with --wrong also every known-wrong kernel under tests/wrong/. Each case is
also appended to PATH as a JSON line (default: a new file in the temp folder), so the per-kernel
table at the end covers the whole run even though a GPU crash restarts the process.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")


def main(argv: list[str]) -> int:
    import torch

    from grader.discover import course_root, load_module, load_puzzle, puzzle_files
    from grader.pipeline.build import BuildFailed, NotImplementedYet, compile_tir
    from grader.pipeline.checks import never_initialized
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import changed_inputs, make_inputs, poisoned_outputs, reference_outputs, writes_outside
    from grader.pipeline.simulate import SimulationError, Unsupported, simulate
    from grader.pipeline.trace import jit_options, kernel_function, trace_tir
    from tests.corpora import wrong_kernels

    root = course_root()
    specs = {pid: load_puzzle(load_module(path)) for pid, path in puzzle_files(root / "solutions").items()}
    jobs = [(pid, path, None) for pid, path in puzzle_files(root / "solutions").items()]
    if "--wrong" in argv:
        jobs += [(w.puzzle_id, w.path, w.kernel) for w in wrong_kernels(root)]

    given = [a.split("=", 1)[1] for a in argv if a.startswith("--rows=")]
    rows_path = Path(given[0]) if given else Path(tempfile.mkdtemp()) / "crosscheck-rows.jsonl"
    argv = [a for a in argv if not a.startswith("--rows=")] + [f"--rows={rows_path}"]

    def record(path, kernel, case, gpu, sim, diff) -> None:
        entry = {"file": path.name, "kernel": kernel.function, "case": case.name, "gpu": gpu, "sim": sim, "diff": diff}
        with rows_path.open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def row(path, kernel, case, gpu, sim, diff, note="") -> None:
        record(path, kernel, case, gpu, sim, None)
        print(f"{path.name:40} {kernel.function:22} {case.name:18} {gpu:12} {sim:12} {diff:>14}  {note}", flush=True)

    def verdict(kernel, outputs, expected) -> str:
        bad = sum(
            compare(t.name, got.cpu(), want, kernel.tolerance_for(t.dtype)).wrong
            for t, got, want in zip(kernel.outputs, outputs, expected)
        )
        return "pass" if bad == 0 else f"FAIL({bad})"

    flags = [a for a in argv if not a.startswith("--start=")]
    start = next((int(a.split("=")[1]) for a in argv if a.startswith("--start=")), 0)
    disagreements = 0
    if start == 0:
        print(f"{'file':40} {'kernel':22} {'case':18} {'gpu':12} {'simulator':12} {'max |gpu-sim|':>14}")
    # Compile everything first on a thread pool (TileLang's lowering and nvcc release the GIL).
    from concurrent.futures import ThreadPoolExecutor

    pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 4)

    def simulated_cases():
        """(job number, file, its module, kernel, case) for every simulated case from job ``start`` on."""
        for number, (pid, path, only) in enumerate(jobs):
            if number < start:
                continue
            module = load_module(path)
            for kernel in specs[pid].kernels:
                if not only or kernel.function == only:
                    for case in [c for c in kernel.cases if c.simulate]:
                        yield number, path, module, kernel, case

    builds = {}
    for number, path, module, kernel, case in simulated_cases():
        try:
            function = kernel_function(module, kernel)
            tir = trace_tir(function, kernel, case, path)
            compiled = pool.submit(compile_tir, tir, "cuda", path, kernel, jit_options(function))
            builds[(number, kernel.function, case.name)] = (tir, compiled)
        except (BuildFailed, NotImplementedYet) as error:
            builds[(number, kernel.function, case.name)] = (None, error)
    for number, path, _module, kernel, case in simulated_cases():
        inputs = make_inputs(kernel, case, "cpu")
        expected = reference_outputs(kernel, inputs)
        tir, pending = builds[(number, kernel.function, case.name)]
        try:
            if isinstance(pending, Exception):
                raise pending
            compiled = pending.result()
        except (BuildFailed, NotImplementedYet) as error:
            row(path, kernel, case, "build error", "build error", "-", str(error)[:60])
            continue
        gpu_out = poisoned_outputs(kernel, case, "cuda")
        try:
            gpu_in = [x.cuda() for x in inputs]
            compiled(*gpu_in, *gpu_out)
            torch.cuda.synchronize()
            gpu = verdict(kernel, gpu_out, expected)
            # the grader's side-effect checks are part of the GPU verdict
            side = writes_outside(gpu_out, [t.name for t in kernel.outputs])
            side += changed_inputs([x.cuda() for x in inputs], gpu_in, [t.name for t in kernel.inputs])
            if side:
                gpu = "FAIL(guard)" if gpu == "pass" else gpu
            # so is the static check for accumulators nothing cleared (zeros by luck on a GPU)
            if gpu == "pass" and never_initialized(tir):
                gpu = "FAIL(uninit)"
        except Exception as error:  # a crash is a verdict; the CUDA context is gone: restart after it
            row(path, kernel, case, "CRASH", "-", "-", str(error).splitlines()[0][:60])
            sys.stdout.flush()
            os.execv(sys.executable, [sys.executable, "-m", "scripts.crosscheck", *flags, f"--start={number + 1}"])
        sim_out = poisoned_outputs(kernel, case, "cpu")
        try:
            simulate(tir, {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, inputs + sim_out)})
            sim = verdict(kernel, sim_out, expected)
            diff = max(
                float(torch.nan_to_num((g.cpu().double() - s.double()).abs(), nan=float("inf")).max())
                for g, s in zip(gpu_out, sim_out)
            )
        except SimulationError as error:
            sim, diff = "FAIL(error)", float("nan")
            print(f"  simulator: {error}")
        except Unsupported as error:
            sim, diff = "unsupported", float("nan")
            print(f"  simulator does not support {error}")
        agree = (gpu == "pass") == (sim == "pass")
        disagreements += not agree
        record(path, kernel, case, gpu, sim, diff if diff == diff else None)
        mark = "" if agree else "   <-- verdicts differ"
        print(
            f"{path.name:40} {kernel.function:22} {case.name:18} {gpu:12} {sim:12} {diff:14.4g}{mark}",
            flush=True,
        )
    print(f"verdicts differ on {disagreements} case(s) since job {start}")
    return kernel_table(rows_path)


def kernel_table(rows_path: Path) -> int:
    """The grader's verdict is per kernel (it passes only if every case passes): one line per kernel
    over the whole run, from the rows file. A case the GPU crashed on was not simulated."""
    kernels: dict[tuple[str, str], list[dict]] = {}
    for line in rows_path.read_text().splitlines():
        entry = json.loads(line)
        kernels.setdefault((entry["file"], entry["kernel"]), []).append(entry)
    print("\n| kernel | cases | GPU | simulator | max abs(gpu - sim) |\n|---|---|---|---|---|")
    split = 0
    for (name, function), cases in kernels.items():
        gpu_ok = all(c["gpu"] == "pass" for c in cases)
        simulated = [c for c in cases if c["sim"] != "-"]
        sim_ok = all(c["sim"] == "pass" for c in simulated)
        split += bool(simulated) and gpu_ok != sim_ok
        diffs = [c["diff"] for c in cases if c["diff"] is not None]
        largest = f"{max(diffs):.4g}" if diffs else "-"
        crashed = " (GPU crashed on a case)" if any(c["gpu"] == "CRASH" for c in cases) else ""
        print(
            f"| {name} {function} | {len(cases)} | {'pass' if gpu_ok else 'reject'}{crashed} | "
            f"{('pass' if sim_ok else 'reject') if simulated else 'not run'} | {largest} |"
        )
    print(f"kernel verdicts differ on {split} of {len(kernels)} kernel(s); rows in {rows_path}")
    return 1 if split else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
