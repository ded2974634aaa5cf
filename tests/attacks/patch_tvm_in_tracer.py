"""Attack: reach the compiler instead of the grader. At import the file registers TVM global functions that
TileLang calls while it builds (tilelang_callback_cuda_postproc rewrites the generated CUDA: here into a
kernel that would compute the answer), replaces tilelang.compile and tvm.compile, and sets environment
variables a compile reads (TILELANG_*, CUDA_*, TVM_*). All of it happens in the tracer; the judge builds
in a process the file never touched, so gemv still writes its zeros."""

import os

import tilelang
import tilelang.language as T
from tilelang import tvm


def _rewrite(code, *args):
    return code.replace("half_t(0x0p+0f", "half_t(0x1p+0f")  # any rewrite would do


for name in ("tilelang_callback_cuda_postproc", "tilelang_callback_cuda_compile"):
    tvm.ffi.register_global_func(name, _rewrite, override=True)
tilelang.compile = lambda *args, **kwargs: None
tvm.compile = lambda *args, **kwargs: None
os.environ.update(
    TILELANG_CACHE_DIR="/tmp/tilelang-course-attack-cache", CUDA_VISIBLE_DEVICES="0", TVM_LIBRARY_PATH="/tmp"
)


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
