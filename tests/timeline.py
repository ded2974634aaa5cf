"""When each xdist worker went idle, and which module kept it busy: the part of the budget --durations cannot show.

--durations lists the slowest tests, but the wall time of a two-worker run is decided by the worker that
finishes last and by what it ran at the end. Hooks for tests/conftest.py, in the pytest process that prints:
each test's reports arrive there as they finish, so their arrival times are a timeline per worker. The summary
gives each worker's finishing time and its busiest modules (seconds of test time), and the last tests it ran.
"""

from __future__ import annotations

import time
from collections import defaultdict

import pytest

STARTED = time.monotonic()
# worker id -> [(seconds since the start when the report arrived, module, seconds the phase took)]
REPORTS: dict[str, list[tuple[float, str, float]]] = defaultdict(list)
BUSIEST = 4  # modules shown per worker
MODULES = 15  # modules shown for the whole run: where the budget's worker-seconds go
LAST = 3  # tests shown per worker, the last it finished


def _worker(report: pytest.TestReport) -> str:
    node = getattr(report, "node", None)  # xdist sets the WorkerController on reports it relays
    return node.gateway.id if node is not None else "main"


def record(report: pytest.TestReport) -> None:
    REPORTS[_worker(report)].append((time.monotonic() - STARTED, report.nodeid, report.duration))


def _by_module(reports: list[tuple[float, str, float]]) -> list[tuple[str, float]]:
    """(module, seconds of test time) for ``reports``, the busiest first."""
    per_module: dict[str, float] = defaultdict(float)
    for _, nodeid, seconds in reports:
        per_module[nodeid.split("::")[0]] += seconds
    return sorted(per_module.items(), key=lambda item: -item[1])


def summary(terminalreporter) -> None:
    if not REPORTS:
        return
    terminalreporter.section("timeline per worker (seconds since the session started)")
    for worker, reports in sorted(REPORTS.items()):
        busiest = _by_module(reports)[:BUSIEST]
        last_tests = []
        for _, nodeid, _ in reversed(reports):
            if nodeid not in last_tests:
                last_tests.append(nodeid)
            if len(last_tests) == LAST:
                break
        terminalreporter.write_line(
            f"{worker}: idle from {reports[-1][0]:.0f} s; busiest: "
            + ", ".join(f"{module} {seconds:.0f} s" for module, seconds in busiest)
            + "; last: "
            + ", ".join(last_tests)
        )
    totals = _by_module([report for reports in REPORTS.values() for report in reports])
    terminalreporter.write_line(
        f"worker-seconds {sum(seconds for _, seconds in totals):.0f}, by module: "
        + ", ".join(f"{module} {seconds:.0f}" for module, seconds in totals[:MODULES])
    )
