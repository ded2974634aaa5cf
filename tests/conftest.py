from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import timeline

ROOT = Path(__file__).resolve().parent.parent
# The tests compare the grader's English sentences: a zh locale on the test machine must not translate
# them (tests/test_i18n.py asks for Chinese where it wants it; grader/i18n/__init__.py reads this variable first).
os.environ.setdefault("TILELANG_COURSE_LANG", "en")
# One TileLang compile cache for the whole run: every grader process a test starts (the CLI, a notebook's
# check, nbgrader's autograde, a Slurm task) and every judge it forks inherits this variable, so a kernel
# compiled once is loaded, not compiled again, by the next test that grades it. Set here, at import in the
# pytest process that starts xdist's workers, so both workers inherit the same folder; a folder of its own,
# not the learner's ~/.tilelang/cache, so the suite neither depends on nor changes a developer's cache.
# Tests that tamper with a cache name one of their own (tests/test_attacks.py's attack_cache,
# tests/test_sandbox.py). An explicit TILELANG_CACHE_DIR wins.
SHARED_COMPILE_CACHE = Path.home() / ".cache" / "tilelang-course" / "test-compile-cache"
os.environ.setdefault("TILELANG_CACHE_DIR", str(SHARED_COMPILE_CACHE))
# Each xdist worker's graders compile with its share of the CPUs, not all of them each: two workers on two
# cores, each judge compiling on every core, would run four compiles on two.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    from grader import settings as _settings

    _share = _settings.usable_cpus() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])
    os.environ.setdefault(_settings.COMPILE_JOBS, str(max(1, _share)))


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--perf-baseline-update",
        action="store_true",
        help="the perf tier (tests/test_perf.py) writes what it measured into tests/perf_baseline.json",
    )


PERF_LINES: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """The perf tier's comparisons (tests/test_perf.py puts them in user_properties): xdist sends a worker's
    reports to the pytest process that prints, so they are collected there."""
    timeline.record(report)
    if report.when == "call":
        PERF_LINES.extend(value for name, value in report.user_properties if name == "perf")


def pytest_terminal_summary(terminalreporter) -> None:
    timeline.summary(terminalreporter)
    if PERF_LINES:
        terminalreporter.section("perf against tests/perf_baseline.json")
        for text in PERF_LINES:
            terminalreporter.write_line(text)


# A test that uses one of these module fixtures is slow (the marker in pyproject.toml): the fixture alone takes
# minutes (an nbgrader course graded, every notebook executed, a Slurm cluster and PostgreSQL started).
SLOW_FIXTURES = {"graded", "executed", "executed_zh", "slurm", "postgres"}


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy_modules = set()
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
            heavy_modules.add(item.nodeid.split("::")[0])
    # The modules whose fixtures take minutes (the notebook pools, the nbgrader course, the Slurm cluster) first,
    # whole and in their own order: xdist hands out work in this order, so they start at once and the short tests
    # fill the other worker around them, instead of one of them starting last while the other worker idles.
    items.sort(key=lambda item: item.nodeid.split("::")[0] not in heavy_modules)
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
        """The exit status when nothing failed: 3 where some case was only compiled (no GPU here) or a quick check
        left large cases uncompiled, else 0."""
        compiled = any(r.get("checked") == "compiled" for r in self.doc["results"])
        return 3 if compiled or any(run.get("not_compiled") for run in self.doc.get("runs", [])) else 0

    def results(self, kernel: str | None = None) -> list[dict]:
        return [r for r in self.doc["results"] if kernel is None or r["kernel"] == kernel]


@pytest.fixture
def grade(tmp_path: Path):
    """Run `python -m grader ARGS --json FILE` as a learner types it, in a fresh process: a cold start of
    4 to 8 s here. Only for a test about that process itself: a cold start or a fresh interpreter (-I
    restart, hermetic start, PYTHONPATH and other variables read at start), the command line's exit
    status and stdout apart from stderr (usage errors, a syntax error answered before any judge), signals,
    the sandbox's cold launcher (tests/test_attacks.py), or the cold run a warm one is compared with
    (tests/test_warm.py). Every other test grades through ``warm_grade``."""

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
def attack_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compile cache the attack tests' graders use (tests/test_attacks.py, tests/test_warm.py): the
    attacks plant, link and edit files in the judge's cache, so they get one apart from the run's shared
    cache. One per xdist worker (a worker runs one test at a time, and each test undoes what it put there),
    so the attacks' own gemv compiles once per worker, not once per attack."""
    return tmp_path_factory.mktemp("attack-compile-cache")


@pytest.fixture(scope="session")
def warm_server():
    """One warm grader (grader.frontends.warm) for the session, as a notebook or --watch holds one: the
    default way a test grades (``warm_grade``). One per xdist worker."""
    from grader.frontends.warm import WarmGrader

    server = WarmGrader()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def attack_warm_server():
    """A warm grader of their own for the attacks run warm (tests/test_warm.py): an attack whose defence
    failed could leave something behind in the server it was forked from, and no other test's verdict
    may rest on a server an attack was graded through."""
    from grader.frontends.warm import WarmGrader

    server = WarmGrader()
    yield server
    server.stop()


def warm_runner(tmp_path: Path, server):
    """``grade``'s signature and GraderRun, through a warm server: the command line graded as a front end grades
    (grader.frontends.cli.run_through), with the verdict lines printed by the check; stdout and stderr come back as
    one stream (``out``; ``err`` is empty), a usage error as the command line says it (exit 2), and a check stopped
    at ``timeout`` or dead without an exit status has code -9."""
    from grader.frontends.cli import run_through

    def run(*args: str, timeout: float = 900, env: dict[str, str] | None = None) -> GraderRun:
        assert server.alive(), "the session's warm grader is gone: every later warm check would fail"
        json_path = tmp_path / f"result{len(list(tmp_path.iterdir()))}.json"
        argv = [*args, "--json", str(json_path)]
        # A trace cache of the test's own (a warm check keeps traces under XDG_CACHE_HOME): a trace
        # cached by an earlier run would skip the tracer, and with it what the test watches it do.
        own_cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
        answer = run_through(server, argv, timeout, env={**os.environ, **own_cache, **(env or {})}, cwd=ROOT)
        code = -9 if answer.returncode is None else answer.returncode
        completed = subprocess.CompletedProcess(argv, code, answer.output, "")
        return GraderRun(completed, json_path)

    return run


@pytest.fixture
def warm_grade(tmp_path: Path, warm_server):
    """Like ``grade``, through the session's warm grader, as a notebook's check runs: the command line's request,
    graded by the same grader.frontends.grading.run in the same folder, forked from a process that has
    imported torch and TileLang instead of started cold (4 to 8 s saved a run). The default for a test
    that grades; stdout and stderr come back as one stream (``out``), so a test that asserts on stderr
    alone stays with ``grade``."""
    return warm_runner(tmp_path, warm_server)


@pytest.fixture
def attack_warm_grade(tmp_path: Path, attack_warm_server):
    """``warm_grade`` through the attacks' own warm grader (attack_warm_server)."""
    return warm_runner(tmp_path, attack_warm_server)


# The run leaves nothing behind (tests/leftovers.py): its own $TMPDIR, orphans reparented here, a check at the end.
from tests.leftovers import pytest_configure, pytest_sessionfinish  # noqa: E402, F401
