"""Attack: bring in source code of one's own with T.import_source, which TileLang keeps as a block
annotation (pragma_import_c) holding the text: an annotation's value is not a string expression, so a
check of the TIR's string expressions alone would not see it. The judge must refuse it."""

import tilelang
import tilelang.language as T

SOURCE = "__device__ int tilelang_course_attack() { return 1; }\n"


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        T.import_source(SOURCE)
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)  # the wrong answer every attack tries to pass off
    return C
