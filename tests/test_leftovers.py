"""tests/leftovers.py: a run that leaves a process or a $TMPDIR file fails and names it; a clean one cleans up."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

LEAVES = """
import subprocess, tempfile
from pathlib import Path

def test_leaves_a_process_and_a_file():
    child = subprocess.Popen(["sleep", "60"], start_new_session=True)  # orphaned when the test's process ends
    Path("sleeper.pid").write_text(str(child.pid))
    Path(tempfile.gettempdir(), "left-by-a-test").write_text("x")
"""

CLEAN = """
import tempfile

def test_cleans_up(tmp_path):
    with tempfile.TemporaryDirectory() as folder:
        assert folder.startswith(tempfile.gettempdir())
    (tmp_path / "kept-in-pytests-own-folder").write_text("x")
"""


def inner_run(tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_inner.py").write_text(text)
    outer_tmp = tmp_path / "tmp"
    outer_tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(outer_tmp), "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "-p",
        "tests.leftovers",
    ]
    return subprocess.run(
        [*command, "test_inner.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_a_run_that_leaves_a_process_or_a_file_fails_and_names_them(tmp_path: Path):
    run = inner_run(tmp_path, LEAVES)
    try:
        assert run.returncode == 1, run.stdout + run.stderr
        assert "1 passed" in run.stdout
        assert "left behind by the test run" in run.stdout
        assert "still running: sleep 60" in run.stdout
        assert "in $TMPDIR: left-by-a-test" in run.stdout
    finally:
        os.kill(int((tmp_path / "sleeper.pid").read_text()), signal.SIGKILL)


def test_a_clean_run_passes_and_removes_its_own_tmpdir(tmp_path: Path):
    run = inner_run(tmp_path, CLEAN)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "left behind" not in run.stdout
    assert list((tmp_path / "tmp").iterdir()) == []  # the run's own $TMPDIR, pytest's folders in it, are gone
