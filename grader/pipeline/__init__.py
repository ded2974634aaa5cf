"""The grading steps, one module each, in the order a case goes through them:

1. ``trace``    a @tilelang.jit function and a case's sizes -> TIR (run by the sandboxed tracer on a learner's file)
2. ``admit``    the gate every traced TIR passes: allowed node types, no host calls, the puzzle's signature;
   ``tir_graph`` checks its JSON node by node and gives every name one the judge made
3. ``build``    admitted TIR -> a compiled kernel (TileLang and nvcc, for the GPU graded for)
4. ``inputs``   the case's inputs drawn, its outputs poisoned, the torch reference computed
5. ``execute``  the case run on the GPU, or tile by tile on the CPU simulator (``simulate/``), then ``compare``
6. ``grade``    the ordered gates that turn all of the above into one verdict, and what ``checks`` reads
   from the TIR (accumulators never cleared, grids that miss a tail) and ``grader.concepts`` asks of it
7. ``bench``    a passed case timed against torch and the ``roofline``
8. ``profile``  (``--profile``) why a case takes its time: ``static`` reads the TIR and ptxas, ``counters`` reads
   Nsight Compute's raw page (grader.processes.profiler runs it), ``advice`` says what to try; never a verdict

``context`` holds what the steps share; ``hidden`` adds an instructor's hidden cases; ``failures`` saves a
failed case's tensors for a replay. Nothing here reads the environment or prints, and nothing starts a process
but the compiler (nvcc, through TileLang in ``build`` and for ptxas's figures in ``profile.ptxas``): the judge
process (grader.processes.judge) drives these steps and the front ends show what they return.
"""
