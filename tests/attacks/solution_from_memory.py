"""Attack: trace the course's own kernel as this file's, from the memory of a warm judge. A warm check forks its
tracer from the judge, whose memory holds the course's spec module (solutions/pNN.py, imported for the cases and
references) and, in linecache, that file's lines (read for a traceback or an inspect). solutions/ is not in the
sandbox, so the module's kernels cannot be traced from their file; but their text was in memory: this file writes
it into its own work folder, imports it and names the course's gemv as its own, which then PASSed every case of a
warm check (a notebook's check(), --watch). The forked tracer now clears linecache before the learner's file is
imported (grader.processes.tracing.ForkedTracer). Cold, and warm with hidden cases, the tracer is a fresh
interpreter, which never held the text. (Learners may read solutions/ on their own machine; no grade comes from a
warm check: this keeps the sandbox's word that the tracer holds nothing of the judge.)"""

import importlib.util
import linecache
import os
import sys

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
            C[bx * BLOCK_M + i] = T.float16(0)
    return C


for path, entry in list(linecache.cache.items()):
    if "solutions" in path and len(entry) == 4 and entry[2]:
        copy = os.path.join(os.getcwd(), "course_kernels.py")
        with open(copy, "w") as handle:
            handle.write("".join(entry[2]))
        spec = importlib.util.spec_from_file_location("course_kernels", copy)
        module = importlib.util.module_from_spec(spec)
        sys.modules["course_kernels"] = module
        spec.loader.exec_module(module)
        gemv = module.gemv  # the course's own kernel, traced as this file's
