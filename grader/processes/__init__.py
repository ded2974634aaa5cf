"""Who runs what, with which rights. Trusted code: nothing here imports ``grader.trace``.

``supervisor`` runs in the grader's own process: it starts a judge per puzzle, keeps its time limits and
turns what the judge sends into results. ``judge`` is the judge process: it loads the puzzle's spec from
``solutions/``, asks the tracer for each case's TIR and drives the steps of grader.pipeline over it.
``tracing`` starts the tracer process (``python -m grader.trace.tracer``) inside the ``sandbox`` and reads its
replies as untrusted data; ``reaper`` kills whatever it leaves behind before a verdict leaves.
``trace_cache`` lets a warm check skip tracing a kernel whose file has not changed. ``profiler`` (``--profile``)
runs a case's admitted TIR, and the course's own kernel, under Nsight Compute in a child of the judge
(``python -m grader.processes.profiler``), once the tracer is gone. ``hermetic`` is how every trusted process
starts: ``python -I`` with only the course's root and the named ``PYTHONPATH`` folders on ``sys.path``.
``launch`` is how every front end but the command line starts a grading run (a notebook's check(), ``--watch``,
nbgrader's JudgeChecks): a typed request to grader.frontends.grading, hermetic or forked from the warm grader,
with a time limit; ``stream`` is how its typed results come back.
"""
