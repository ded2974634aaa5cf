"""Attack: smuggle device code past the external-call check in the callee's name. T.print's own calls are
let through by name (debug_print_var, debug_print_msg, debug_print_buffer_value), and the generated CUDA
prints a callee's name verbatim before its arguments, so a name that starts like T.print's and goes on
with a comma expression runs code the TIR does not show: the simulator skips a T.print, the GPU would run
it. Here the smuggled expression stores into C; it could as well call one of TileLang's device templates."""

import tilelang
import tilelang.language as T


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for i in T.Parallel(BLOCK_M):
            C[bx * BLOCK_M + i] = T.float16(0)  # the wrong answer every attack tries to pass off
        T.call_extern("handle", "debug_print_msg(0), C[0] = C[1] + C[2], debug_print_msg", "x")
    return C
