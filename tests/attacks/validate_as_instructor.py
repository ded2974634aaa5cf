"""Attack: hand in a notebook whose cell does its work when the instructor runs ``nbgrader validate`` on the
submission (``nbgrader validate submitted/mallory/ps1/*.ipynb`` in the course's folder, or the Validate button of
the instructor's own Jupyter server on a notebook under submitted/). nbgrader validate runs every cell in a kernel
of whoever runs it, unconfined, with the course's config: CELL below (beside his kernels) reads the hidden cases and
writes where the instructor can write (here, a file named by TILELANG_ATTACK_DIR; it could as well rewrite the
gradebook or plant a .pth in the instructor's site-packages). Autograde never runs a student's cell; validate did.
The course's config now names a kernel manager (grader.nbgrader.validate.OwnNotebooksOnly) that starts no kernel
for a notebook in the course's folder outside source/ and release/, or in the exchange. tests/test_attacks.py
(test_validate_runs_no_students_notebook_as_the_instructor) hands it in.

Through the command line (this file as --file) it is a gemv that stores zeros, as every attack's."""

import tilelang
import tilelang.language as T

NOTEBOOK = "p02_vector_add.ipynb"
CELL = (
    "import os, pathlib\n"
    "folder = pathlib.Path(os.environ['TILELANG_ATTACK_DIR'])\n"
    "(folder / 'ran-as-the-instructor').write_text(os.getcwd())\n"
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
