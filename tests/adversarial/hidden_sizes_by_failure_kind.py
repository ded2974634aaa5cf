"""Attack: a hidden case's sizes read off how it fails. The judge traces a hidden case at its real sizes, and the
tracer runs this file's module code first: it wraps the tracer's answer to each job (grader/trace/tracer.py's
`answer`, which it can reach as __main__) so that a gemv job at a size no public case has is answered "not
implemented" where M is odd and with an error where M is even. The status tag (TODO or ERROR) and the cause's kind
each told a bit of M; digit by digit, five submissions read M=777. A hidden case now reads as FAILED, with no cause
and no time, however it fails (grader.pipeline.hidden.public_view; tests/test_adversarial.py grades this file on
two hidden cases, M odd and even, and finds the two results the same)."""

import sys

PUBLIC_ROWS = {64, 127, 256, 1000}


def _answer_by_parity(answer):
    def answer_by_parity(module, source, job):
        rows = job.get("arguments", {}).get("M")
        if job.get("function") == "gemv" and isinstance(rows, int) and rows not in PUBLIC_ROWS:
            if rows % 2:
                return {"status": "not_implemented"}
            failed = {"status": "failed", "summary": "x", "location": "", "hint": "", "trace": ""}
            return {**failed, "kind": "build_error", "renamed": ""}
        return answer(module, source, job)

    return answer_by_parity


_main = sys.modules.get("__main__")
if _main is not None and hasattr(_main, "answer"):
    _main.answer = _answer_by_parity(_main.answer)


import tilelang  # noqa: E402
import tilelang.language as T  # noqa: E402


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        A_tile = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float16)
        B_tile = T.alloc_fragment((BLOCK_K,), T.float16)
        products = T.alloc_fragment((BLOCK_M, BLOCK_K), T.float32)
        acc = T.alloc_fragment((BLOCK_M,), T.float32)
        T.clear(acc)
        for k in T.serial(T.ceildiv(K, BLOCK_K)):
            T.copy(A[bx * BLOCK_M, k * BLOCK_K], A_tile)
            T.copy(B[k * BLOCK_K], B_tile)
            for i, j in T.Parallel(BLOCK_M, BLOCK_K):
                products[i, j] = T.cast(A_tile[i, j], T.float32) * T.cast(B_tile[j], T.float32)
            T.reduce_sum(products, acc, dim=1, clear=False)
        for i in T.Parallel(BLOCK_M):
            if bx * BLOCK_M + i < M:
                C[bx * BLOCK_M + i] = T.cast(acc[i], T.float16)
    return C
