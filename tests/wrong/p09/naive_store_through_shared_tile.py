"""conv1d_naive that sums in fp32, converts the sums into an fp16 shared tile inside T.Parallel and stores
that tile with T.copy. Right-looking, and right everywhere but at the tail: on sm_90 TileLang 0.1.15 makes
that copy a TMA store, which writes whole 16-byte units, so where L * 2 bytes is not a multiple of 16 the
tile's last elements land past Y's end (3 past it at L = 37, 5 at L = 4099 on the H200)."""

KERNEL = "conv1d_naive"
CAUGHT_BY = "gpu"
# The judge reads the compiled CUDA's TMA store and the CLI grader fails it on the CPU
# (tests/test_simulate.py); the in-process grading here compiles nothing, so it has no CUDA to read.
SIMULATOR_MISSES = "only the compiled CUDA shows the TMA store; python -m grader on the CPU catches it"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_naive(X, W, BLOCK_L: int, THREADS: int = 128):
    L, K = T.const("L, K")
    X: T.Tensor((L,), T.float16)
    W: T.Tensor((K,), T.float16)
    Y = T.empty((L,), T.float16)
    with T.Kernel(T.ceildiv(L, BLOCK_L), threads=THREADS) as bx:
        P = (K - 1) // 2
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((K,), T.float16)
        acc = T.alloc_fragment((BLOCK_L,), T.float32)
        out = T.alloc_shared((BLOCK_L,), T.float16)
        T.copy(X[bx * BLOCK_L - P], window)
        T.copy(W[0], taps)
        T.clear(acc)
        for k in T.serial(K):
            for i in T.Parallel(BLOCK_L):
                acc[i] += T.cast(window[i + k], T.float32) * T.cast(taps[k], T.float32)
        for i in T.Parallel(BLOCK_L):
            out[i] = T.cast(acc[i], T.float16)
        T.copy(out, Y[bx * BLOCK_L])
    return Y
