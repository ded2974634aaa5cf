"""The sandbox (grader/processes/sandbox.py) on its own, and the grader where this machine cannot make one.

The first tests run a shell command in the sandbox through the cold path's launcher and look at what it
can see and do. The rest run the grader inside a user namespace whose ``user.max_user_namespaces`` is 0,
a real machine without namespaces as far as the grader can tell (as under Ubuntu's AppArmor rule): a
learner's check runs with one line saying it is not isolated; every instructor path refuses to grade
unless told --no-sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.processes import sandbox
from tests.conftest import ROOT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces only")
SOLVED = ROOT / "solutions" / "p02_vector_add.py"


def confined(tmp_path: Path, script: str, *hide: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    covered = [part for path in hide for part in ("--hide", str(path))]
    command = [sys.executable, "-m", "grader.processes.sandbox", str(work), *covered, "--", "sh", "-c", script]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_this_machine_makes_the_sandbox():
    assert sandbox.available() == ""  # CI's machine and the H200 host both can: a failure here is real


def test_inside_only_the_private_folder_is_writable(tmp_path: Path):
    outside = tmp_path / "outside.txt"
    done = confined(
        tmp_path,
        f"echo x > {outside} 2>/dev/null && echo WROTE-OUTSIDE;"
        f"echo x > {ROOT}/planted 2>/dev/null && echo WROTE-COURSE;"
        "echo x > ./mine && cat ./mine; pwd",
    )
    assert done.returncode == 0, done.stderr
    assert "WROTE" not in done.stdout and not outside.exists() and not (ROOT / "planted").exists()
    assert done.stdout.split() == ["x", str(tmp_path / "work")]
    assert list((tmp_path / "work").iterdir()) == []  # the private folder was a tmpfs: nothing stays


def test_inside_no_process_network_capability_or_hidden_path_is_in_reach(tmp_path: Path):
    secret_file, secret_folder = tmp_path / "hidden.json", tmp_path / "course"
    secret_file.write_text("the instructor's cases")
    secret_folder.mkdir()
    (secret_folder / "gradebook.db").write_text("scores")
    script = (
        f"ls /proc | grep -c '^[0-9]'; cat {secret_file}; ls -A {secret_folder} | wc -l; "
        "grep CapEff /proc/self/status; (mount -o remount,rw / 2>/dev/null && echo REMOUNTED) || true; "
        "awk -F: 'NR > 2 {gsub(/ /, \"\", $1); print $1}' /proc/net/dev"  # /sys is not in the sandbox at all
    )
    done = confined(tmp_path, script, secret_file, secret_folder)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert int(lines[0]) <= 3  # sh, ls, grep: the sandbox's own processes, nothing of the judge
    assert "the instructor's cases" not in done.stdout and lines[1] == "0"
    assert "CapEff:\t0000000000000000" in done.stdout and "REMOUNTED" not in done.stdout
    assert done.stdout.split()[-1] == "lo"  # no interface but the loopback


def test_a_sandbox_that_cannot_be_made_runs_nothing(tmp_path: Path):
    marker = tmp_path / "ran"
    missing = tmp_path / "no-such-folder"
    command = [sys.executable, "-m", "grader.processes.sandbox", str(missing), "--", "touch", str(marker)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == sandbox.FAILED and not marker.exists()
    assert done.stderr.startswith("sandbox: ") and str(missing) in done.stderr


def test_killing_the_waiter_ends_everything_inside(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    # durations no other process on the machine uses (another test may sleep 300 meanwhile)
    base = 400000 + os.getpid() % 100000 * 3
    script = f"sleep {base} & sh -c 'setsid sleep {base + 1}' & sleep {base + 2}"
    waiter = subprocess.Popen([sys.executable, "-m", "grader.processes.sandbox", str(work), "--", "sh", "-c", script])
    time.sleep(1.0)
    ours = {f"sleep\x00{base + i}\x00".encode() for i in range(3)}

    def inside() -> list[Path]:
        return [p for p in Path("/proc").glob("[0-9]*/cmdline") if _read(p) in ours]

    assert len(inside()) == 3
    waiter.send_signal(signal.SIGKILL)
    waiter.wait()
    time.sleep(0.5)
    assert inside() == []


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


SLOW_IMPORT = SOLVED.read_text() + "\n\nimport time\n\ntime.sleep(6)  # the tracer stays alive a while\n"


def _wait_for_tracer(source: Path, grader: subprocess.Popen, limit: float = 240.0) -> None:
    """Until a tracer process has ``source`` on its command line (it is then importing it, asleep): a fixed
    wait is too short on a loaded machine, where starting the grader and its judge can take longer."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and grader.poll() is None:
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                words = cmdline.read_bytes().split(b"\0")
            except OSError:
                continue
            if b"grader.trace.tracer" in words and str(source.resolve()).encode() in words:
                time.sleep(0.5)  # the judge took its snapshot of the cache before it started the tracer
                return
        time.sleep(0.1)
    raise AssertionError("no tracer process started")


def test_a_grader_leaves_what_another_compiled_meanwhile_in_the_cache(tmp_path: Path):
    """Confined, a tracer writes nothing, so the judge undoes nothing: an entry another grader writes into
    the shared compile cache while this one traces survives (unconfined, the cache guard deletes it)."""
    cache, learner = tmp_path / "cache", tmp_path / "slow.py"
    cache.mkdir()
    learner.write_text(SLOW_IMPORT)
    command = [sys.executable, "-m", "grader", "02", "--file", str(learner), "-k", "add", "--exact"]
    command += ["--case", "tail_1000"]
    for extra, survives in (([], True), (["--no-sandbox"], False)):
        env = {**os.environ, "TILELANG_CACHE_DIR": str(cache)}
        grader = subprocess.Popen([*command, *extra], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        _wait_for_tracer(learner, grader)  # the tracer is asleep in the file's import
        other = cache / f"another-graders-kernel{len(extra)}.so"
        other.write_bytes(b"compiled by another grader")
        output, _ = grader.communicate(timeout=300)
        assert grader.returncode == 0, output
        assert other.exists() == survives, (extra, output)


# ------------------------------------------------------------------ a machine that cannot make namespaces

NO_NAMESPACES = ["unshare", "--user", "--map-current-user", "sh", "-c"]
RESTRICT = 'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"'


def without_namespaces(*command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``command`` in a user namespace that may create no other: sandbox.available() fails there."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux's unshare is not installed")
    full = [*NO_NAMESPACES, RESTRICT, "sh", *command]
    return subprocess.run(
        full, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ, **(env or {})}
    )


def hidden_file(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "hidden.json"
    path.write_text(json.dumps({"cases": []}))
    return {"TILELANG_COURSE_HIDDEN_CASES": str(path)}


def test_the_probe_says_why_without_namespaces():
    done = without_namespaces(sys.executable, "-c", "from grader.processes import sandbox; print(sandbox.available())")
    assert "unshare" in done.stdout, done.stdout + done.stderr


def test_a_learners_check_runs_unconfined_and_says_so():
    grade = [sys.executable, "-m", "grader", "02", "--file", str(SOLVED), "-k", "add", "--exact", "--case", "tail_1000"]
    done = without_namespaces(*grade)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not isolated: this machine cannot make a sandbox" in done.stdout
    assert "PASS  tail_1000" in done.stdout


def test_hidden_cases_refuse_to_grade_unconfined_unless_told(tmp_path: Path):
    grade = [sys.executable, "-m", "grader", "02", "--file", str(SOLVED), "-k", "add", "--exact", "--case", "tail_1000"]
    refused = without_namespaces(*grade, env=hidden_file(tmp_path))
    assert refused.returncode != 0
    assert "refusing to grade" in refused.stdout + refused.stderr and "--no-sandbox" in refused.stdout + refused.stderr
    assert "PASS" not in refused.stdout
    told = without_namespaces(*grade, "--no-sandbox", env=hidden_file(tmp_path))
    assert told.returncode == 0, told.stdout + told.stderr
    assert "not isolated (--no-sandbox)" in told.stdout and "PASS  tail_1000" in told.stdout


def test_autograde_shards_refuse_unconfined_unless_told(tmp_path: Path):
    shards = [sys.executable, "-m", "grader", "autograde-shards", "ps1", "--shards", "1", "--course", str(tmp_path)]
    refused = without_namespaces(*shards)
    assert refused.returncode == 2 and "refusing to grade" in refused.stderr, refused.stderr
    (tmp_path / "nbgrader_config.py").write_text("")
    (tmp_path / "submitted").mkdir()
    told = without_namespaces(*shards, "--no-sandbox", "--device", "cpu")
    shard_log = (tmp_path / "logs/ps1/shards/shard-0.log").read_text()
    assert "refusing" not in told.stderr and "shard 0/1" in told.stdout + shard_log


def test_nbgrader_judge_refuses_unconfined_unless_told():
    pytest.importorskip("nbgrader")  # an instructor's package (the GPU host has none)
    script = (
        "from grader.nbgrader.judge import JudgeChecks, SandboxRefused\n"
        "try:\n    JudgeChecks().sandbox_env()\nexcept SandboxRefused as e:\n    print('REFUSED', e)\n"
        "print('TOLD', JudgeChecks(no_sandbox=True).sandbox_env())\n"
    )
    done = without_namespaces(sys.executable, "-c", script)
    assert "REFUSED refusing to grade" in done.stdout and "--JudgeChecks.no_sandbox=True" in done.stdout, done.stderr
    assert "TOLD {'TILELANG_COURSE_SANDBOX': 'off'}" in done.stdout


def test_root_stays_root_where_the_unprivileged_id_could_not_read_what_is_shown(tmp_path: Path):
    """Root's sandbox runs as sandbox.UNPRIVILEGED only where that id can read every shown path (a venv made in a
    0700 folder cannot be read by it): private_paths names those that would stop it."""
    private, shared, file = tmp_path / "private", tmp_path / "shared", tmp_path / "shared" / "module.py"
    private.mkdir(mode=0o700)
    shared.mkdir(mode=0o755)
    file.write_text("")
    file.chmod(0o644)
    assert sandbox.private_paths([str(private), str(shared), str(file)]) == [str(private)]
    file.chmod(0o600)
    assert sandbox.private_paths([str(shared), str(file)]) == [str(file)]
