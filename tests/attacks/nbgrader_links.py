"""Attack: hand in symbolic links, not work. nbgrader reads a submission as the grading user and follows its links:
it grades a linked notebook as this student's, and copies every other linked file into autograded/, whence
generate_feedback copies it into the feedback the student fetches. A submission that arrives as a git clone or a
tar keeps its links, and nbgrader's own collect copied the student's inbound/ folder of the exchange (his to
write) following them, as the instructor (the course's collect, grader.nbgrader.exchange, keeps them as links).
PLANTS below are what the student hands in beside (or instead of) his notebook, relative to
his submission folder (COURSE/submitted/STUDENT/ASSIGNMENT): the notebook a link to the instructor's source/
notebook (its kernel cells are the solutions: full marks, with nothing written), and links to the hidden cases
file and the gradebook (both came back in the feedback folder); a classmate's notebook or a whole linked
submission folder (submitted/STUDENT/ASSIGNMENT -> ../CLASSMATE/ASSIGNMENT) does the same. JudgeChecks grades no
submission that holds a link (grader.nbgrader.judge.submission_links): it removes what nbgrader copied through
them and raises, so that nbgrader logs the student as not graded and removes his autograded folder.

Through the command line (this file as --file) it is a gemv that stores zeros, as every attack's."""

import tilelang
import tilelang.language as T

NOTEBOOK = "p02_vector_add.ipynb"
# link name -> target, relative to the student's submission folder (what a tar or a clone would recreate)
PLANTS = {
    "p02_vector_add.ipynb": "../../../source/ps1/p02_vector_add.ipynb",
    "notes.txt": "../../../../grading-machine/hidden_cases.json",
    "data.csv": "../../../gradebook.db",
}


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
