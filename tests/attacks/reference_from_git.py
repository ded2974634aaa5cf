"""Attack: pass off the course's own gemv. Read it from solutions/, tests/right/ or puzzles/ beside the grader
package the tracer imports, else from the git history (git show, or the objects read by hand); run that source
and keep its gemv. Only if none of it can be read does the file fall back to zeros."""

import subprocess
import zlib
from pathlib import Path

import tilelang
import tilelang.language as T

import grader

ROOT = Path(grader.__file__).resolve().parent.parent


def steal() -> str:
    for path in [ROOT / "solutions" / "p08_matrix.py", *ROOT.glob("tests/right/**/*p08*.py")]:
        try:
            return path.read_text()
        except OSError:
            continue
    try:
        shown = subprocess.run(["git", "-C", str(ROOT), "show", "HEAD:solutions/p08_matrix.py"], capture_output=True)
        if b"def gemv" in shown.stdout:
            return shown.stdout.decode()
    except OSError:
        pass
    for loose in list((ROOT / ".git" / "objects").glob("??/*"))[:20000]:
        try:
            body = zlib.decompress(loose.read_bytes())
        except (OSError, zlib.error):
            continue
        if b"def gemv(" in body and b"T.reduce_sum" in body:
            return body.split(b"\0", 1)[1].decode(errors="replace")
    return ""


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


source = steal()
if "def gemv(" in source:
    gemv = load_as_module(source, "stolen").gemv  # TileLang reads a kernel's source: it must be a file
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
