"""The GPU tier: every check and measurement that needs a CUDA GPU, as named parts of one runner.

CI has no GPU, so what only a GPU can say (the ``gpu``-marked tests, every reference on the device, the bench
and profile figures the results pages are generated from) runs here, in parts that each fit one device call
of under 10 minutes. On the GPU machine, from the project root, with ``.gpu/`` built:

    source .gpu/env.sh && python -m scripts.gpu_check PART [PART ...]
    python -m scripts.gpu_check --list          # the parts, what each is for, its time limit

Each part writes its raw outputs under ``$OUT/PART/`` (the device tool's folder; ``./gpu-check/`` without
it) and a ``manifest.json`` beside them: the commit, the date, the device, and for each step its command,
exit code and seconds. A dated results folder (``docs/results/data/...``) is that folder, copied whole.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from scripts.corpora_verdicts import kernel_of

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
GRADER = [PY, "-m", "grader"]
PYTEST = [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs"]
# The files whose gpu tests are the trust boundary's (the "attacks" part); the "tests" part runs the others.
BOUNDARY_TESTS = ["tests/test_attacks.py", "tests/test_warm.py", "tests/test_sandbox.py", "tests/test_hermetic.py"]
E2E_TESTS = "tests/test_grader_e2e.py"
PART_LIMIT_S = 570  # a device call stops at 600 s: what is left is for start-up and the copy back


@dataclass(frozen=True)
class Step:
    """One command of a part: its output goes to ``log`` (under the part's folder), cut at ``limit_s``."""

    name: str
    argv: list[str]
    limit_s: int
    log: str = ""  # default: NAME.txt


@dataclass(frozen=True)
class Part:
    purpose: str
    steps: Callable[[Path], list[Step]]
    parallel: bool = False  # steps run side by side (each its own process; the GPU is shared)
    env: dict[str, str] = field(default_factory=dict)
    after: list[list[str]] = field(default_factory=list)  # commands run once the steps are done; PART is the folder


def sweep(puzzle: str, kernel: str, case: str, *variants: str, file: str = "") -> list[str]:
    """scripts/sweep.py: each block-parameter variant checked on the case, then timed against torch."""
    return [PY, "scripts/sweep.py", *([f"--file={file}"] if file else []), puzzle, kernel, case, *variants]


# ------------------------------------------------------------------------------------------------ parts


def tests(out: Path) -> list[Step]:
    """The gpu-marked tests but the trust boundary's and the end-to-end gradings (about 160 tests)."""
    deselect = [arg for path in [*BOUNDARY_TESTS, E2E_TESTS] for arg in ("--deselect", path)]
    # it has no gpu test, and the bundle leaves nbconvert out: collecting it would be an error
    deselect += ["--ignore", "tests/test_feedback_html.py"]
    return [
        Step(
            "gpu-tests",
            [*PYTEST, "-n", "12", "--dist", "loadgroup", "-m", "gpu", "--durations=15", "tests", *deselect],
            540,
        )
    ]


# The wrong kernels of 08-10 run every case, large ones included, for about 40 s each: with the rest they
# overran one device call (186 of 187 tests in 480 s), so they are a part of their own.
HEAVY_E2E = "p08 or p09 or p10"


def e2e(out: Path) -> list[Step]:
    """tests/test_grader_e2e.py on the GPU, puzzles 01-07: their known-wrong kernels through the CLI, every case."""
    return [_e2e_step("gpu-e2e", f"not ({HEAVY_E2E})")]


def e2e_heavy(out: Path) -> list[Step]:
    """tests/test_grader_e2e.py on the GPU, puzzles 08-10's known-wrong kernels (about 100 tests)."""
    return [_e2e_step("gpu-e2e-heavy", HEAVY_E2E)]


def _e2e_step(name: str, select: str) -> Step:
    # -vv (-q is in PYTEST): each test's line as it ends, so a run cut at its limit names what never finished
    return Step(
        name,
        [*PYTEST, "-vv", "-n", "12", "--dist", "loadgroup", "-m", "gpu", "--durations=15", "-k", select, E2E_TESTS],
        540,
    )


def attacks(out: Path) -> list[Step]:
    return [
        Step("attacks-gpu", [*PYTEST, "-n", "4", "--dist", "loadgroup", "-m", "gpu", *BOUNDARY_TESTS], 300),
        Step(
            "hermetic",
            [*PYTEST, "-n", "3", *BOUNDARY_TESTS, "tests/test_tir_names.py", "-k",
             "hermetic or sandbox or names or secret or forked_tracer or fork_bomb"],
            240,
        ),
    ]  # fmt: skip


def solutions(out: Path) -> list[Step]:
    return [
        Step("solutions", [*GRADER, "--solutions", "--json", str(out / "solutions.json")], 360),
        Step("stubs", [*GRADER, "--json", str(out / "stubs.json")], 180),
    ]


def bench(out: Path) -> list[Step]:
    """Every bench case with its spread (issue 29), then gemv three times: scripts/bench_page.py's data."""
    query = "name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu"
    steps = [
        Step("nvidia-smi", ["nvidia-smi", f"--query-gpu={query}", "--format=csv"], 20, "nvidia-smi.csv"),
        Step("bench", [*GRADER, "--solutions", "--bench", "--json", str(out / "bench.json")], 420),
    ]
    for run in (1, 2, 3):
        argv = [
            *GRADER,
            "08",
            "--solutions",
            "--bench",
            "-k",
            "gemv",
            "--exact",
            "--json",
            str(out / f"gemv{run}.json"),
        ]
        steps.append(Step(f"gemv{run}", argv, 40))
    return steps


FIRST_HOUR = [("01", "copy_tiles", "p01_copy.py"), ("07", "flash_attention", "p07_flash_attention.py"),
              ("08", "gemv", "p08_matrix.py")]  # fmt: skip


def first_hour(out: Path) -> list[Step]:
    """A learner's quick check, cold then warm, on the CPU path and on the GPU (docs/results/check-times.md)."""
    steps = []
    # Not under out (a device call returns at most 8 files), and not made here: building the steps (as
    # tests/test_gpu_check.py does) must leave nothing behind; the cold steps create it, empty, when they run.
    caches = Path(tempfile.gettempdir()) / f"first-hour-{uuid.uuid4().hex[:12]}"
    for device in ("cpu", "cuda"):
        for puzzle, kernel, file in FIRST_HOUR:
            for state in ("cold", "warm"):  # the first fills this device's own cache, the second reads it
                argv = ["env", f"TILELANG_CACHE_DIR={caches}/tl-{device}", f"XDG_CACHE_HOME={caches}/xdg-{device}",
                        *GRADER, puzzle, "-k", kernel, "--device", device, "--file", f"solutions/{file}"]  # fmt: skip
                steps.append(Step(f"{puzzle}-{kernel}-{device}-{state}", argv, 120))
    return steps


def sandbox(out: Path) -> list[Step]:
    return [
        Step("sandbox-cost", [PY, "scripts/sandbox_cost.py", "--repeat", "30"], 240),
        Step("test-sandbox", [*PYTEST, "-n", "4", "tests/test_sandbox.py"], 240),
    ]


def profiles(out: Path) -> list[Step]:
    """Nsight Compute on every bench kernel (scripts/profile/results_page.py's data); PUZZLES picks some."""
    puzzles = os.environ.get("PUZZLES", "01 02 03 04 05 06 07 08 09 10")
    label = os.environ.get("LABEL", "all")
    return [Step("profiles", ["env", f"OUT={out}", "bash", "scripts/profile/h200_profile.sh", puzzles, label], 560)]


def p08(out: Path) -> list[Step]:
    """The GEMM ladder's intrinsics rung and matmul_tuned's ablation (p08-intrinsics.md, p08-ablation.md)."""
    return [
        Step("p08-intrinsics", [PY, "scripts/p08/intrinsics.py", "--json", str(out / "p08-intrinsics.json")], 240),
        Step("p08-ablation", [PY, "scripts/p08/tuned_ablation.py", str(out / "p08-ablation.json")], 300),
    ]


EXPERIMENTS = [  # the block settings the notebooks' experiment cells ask about, puzzle by puzzle
    ("01", "copy_threads", "large_2p27", '{"BLOCK": 1024}', '{"BLOCK": 8192}', '{"BLOCK": 256, "THREADS": 512}'),
    ("01", "copy_serial", "large_2p27", '{"THREADS": 256}'),
    ("02", "add", "large_2p27", '{"BLOCK": 512, "THREADS": 128}', '{"BLOCK": 256, "THREADS": 256}'),
    ("02", "add_fragments", "large_2p27", '{"BLOCK": 2048}', '{"BLOCK": 32768}'),
    ("03", "outer_add_fragments", "large_16384", '{"BLOCK_M": 256, "BLOCK_N": 32}', '{"BLOCK_M": 1024, "BLOCK_N": 8}'),
    ("04", "mul_relu_forward", "large_8192x16384", '{"BLOCK_N": 512}', '{"BLOCK_M": 4, "BLOCK_N": 2048}'),
    ("04", "mul_relu_backward", "large_8192x16384", '{"BLOCK_N": 128}', '{"BLOCK_N": 32}'),
    ("05", "row_sum_tiled", "large_16384x8192", '{"BLOCK_N": 128}', '{"BLOCK_N": 2048}'),
    ("06", "softmax", "large_16384x8192", '{"THREADS": 128}', '{"THREADS": 512}'),
    ("06", "softmax_online", "large_4096x32768", '{"BLOCK_N": 1024}', '{"BLOCK_N": 8192}'),
    ("07", "flash_attention", "large_16384x4096", '{"BLOCK_N": 32}'),
    ("09", "conv1d_im2col", "large_256_131072_k5", '{"STAGES": 2}', '{"STAGES": 4}', '{"BLOCK_C": 16}'),
    ("10", "dequant_matmul", "decode_16x8192x8192_g128", '{"STAGES": 2}', '{"STAGES": 8}', '{"BLOCK_N": 32}'),
    ("10", "dequantize_int4", "large_8192_g128", '{"BLOCK_N": 128}', '{"BLOCK_K": 64}'),
    ("10", "dequant_matmul_decode", "decode_16x8192x8192_g128", '{"BLOCK_N": 32}', '{"THREADS": 256}'),
    ("10", "dequant_gemv", "decode_1x8192x8192_g128", '{"BLOCK_K": 2048}'),
]


def experiments(out: Path) -> list[Step]:
    return [Step(f"{p}-{k}", sweep(p, k, case, "{}", *variants), 90) for p, k, case, *variants in EXPERIMENTS]


SWEEPS = {  # tuning toward issue 39's targets: each kernel's bench case at other blocks
    "gemv": sweep("08", "gemv", "large_8192", "{}", '{"BLOCK_M": 8, "BLOCK_K": 512}',
                  '{"BLOCK_M": 16, "BLOCK_K": 512, "THREADS": 256}', '{"BLOCK_M": 32, "BLOCK_K": 256, "THREADS": 256}',
                  '{"BLOCK_M": 4, "BLOCK_K": 1024}', '{"BLOCK_M": 8, "BLOCK_K": 1024, "THREADS": 256}'),
    "flash": sweep("08", "flash_attention_tensor_cores", "large_16384", "{}", '{"STAGES": 1}', '{"BLOCK_N": 64}',
                   '{"BLOCK_M": 128, "BLOCK_N": 128, "STAGES": 3}'),
    "conv": sweep("09", "conv1d_channels_last", "large_256_131072_k5", "{}", '{"BLOCK_C": 32}', '{"STAGES": 4}',
                  '{"BLOCK_C": 128, "STAGES": 2}'),
    "channels_last": [PY, "scripts/p09/channels_last_candidates.py", "--rounds", "3"],  # p09-channels-last-tuning.md
    "decode": sweep("10", "dequant_matmul_decode", "decode_1x8192x8192_g128", "{}", '{"BLOCK_N": 32}',
                    '{"BLOCK_N": 16, "THREADS": 64}', '{"STAGES": 6}'),
    "one_token": sweep("10", "dequant_gemv", "decode_1x8192x8192_g128", "{}", '{"BLOCK_K": 2048}',
                       '{"BLOCK_N": 4, "BLOCK_K": 4096}', '{"BLOCK_N": 16, "BLOCK_K": 1024}'),
    "streamk": [PY, "scripts/streamk/sweep.py"],
}  # fmt: skip


NOTES_P08 = {  # the runs behind docs/results/p08-notes.md and p08-flash-attention.md (scripts/notes_page.py)
    "pipelined-ws": sweep("08", "matmul_pipelined", "large_4096", "{}",
                          '{"_pass": {"tl.disable_warp_specialized": false}}'),
    "shared": sweep("08", "matmul_shared", "large_4096", "{}"),
    "gemv-blocks": sweep("08", "gemv", "large_8192", "{}", '{"BLOCK_K": 256, "THREADS": 128}', "{}",
                         '{"BLOCK_K": 256, "THREADS": 128}'),
    "flash-blocks": sweep("08", "flash_attention_tensor_cores", "large_16384", "{}", '{"STAGES": 1}',
                          '{"BLOCK_N": 64}'),
    "flash-ffma": sweep("08", "flash_attention_tensor_cores", "large_16384", "{}", '{"STAGES": 1}',
                        file="scripts/p08/flash_ffma.py"),
    "flash-overlap": sweep("08", "flash_attention_tensor_cores", "large_16384", '{"OVERLAP": 0}',
                           '{"OVERLAP": 1}', '{"OVERLAP": 2}', '{"OVERLAP": 2, "STAGES": 4}',
                           file="scripts/p08/flash_overlap.py"),
}  # fmt: skip
NOTES_P09_P10 = {  # the runs behind docs/results/p09-p10-notes.md
    "p10-decode-blocks": sweep("10", "dequant_matmul_decode", "decode_16x8192x8192_g128", "{}", '{"BLOCK_N": 32}',
                               '{"THREADS": 256}', '{"BLOCK_K": 64, "STAGES": 6}',
                               '{"_pass": {"tl.disable_warp_specialized": true}}'),
    "p09-ws-fault": [PY, "scripts/p09/ws_fault.py"],
    "p09-implicit-fault": [PY, "scripts/p09/implicit_fault.py"],
    "p09-tma-store-tail": [PY, "scripts/p09/tma_store_tail.py"],
}  # fmt: skip


def notes_p08(out: Path) -> list[Step]:
    streamk = ["env", f"OUT={out / 'streamk'}", *SWEEPS["streamk"]]  # its tables go to $OUT
    return [*(Step(name, argv, 120) for name, argv in NOTES_P08.items()), Step("streamk", streamk, 330)]


def notes_p09_p10(out: Path) -> list[Step]:
    candidates = [PY, "scripts/p10/sweep.py", "--tokens", "16", "--out", str(out)]
    return [Step("p10-candidates", candidates, 240), *(Step(name, argv, 240) for name, argv in NOTES_P09_P10.items())]


def sweeps(out: Path) -> list[Step]:
    chosen = os.environ.get("SWEEPS", " ".join(SWEEPS)).split()
    return [Step(f"sweep-{name}", SWEEPS[name], 150) for name in chosen]


def corpora(out: Path) -> list[Step]:
    """Every right and wrong corpus kernel graded on the GPU, every case (scripts/corpora_verdicts.py reads them)."""
    steps = []
    for kind in ("right", "wrong"):
        for path in sorted((ROOT / "tests" / kind).glob("p*/*.py")):
            kernel = kernel_of(path)
            json_path = out / kind / path.parent.name / f"{path.stem}.json"
            json_path.parent.mkdir(parents=True, exist_ok=True)
            argv = [*GRADER, path.parent.name[1:], "--file", str(path.relative_to(ROOT)), "--device", "cuda",
                    *(["-k", kernel, "--exact"] if kernel else []), "--json", str(json_path)]  # fmt: skip
            steps.append(
                Step(f"{kind}-{path.parent.name}-{path.stem}", argv, 300, f"{kind}/{path.parent.name}/{path.stem}.txt")
            )
    return steps


def races(out: Path) -> list[Step]:
    """Each race kernel of the wrong corpus three times on the GPU: how often a race shows is a fact to record."""
    steps = []
    for path in sorted((ROOT / "tests" / "wrong").glob("p*/*_race_*.py")):
        for run in (1, 2, 3):
            name = f"{path.stem}-{run}"
            argv = [*GRADER, path.parent.name[1:], "--file", str(path.relative_to(ROOT)), "-k", kernel_of(path),
                    "--exact", "--device", "cuda", "--json", str(out / f"{name}.json")]  # fmt: skip
            steps.append(Step(name, argv, 300))
    return steps


def crosscheck(out: Path) -> list[Step]:
    """Every simulated case on the GPU and in the CPU simulator on the same inputs, the wrong corpus too."""
    return [Step("crosscheck", [PY, "-m", "scripts.crosscheck", "--wrong", f"--rows={out / 'rows.jsonl'}"], 560)]


def nbgrader(out: Path) -> list[Step]:
    """The instructor's route on the GPU: nbgrader autograde there, then the class report from what it recorded.
    It needs nbgrader: run it with the bundle of scripts/nbgrader_bundle.sh (source .gpu-nbgrader/env.sh)."""
    return [
        Step("nbgrader-gpu", [*PYTEST, "-v", "-m", "gpu", "tests/test_nbgrader.py", "tests/test_class_report.py"], 400)
    ]


PARTS: dict[str, Part] = {
    "tests": Part("the gpu-marked tests but the trust boundary's and the end-to-end ones", tests),
    "e2e": Part("the end-to-end gpu tests of 01-07: each known-wrong kernel through the CLI, every case", e2e),
    "e2e-heavy": Part("the same for 08-10, whose large cases take most of a device call", e2e_heavy),
    "attacks": Part("the trust boundary on the GPU: attack files, sandbox, warm server, hermetic start", attacks),
    "solutions": Part("every reference case on the GPU, and every stub says not implemented", solutions),
    "bench": Part("the bench cases with spreads, and gemv three times (the bench page)", bench),
    "first-hour": Part("a learner's quick check, cold and warm, CPU path and GPU (check-times.md)", first_hour),
    "sandbox": Part("the sandbox's cost per check, and its own tests (sandbox.md)", sandbox),
    "profiles": Part("Nsight Compute on the bench kernels (h200-profiles.md); PUZZLES='07 08' LABEL=p07-08", profiles),
    "p08": Part("the intrinsics rung and matmul_tuned's ablation (p08-intrinsics.md, p08-ablation.md)", p08),
    "experiments": Part("the block settings of the notebooks' experiments, puzzles 01-10", experiments),
    "sweeps": Part("tuning sweeps toward issue 39's targets; SWEEPS='gemv flash' picks some", sweeps),
    "corpora": Part(
        "every right and wrong corpus kernel on the GPU, 12 at once, and their verdicts",
        corpora,
        parallel=True,
        after=[[PY, "-m", "scripts.corpora_verdicts", kind, "PART"] for kind in ("right", "wrong")],
    ),
    "crosscheck": Part("the simulator against the GPU, case by case, references and wrong kernels", crosscheck),
    "races": Part("each race kernel three times on the GPU, 12 at once", races, parallel=True),
    "notes-p08": Part("the runs behind p08-notes.md and p08-flash-attention.md", notes_p08),
    "notes-p09-p10": Part(
        "the runs behind p09-p10-notes.md: decode candidates, WS faults, TMA store tail", notes_p09_p10
    ),
    "nbgrader": Part("nbgrader autograde on the GPU and the class report after it (the nbgrader bundle)", nbgrader),
}


# ------------------------------------------------------------------------------------------------ runner


def commit() -> str:
    """GPU_CHECK_COMMIT where the caller names it (the device's copy of the tree may carry another checkout's .git:
    a run on 2026-12-05 recorded the previous session's commit), else this tree's HEAD, marked where it differs."""
    named = os.environ.get("GPU_CHECK_COMMIT")
    if named:
        return named
    found = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True)
    head = found.stdout.strip()
    return f"{head} (with uncommitted changes)" if head and dirty.stdout.strip() else head or "unknown"


def device() -> str:
    try:
        found = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "no nvidia-smi"
    return found.stdout.strip() or found.stderr.strip()


def run_step(step: Step, out: Path, env: dict[str, str], deadline: float) -> dict:
    log = out / (step.log or f"{step.name}.txt")
    log.parent.mkdir(parents=True, exist_ok=True)
    limit = max(1.0, min(step.limit_s, deadline - time.monotonic()))
    started = time.monotonic()
    with log.open("w") as sink:
        try:
            code = subprocess.run(
                step.argv, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, env=env, timeout=limit
            ).returncode
        except subprocess.TimeoutExpired:
            code = 124  # as timeout(1) says it
    seconds = round(time.monotonic() - started, 1)
    print(f">>> {step.name}: exit {code} in {seconds} s", flush=True)
    return {"name": step.name, "command": shlex.join(step.argv), "exit": code, "seconds": seconds,
            "log": str(log.relative_to(out))}  # fmt: skip


def run_part(name: str, base: Path, budget_s: float) -> int:
    part = PARTS[name]
    out = base / name
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TILELANG_CACHE_DIR": os.environ.get("TILELANG_CACHE_DIR", "/tmp/tilelang-cache-gpu-check"),
           **part.env}  # fmt: skip
    steps = part.steps(out)
    deadline = time.monotonic() + budget_s
    manifest = {
        "part": name,
        "purpose": part.purpose,
        "commit": commit(),
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "device": device(),
        "command": f"source .gpu/env.sh && python -m scripts.gpu_check {name}",
        "steps": [],
    }
    if part.parallel:
        with ThreadPoolExecutor(max_workers=12) as pool:
            manifest["steps"] = list(pool.map(lambda step: run_step(step, out, env, deadline), steps))
    else:
        manifest["steps"] = [run_step(step, out, env, deadline) for step in steps]
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    for index, argv in enumerate(part.after):
        command = [str(out) if arg == "PART" else arg for arg in argv]
        run_step(Step(f"after-{index}", command, 60), out, env, deadline + 60)
    failed = [s["name"] for s in manifest["steps"] if s["exit"] not in (0, 3)]
    print(f"{name}: {len(steps) - len(failed)} of {len(steps)} steps exited 0 (or 3: compiled only)", flush=True)
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="python -m scripts.gpu_check")
    parser.add_argument("parts", nargs="*", metavar="PART", help="parts to run, in order (see --list)")
    parser.add_argument("--list", action="store_true", help="name each part and say what it is for")
    parser.add_argument("--budget", type=float, default=PART_LIMIT_S, help="seconds for all the parts together")
    args = parser.parse_args(argv)
    unknown = [p for p in args.parts if p not in PARTS]
    if args.list or not args.parts or unknown:
        if unknown:
            print(f"no such part: {', '.join(unknown)}", file=sys.stderr)
        for name, part in PARTS.items():
            print(f"{name:12} {part.purpose}")
        return 2 if unknown or not (args.list or args.parts) else 0
    base = Path(os.environ.get("OUT", ROOT / "gpu-check"))
    deadline = time.monotonic() + args.budget
    codes = [run_part(name, base, deadline - time.monotonic()) for name in args.parts]
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
