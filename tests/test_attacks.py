"""Attacks on the verdict (tests/attacks/): learner files that try to fake a pass, each graded through
`python -m grader` as a learner runs it. Every file's `gemv` writes zeros; whatever else the file does
(patch the grader, forge output, kill or fork the process, plant files), gemv must fail with a plain
sentence and nothing on stderr.

The CPU tests pass --device cpu and grade gemv's small simulated case; the gpu-marked test runs every
attack on the GPU (`python -m pytest -q -m gpu tests/test_attacks.py`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from grader import outcome
from tests.conftest import ROOT, GraderRun

ATTACKS = ROOT / "tests" / "attacks"
CASE = "square_256"  # gemv, simulated on the CPU
FAILING = {outcome.FAILED, outcome.ERROR, outcome.TIMED_OUT, outcome.CRASHED, outcome.NOT_RUN}

# attack file -> (status gemv gets, a phrase its message must contain)
EXPECTED = {
    "patch_compare.py": (outcome.FAILED, "of 256 output elements wrong"),
    "patch_judge.py": (outcome.FAILED, "of 256 output elements wrong"),
    "patch_sys_modules.py": (outcome.FAILED, "of 256 output elements wrong"),
    "forge_stdout.py": (outcome.FAILED, "of 256 output elements wrong"),
    "forge_json.py": (outcome.FAILED, "of 256 output elements wrong"),
    "plant_in_cache.py": (outcome.FAILED, "of 256 output elements wrong"),
    "print_from_the_gpu.py": (outcome.FAILED, "of 256 output elements wrong"),
    "exit_at_import.py": (outcome.ERROR, "ended while importing the file"),
    "exit_while_tracing.py": (outcome.ERROR, "ended while tracing `gemv`"),
    "read_hidden_cases.py": (outcome.ERROR, "LEAKED hidden cases:  nothing"),
    "forge_reply.py": (outcome.ERROR, "did not trace to a kernel the grader can read"),
    "call_host_function.py": (outcome.ERROR, "calls the external function `system`"),
    "unsafe_compile_options.py": (outcome.ERROR, "flag '-ccbin=/tmp/not-a-compiler'"),
    "sleep_at_import.py": (outcome.TIMED_OUT, "the file's top level never finishes"),
    "fork_at_import.py": (outcome.TIMED_OUT, "the file's top level never finishes"),
    "baked_answer.py": (outcome.FAILED, "output elements wrong"),
    "link_in_cache.py": (outcome.FAILED, "of 256 output elements wrong"),
    "tamper_cache_in_place.py": (outcome.FAILED, "of 256 output elements wrong"),
    "extern_name_injection.py": (outcome.ERROR, "calls the external function `debug_print_msg(0), C[0] ="),
    "import_source.py": (outcome.ERROR, "imports source code (T.import_source, pragma_import_c)"),
    "patch_tvm_in_tracer.py": (outcome.FAILED, "of 256 output elements wrong"),
    "disable_barriers.py": (outcome.ERROR, "sets the pass config 'tl.disable_thread_storage_sync'"),
}
SLOW = {"sleep_at_import.py", "fork_at_import.py"}  # they run into the timeout: give it a short one
FORK_PIDS = "tilelang-course-attack-fork.pids"  # in the test's own folder, TILELANG_ATTACK_DIR
FORGE_PID = "tilelang-course-attack-forge-json.pid"
PLANTED = "tilelang-course-attack-planted.so"
LINK = "tilelang-course-attack-link"  # link_in_cache.py's symbolic link to a folder of its own
EXISTING = "tilelang-course-attack-existing.bin"  # in the cache before the run; tamper_cache_in_place.py edits it
ORIGINAL = b"a library the judge compiled earlier\n" * 64


def test_every_attack_file_has_an_expectation():
    assert sorted(p.name for p in ATTACKS.glob("*.py")) == sorted(EXPECTED)


def attack(grade, name: str, device: str, folder: Path, hidden: Path | None = None) -> GraderRun:
    extra = ["--timeout", "20"] if name in SLOW else []
    env = {"TILELANG_COURSE_HIDDEN_CASES": str(hidden)} if hidden else {}
    env["TILELANG_ATTACK_DIR"] = str(folder)
    env["GITHUB_TOKEN"] = "secret-token-the-tracer-must-not-see"
    chosen = ["-k", "gemv", "--exact", "--case", CASE, "--device", device, *extra]
    return grade("08", "--file", str(ATTACKS / name), *chosen, env=env)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


def judged(grade, name: str, device: str, tmp_path: Path, stderr_apart: bool = True) -> None:
    """``stderr_apart``: the run's stderr is its own stream (a warm run sends both as one)."""
    hidden = tmp_path / "hidden.json"
    hidden.write_text('{"cases": []}')
    fork_pids, forge_pid = tmp_path / FORK_PIDS, tmp_path / FORGE_PID
    cache = Path(os.environ.get("TILELANG_CACHE_DIR") or Path.home() / ".tilelang" / "cache")
    if name == "tamper_cache_in_place.py":
        cache.mkdir(parents=True, exist_ok=True)
        (cache / EXISTING).write_bytes(ORIGINAL)
    started = time.monotonic()
    run = attack(grade, name, device, tmp_path, hidden)
    status, phrase = EXPECTED[name]
    assert run.code == 1, run.out + run.err
    assert run.err == "" or not stderr_apart, run.err
    assert "Traceback" not in run.out, run.out
    assert run.doc is not None and run.doc.get("results"), "the JSON report is missing or forged"
    (result,) = run.results("gemv")
    assert result["status"] == status, result
    assert phrase in result["message"], result["message"]
    assert "PASS  square_256" not in run.out, run.out  # forged verdict lines never reach the terminal
    assert "secret-token" not in run.out
    if name in SLOW:
        assert time.monotonic() - started < 120
    if name == "fork_at_import.py":
        pids = [int(p) for p in fork_pids.read_text().split()] if fork_pids.exists() else []
        assert pids, "the attack never forked"
        assert not [p for p in pids if alive(p)], "a process the learner's file forked outlived the grader"
    if name == "forge_json.py":
        time.sleep(1.0)  # the daemon, if it were alive, rewrites the report ten times a second
        assert forge_pid.exists() and not alive(int(forge_pid.read_text()))
        again = json.loads(run.json_path.read_text())
        assert [r["status"] for r in again["results"]] == [status], "the report was rewritten after the grader wrote it"
    if name == "plant_in_cache.py":
        assert not (cache / PLANTED).exists(), "a file planted in the compile cache survived"
    if name == "link_in_cache.py":
        assert (tmp_path / "tilelang-course-attack-planted-folder").is_dir(), "the attack never ran"
        assert not (cache / LINK).is_symlink(), "a link planted in the compile cache survived"
    if name == "tamper_cache_in_place.py":
        existing = cache / EXISTING
        assert not existing.exists() or existing.read_bytes() == ORIGINAL, "a cache file edited in place survived"
        existing.unlink(missing_ok=True)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_attack_fails_on_the_cpu(grade, name, tmp_path):
    judged(grade, name, "cpu", tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_attack_fails_on_the_gpu(grade, name, tmp_path):
    judged(grade, name, "cuda", tmp_path)
