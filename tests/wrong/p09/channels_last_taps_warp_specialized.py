"""conv1d_channels_last as tests/right/p09/conv1d_channels_last_serial_taps.py writes it (the taps in a T.serial
loop around a T.Pipelined loop over the channel tiles), built as the stub decorates it (no pass configs: warp
specialization on). The code is right; TileLang 0.1.15 miscompiles it for sm_90a: with
warp specialization on, the consumer's branch clears `acc` inside the tap loop, so only the last tap is summed.
On an H100 (2026-12-06, docs/results/data/h100-2026-12-06-tenth/item3-verdicts.txt) it fails every case whose
copies are TMA loads (rows of 16-byte multiples: rect_40to72_150_k5, 10778 of 10800 elements wrong; tail and
large too), the same in two runs, and passes the others; compute-sanitizer finds no race in the build with it
off. The CPU reads the moved clear from the generated CUDA (grader.pipeline.miscompiles)."""

KERNEL = "conv1d_channels_last"
CAUGHT_BY = "generated_code"

import tilelang
import tilelang.language as T


@tilelang.jit
def conv1d_channels_last(X, W, BLOCK_O: int, BLOCK_L: int, BLOCK_C: int, STAGES: int = 2, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((L, C_in), T.float16)
    W: T.Tensor((C_out, K, C_in), T.float16)
    Y = T.empty((L, C_out), T.float16)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (bx, by):
        P = (K - 1) // 2
        window = T.alloc_shared((BLOCK_L, BLOCK_C), T.float16)
        weights = T.alloc_shared((BLOCK_O, BLOCK_C), T.float16)
        acc = T.alloc_fragment((BLOCK_L, BLOCK_O), T.float32)
        T.clear(acc)
        for k in T.serial(K):
            start = bx * BLOCK_L + k - P
            for cb in T.Pipelined(T.ceildiv(C_in, BLOCK_C), num_stages=STAGES):
                T.copy(X[start, cb * BLOCK_C], window)
                T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, k, cb * BLOCK_C : (cb + 1) * BLOCK_C], weights)
                T.gemm(window, weights, acc, transpose_B=True)
        T.copy(acc, Y[bx * BLOCK_L, by * BLOCK_O])

    return Y
