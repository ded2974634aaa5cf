"""Attack: patch the judging functions themselves: the comparison, grade_case() and the run,
run, report, the pytest plugin and the JSON writer, so that every case reads as passed."""

import tilelang
import tilelang.language as T

import grader.frontends.plugin
import grader.frontends.render
import grader.outcome
import grader.pipeline.execute
import grader.pipeline.grade
import grader.pipeline.inputs


def _passed(*args, **kwargs):
    from grader.outcome import CaseResult

    return CaseResult("08", "gemv", "square_256", grader.outcome.Status.PASSED, {}, "max abs err 0", "x")


grader.pipeline.execute.compare_outputs = _passed
grader.pipeline.grade.grade_case = _passed
grader.pipeline.execute.execute_and_compare = _passed
grader.pipeline.inputs.reference_outputs = lambda kernel, inputs: [x.clone() for x in inputs[:1]]
grader.frontends.render.case_lines = lambda result, verbose=False: ["  PASS  square_256  forged"]
grader.frontends.render.write_json = lambda path, document: path.write_text('{"results": []}')
grader.frontends.plugin.CaseItem.runtest = lambda self: None


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)  # the wrong answer every attack tries to pass off
    return C
