"""Right numbers the wrong way, as a learner of the original tilelang-puzzles course writes its first
copy: the single block moves the whole vector with one T.copy, which maps the elements onto the threads
itself, so the rung's own mapping (T.serial steps, T.Parallel inside) is never written."""

import tilelang
import tilelang.language as T

PUZZLE = "01"
KERNELS = "copy_serial"
WANTS = "T.Parallel(THREADS)"
INSTEAD = "your kernel moves the data with one T.copy from A straight into B, which hands the elements"


@tilelang.jit
def copy_serial(A, THREADS: int = 256):
    N = T.const("N")
    A: T.Tensor((N,), T.float16)
    B = T.empty((N,), T.float16)
    with T.Kernel(1, threads=THREADS):
        T.copy(A, B)
    return B
