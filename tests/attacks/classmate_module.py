"""Attack: copy a classmate. Every check's module waits in $TMPDIR (tilelang-course-check-*/p08_notebook.py) while
it is graded; find one that is not this file, run it, and keep its gemv."""

import glob
import os

import tilelang
import tilelang.language as T


def load_as_module(text: str, name: str):
    """``text`` written to a file in the (writable) current folder and imported from there."""
    import importlib.util
    import os

    path = os.path.join(os.getcwd(), f"{name}.py")
    with open(path, "w") as handle:
        handle.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


found = ""
for pattern in ("/tmp/*/p08_*.py", "/tmp/*/*/p08_*.py", os.path.expanduser("~/*/p08_*.py")):
    for path in glob.glob(pattern):
        try:
            text = open(path).read()
        except OSError:
            continue
        if "def gemv(" in text and "T.float16(0)  # the wrong answer" not in text:
            found = text
            break
if found:
    gemv = load_as_module(found, "classmate").gemv  # TileLang reads a kernel's source: it must be a file
else:

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
