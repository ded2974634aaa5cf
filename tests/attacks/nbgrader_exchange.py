"""Attack: hand in, through nbgrader's exchange, what the instructor's collect believes. A student writes his own
folder of the exchange's inbound/ (every student may, and nbgrader names it STUDENT+ASSIGNMENT+TIME+RANDOM), and
nbgrader's collect trusted all of it, as the instructor:

- a hard link (HARD_LINK below): where ``fs.protected_hardlinks`` is off (the kernel's default; systemd turns it on)
  a student may link any file of the exchange's filesystem, the hidden cases file or a classmate's submission,
  readable by him or not; collect copied its contents into submitted/, whence autograde and generate_feedback
  hand them back in his feedback;
- a forged time (FORGED_TIME): collect chose the newest submission by the folder's name, and autograde counted
  the late penalty from its timestamp.txt, both his to write: a week-late submission stating a time before the
  due date lost nothing;
- the folder itself a symbolic link (LINKED_FOLDER) to the instructor's source/ folder of the assignment: the
  round-3 collect kept links inside a submission as links, but copied a linked submission folder's target, the
  notebooks with their solutions, as the student's own regular files, which autograde then graded: full marks;
- a forged name (IMPERSONATED): ``nbgrader submit --student=alice`` (or a folder made by hand) files his
  submission as alice's; collect only warned that its owner was someone else, then collected it as alice's,
  replacing her own when it stated a later time.

The course's collect (grader.nbgrader.exchange.LinkSafeCollect) collects no submission that is a link or holds a
file that is not its owner's or has another name, nor one whose owner is not the student it names, and records when a
submission last changed (the kernel's ctime, which no student can set back) where its own time disagrees.
tests/test_attacks.py (test_collect_believes_nothing_a_student_forges_in_the_exchange) hands these in.

Through the command line (this file as --file) it is a gemv that stores zeros, as every attack's."""

import tilelang
import tilelang.language as T

NOTEBOOK = "p02_vector_add.ipynb"
HARD_LINK = "notes.txt"  # hard-linked to the instructor's hidden cases file
FORGED_TIME = "2026-01-01 00:00:00.000000 UTC"  # long before the due date, stated in the name and timestamp.txt
IMPERSONATED = "alice"  # the classmate whose submission his replaces
LINKED_FOLDER = "../../../course/source/ps3"  # his inbound folder of ps3, relative to it


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
