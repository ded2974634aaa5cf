"""Attack: switch off TileLang's barriers with the pass config tl.disable_thread_storage_sync. The TIR is
unchanged, so the simulator (one statement for the whole block at a time) sees a kernel that staged its
data through shared memory correctly, while on the GPU the loads race the stores they need
(tests/wrong/p03/outer_add_fragments_no_barriers.py). The judge must not pass the config on."""

import tilelang
import tilelang.language as T


@tilelang.jit(pass_configs={"tl.disable_thread_storage_sync": True})
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)  # the wrong answer every attack tries to pass off
    return C
