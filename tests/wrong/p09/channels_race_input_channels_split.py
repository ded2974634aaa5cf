"""conv1d_channels with the input channels split over a third grid axis, two per block. Each block adds
its partial sums into an fp32 workspace by copying the workspace tile into a fragment, adding and
copying it back, with no atomic: the blocks that share an output tile run at once on a GPU and one
block's partial sums overwrite another's."""

KERNEL = "conv1d_channels"
CAUGHT_BY = "gpu"
# One block at a time, as the simulator runs them, the partial sums add up: only its check for races
# between blocks (issue 25) fails this on the CPU.

import tilelang
import tilelang.language as T

PER_BLOCK = 2  # input channels per block


@tilelang.jit
def conv1d_channels(X, W, BLOCK_O: int, BLOCK_L: int, THREADS: int = 128):
    C_in, L, C_out, K = T.const("C_in, L, C_out, K")
    X: T.Tensor((C_in, L), T.float16)
    W: T.Tensor((C_out, C_in, K), T.float16)
    Y = T.empty((C_out, L), T.float16)
    sums = T.alloc_global((C_out, L), T.float32)

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (zx, zy):
        zeros = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.clear(zeros)
        T.copy(zeros, sums[zy * BLOCK_O, zx * BLOCK_L])

    splits = T.ceildiv(C_in, PER_BLOCK)
    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), splits, threads=THREADS) as (bx, by, bc):
        P = (K - 1) // 2
        window = T.alloc_shared((BLOCK_L + K - 1,), T.float16)
        taps = T.alloc_shared((BLOCK_O, K), T.float16)
        acc = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.copy(sums[by * BLOCK_O, bx * BLOCK_L], acc)
        for cc in T.serial(PER_BLOCK):
            c = bc * PER_BLOCK + cc
            if c < C_in:
                T.copy(X[c, bx * BLOCK_L - P : bx * BLOCK_L - P + BLOCK_L + K - 1], window)
                T.copy(W[by * BLOCK_O : (by + 1) * BLOCK_O, c, 0:K], taps)
                for k in T.serial(K):
                    for o, i in T.Parallel(BLOCK_O, BLOCK_L):
                        acc[o, i] += T.cast(taps[o, k], T.float32) * T.cast(window[i + k], T.float32)
        T.copy(acc, sums[by * BLOCK_O, bx * BLOCK_L])

    with T.Kernel(T.ceildiv(L, BLOCK_L), T.ceildiv(C_out, BLOCK_O), threads=THREADS) as (ox, oy):
        out = T.alloc_fragment((BLOCK_O, BLOCK_L), T.float32)
        T.copy(sums[oy * BLOCK_O, ox * BLOCK_L], out)
        T.copy(out, Y[oy * BLOCK_O, ox * BLOCK_L])

    return Y
