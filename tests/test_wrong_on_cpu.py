"""Every known-wrong kernel under tests/wrong/ is rejected without a GPU, on its simulated cases.

A learner without a GPU gets a verdict on the numbers only from the simulated cases, so a wrong
kernel that passes them all exits 0 on the CPU. Each file in tests/wrong/ must fail some simulated
case (CAUGHT_BY = "compile": fail to build on every case; "generated_code": a miscompile read from the CUDA of
a build, so these few are compiled here), unless it declares SIMULATOR_MISSES with
the reason no small CPU case can catch it; and a file that declares SIMULATOR_MISSES must in fact pass
them all, so the list of misses stays honest.

This grades in-process through tests.inprocess.grade_simulated (trace, simulate, compare: no nvcc but for the
few CAUGHT_BY = "generated_code"), so the whole list runs in a few minutes; tests/test_grader_e2e.py runs the
compile-rejected ones through the CLI, and on a GPU every one of them.
"""

import pytest

from grader.discover import course_root
from grader.outcome import Status
from tests.corpora import WrongKernel, wrong_kernels
from tests.inprocess import grade_simulated

WRONG = wrong_kernels(course_root())


@pytest.mark.parametrize("wrong", WRONG, ids=lambda w: f"p{w.puzzle_id}/{w.path.stem}")
def test_simulated_cases_reject_every_known_wrong_kernel(wrong: WrongKernel):
    # One rejection is what a plain wrong kernel must show: its later cases are not simulated. A kernel that must
    # fail to build everywhere, or that the simulator must miss everywhere, is graded on every simulated case.
    needs_one = wrong.caught_by != "compile" and not wrong.simulator_misses
    # A kernel TileLang miscompiles is right as written: the CPU rejects it by reading the CUDA, so it is built too
    built = wrong.caught_by == "generated_code"
    results = grade_simulated(wrong.puzzle_id, wrong.path, wrong.kernel, until_rejected=needs_one, compile_cuda=built)
    assert results, f"{wrong.kernel} has no simulated case"
    statuses = {r.case: r.status for r in results}
    rejected = sorted(case for case, status in statuses.items() if status in (Status.FAILED, Status.ERROR))
    if wrong.caught_by == "compile":
        assert not wrong.simulator_misses, "a kernel that does not build cannot be missed by the simulator"
        assert set(statuses.values()) == {Status.ERROR}, f"should fail to build on every case: {statuses}"
    elif wrong.simulator_misses:
        assert not rejected, (
            f"declares SIMULATOR_MISSES ({wrong.simulator_misses}) but the CPU rejects it on {rejected}: "
            "remove the SIMULATOR_MISSES line"
        )
    else:
        assert rejected, (
            f"passes every simulated case ({statuses}): add a simulated case that catches it, or declare "
            'SIMULATOR_MISSES = "why no small CPU case can"'
        )
