"""The perf tier (``-m perf``): how long things take, measured here and compared with tests/perf_baseline.json.

The correctness tests assert only correctness; the speed budgets that once sat inside them live here:
the reference kernels' simulation (tests/test_simulate.py), and what a hang costs past its time limit
(tests/test_notebooks.py's hung check, tests/test_nbgrader.py's hung kernel, tests/test_attacks.py's
sleeping attacks). Each test measures, prints its figures beside the baseline's (in the run's closing
summary, see tests/conftest.py), and fails only on a large regression: a figure over REGRESSION times its
baseline plus a slack (a second of CPU time, so noise on a small figure never fails; ten seconds of wall
time, which a loaded CI machine adds to a grader's start). A figure with no baseline is printed, not
judged. CPU figures are compared after scaling the baseline by how much slower this machine runs a fixed
workload than the baseline's machine did (``calibration_cpu_s``): CI machines differ, and one that runs
everything five times slower is not a regression. The baseline file says on which machine, and how loaded,
it was measured; to refresh it, run
``python -m pytest -q -m perf tests/test_perf.py --perf-baseline-update`` on that kind of machine and
commit the file.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

from grader.discover import load_module, load_puzzle, puzzle_files
from tests.conftest import ROOT

pytestmark = pytest.mark.perf

BASELINE = ROOT / "tests" / "perf_baseline.json"
REGRESSION = 2.0
CPU_SLACK_S = 1.0
WALL_SLACK_S = 10.0


def machine() -> str:
    model = ""
    try:
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        model = platform.processor()
    return f"{model or platform.machine()}, {os.cpu_count()} CPUs, {platform.system()}"


def calibration_cpu_s() -> float:
    """CPU seconds this process takes for a fixed workload shaped like the simulator's (Python loops over
    small torch ops), the best of five after a warm-up: how fast this machine is, to scale the CPU baselines by."""
    import torch

    best, threads = float("inf"), torch.get_num_threads()
    torch.set_num_threads(1)  # as the simulator runs
    for _ in range(6):  # the first run warms torch's allocator and dispatch up; the best of the rest counts
        started = time.process_time()
        tile = torch.zeros(64, 64)
        for step in range(4000):
            tile = tile * 0.5 + torch.full((64, 64), float(step % 7))
            sum(i * i for i in range(200))
        best = min(best, time.process_time() - started)
    torch.set_num_threads(threads)
    return best


def judge(
    request: pytest.FixtureRequest, name: str, measured: dict[str, float], unit: str, slack: float, calibrated=False
) -> None:
    """Compare ``measured`` with the baseline's figures under ``name``: print both, fail on a large regression.

    ``calibrated``: the figures are CPU seconds, so the baseline is first scaled up by how much slower this
    machine is than the baseline's (never down: a faster machine is held to the baseline as measured)."""
    document = json.loads(BASELINE.read_text()) if BASELINE.exists() else {"figures": {}}
    speed = calibration_cpu_s() if calibrated else None
    if request.config.getoption("perf_baseline_update"):
        figures = document.setdefault("figures", {}).setdefault(name, {})
        figures.update({key: round(value, 2) for key, value in measured.items()})
        document["measured_on"] = {"machine": machine(), "date": date.today().isoformat(), "load": os.getloadavg()}
        if speed is not None:
            document["calibration_cpu_s"] = round(speed, 3)
        BASELINE.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    scale = 1.0
    if speed is not None and document.get("calibration_cpu_s"):
        scale = max(1.0, speed / document["calibration_cpu_s"])
    baseline = {key: value * scale for key, value in document.get("figures", {}).get(name, {}).items()}
    lines, over = [f"{name} ({unit}; fails over {REGRESSION:g}x the baseline + {slack:g}):"], []
    if speed is not None:
        lines.append(f"  (this machine runs the calibration in {speed:.3f} s: baselines scaled by {scale:.2f})")
    for key, value in measured.items():
        was = baseline.get(key)
        if was is None:
            lines.append(f"  {key:<40} {value:8.2f}   (no baseline)")
            continue
        ratio = value / was if was else float("inf")
        bad = value > REGRESSION * was + slack
        lines.append(f"  {key:<40} {value:8.2f}   baseline {was:8.2f}   {ratio:5.2f}x{'   REGRESSION' if bad else ''}")
        if bad:
            over.append(key)
    text = "\n".join(lines)
    request.node.user_properties.append(("perf", text))  # printed in the run's closing summary
    print(text)
    where = f"{BASELINE.name}, {document.get('measured_on')}"
    assert not over, f"slower than {REGRESSION:g}x the baseline ({where}):\n{text}"


SOLUTIONS = puzzle_files(ROOT / "solutions")


def test_the_reference_kernels_simulate_as_fast_as_the_baseline(request):
    """CPU seconds (this process's, so other work on the machine does not count) to trace, make the inputs of
    and simulate every simulated case of each reference kernel; and their total. The simulator is meant to
    grade a learner's kernel in seconds: the CUDA-core GEMM rung (one tile-wide T.Parallel step per K
    element) and dequant_matmul (a tile unpacked element by element per K step) are its slowest."""
    from grader.pipeline.inputs import make_inputs, poisoned_outputs
    from grader.pipeline.simulate import simulate
    from grader.pipeline.trace import kernel_function, trace_tir

    measured: dict[str, float] = {}
    for puzzle_id in sorted(SOLUTIONS):
        module = load_module(SOLUTIONS[puzzle_id])
        for kernel in load_puzzle(module).kernels:
            started = time.process_time()
            for case in [c for c in kernel.cases if c.simulate]:
                tir = trace_tir(kernel_function(module, kernel), kernel, case, SOLUTIONS[puzzle_id])
                inputs, outputs = make_inputs(kernel, case, "cpu"), poisoned_outputs(kernel, case, "cpu")
                simulate(tir, {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, inputs + outputs)})
            measured[f"{puzzle_id}.{kernel.function}"] = time.process_time() - started
    measured["total"] = sum(measured.values())
    judge(request, "simulate_cpu_s", measured, "CPU s", CPU_SLACK_S, calibrated=True)


LIMIT_S = 10  # the --timeout of the hangs below: small, so the tier stays short


def test_a_hang_costs_about_its_time_limit(request, tmp_path):
    """Wall seconds of ``python -m grader`` on a file that never finishes importing, at --timeout 10: the
    hang is cut at the limit, and the rest is the grader's own start and stop. What the hang costs is the
    kernel: its first case timed out, with the limit the learner set, and its other cases not run (every
    other path of a hang or a crash is tests/test_supervisor.py's, in milliseconds)."""
    sleeper = tmp_path / "mine.py"
    sleeper.write_text("import time\ntime.sleep(600)\n")
    command = [sys.executable, "-m", "grader", "08", "--file", str(sleeper), "-k", "gemv", "--exact"]
    command += ["--timeout", str(LIMIT_S), "--json", str(tmp_path / "result.json")]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - started
    results = json.loads((tmp_path / "result.json").read_text())["results"]
    statuses = [r["status"] for r in results]
    assert done.returncode == 1 and statuses[0] == "timed_out", done.stdout + done.stderr
    assert len(statuses) > 1 and set(statuses[1:]) == {"not_run"}, statuses
    assert f"no answer within {LIMIT_S} s" in results[0]["message"], results[0]  # the learner's limit, as set
    figure = {f"grader --timeout {LIMIT_S}, a file that sleeps at import": seconds}
    judge(request, "hang_wall_s", figure, "s", WALL_SLACK_S)


def test_a_hung_check_in_a_notebook_costs_about_its_timeout_and_the_next_cells_run(request, tmp_path):
    """The notebook's one real hang: a check(timeout=10) cell whose kernel never ends in the simulator. It says
    HANG, Run All goes on (the next check grades a wrong kernel, with its mismatch map; a print runs), and the
    hung cell costs about its timeout (wall seconds, against the baseline)."""
    import importlib.util

    from grader.frontends.render import RED
    from tests.test_notebooks import cell_seconds, execute, hang_notebook, outputs

    cells = execute(hang_notebook(tmp_path, LIMIT_S)).cells
    hang, wrong, last = cells[3], cells[5], cells[6]
    assert "HANG" in outputs(hang, "stdout") and f"{RED}copy_serial: hangs on case" in outputs(hang, "stdout")
    # both cases with a tail fail: tail_1000 and odd_4097 (simulated too, within the CPU budget)
    assert f"{RED}copy_threads: 2 of 3" in outputs(wrong, "stdout")
    assert outputs(hang, "error") == outputs(wrong, "error") == ""
    assert "FAIL  tail_1000" in outputs(wrong, "stdout") and "T.ceildiv" in outputs(wrong, "stdout")
    assert outputs(hang, "stderr") == outputs(wrong, "stderr") == ""
    if importlib.util.find_spec("matplotlib") is not None:  # the mismatch map of the wrong tiles
        assert any("image/png" in o.get("data", {}) for o in wrong.outputs)
    assert outputs(last, "stdout") == "the next cell ran\n"
    figure = {f"notebook check(timeout={LIMIT_S}) of a hung kernel": cell_seconds(hang)}
    judge(request, "hang_wall_s", figure, "s", WALL_SLACK_S)
