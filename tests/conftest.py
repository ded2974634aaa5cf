from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The tests compare the grader's English sentences: a zh locale on the test machine must not translate
# them (tests/test_i18n.py asks for Chinese where it wants it; grader/i18n/__init__.py reads this variable first).
os.environ.setdefault("TILELANG_COURSE_LANG", "en")


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


class GraderRun:
    def __init__(self, completed: subprocess.CompletedProcess, json_path: Path):
        self.code = completed.returncode
        self.json_path = json_path
        self.out = completed.stdout
        self.err = completed.stderr
        self.doc = json.loads(json_path.read_text()) if json_path.exists() else None

    def statuses(self, kernel: str | None = None, file: str | None = None) -> dict[str, str]:
        return {
            f"{r['kernel']}[{r['case']}]": r["status"]
            for r in self.doc["results"]
            if (kernel is None or r["kernel"] == kernel) and (file is None or r["file"].endswith(file))
        }

    @property
    def passed_code(self) -> int:
        """The exit status when nothing failed: 3 where some case was only compiled (no GPU here), else 0."""
        return 3 if any(r.get("checked") == "compiled" for r in self.doc["results"]) else 0

    def results(self, kernel: str | None = None) -> list[dict]:
        return [r for r in self.doc["results"] if kernel is None or r["kernel"] == kernel]


@pytest.fixture
def grade(tmp_path: Path):
    """Run `python -m grader ARGS --json FILE` as a learner would, in a fresh process."""

    def run(*args: str, timeout: float = 900, env: dict[str, str] | None = None) -> GraderRun:
        json_path = tmp_path / f"result{len(list(tmp_path.iterdir()))}.json"
        completed = subprocess.run(
            [sys.executable, "-m", "grader", *args, "--json", str(json_path)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
            env=None if env is None else {**os.environ, **env},
        )
        return GraderRun(completed, json_path)

    return run


@pytest.fixture(scope="session")
def warm_server():
    """One warm grader (grader.frontends.warm) for the session, as a notebook or --watch holds one."""
    from grader.frontends.warm import WarmGrader

    server = WarmGrader()
    yield server
    server.stop()


@pytest.fixture
def warm_grade(tmp_path: Path, warm_server):
    """Like ``grade``, through the warm grader: stdout and stderr come back as one stream (``out``)."""

    def run(*args: str, timeout: float = 900, env: dict[str, str] | None = None) -> GraderRun:
        json_path = tmp_path / f"result{len(list(tmp_path.iterdir()))}.json"
        argv = [*args, "--json", str(json_path)]
        # A trace cache of the test's own (a warm check keeps traces under XDG_CACHE_HOME): a trace
        # cached by an earlier run would skip the tracer, and with it what the test watches it do.
        own_cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
        answer = warm_server.run(argv, {**os.environ, **own_cache, **(env or {})}, str(ROOT), timeout)
        code = -9 if answer.returncode is None else answer.returncode
        completed = subprocess.CompletedProcess(argv, code, answer.output, "")
        return GraderRun(completed, json_path)

    return run
