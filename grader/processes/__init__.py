"""The trusted side of the grader: the judge never imports a learner's module.

``worker`` is the judge process: it loads the puzzle's spec and references from ``solutions/``, asks the
tracer (``grader.trace``) for each case's TIR, validates it (``traced``), compiles it, runs or
simulates it, compares it with torch and reports over a pipe to the supervisor. Processes the tracer
leaves behind are killed before a verdict leaves (``reaper``).
"""
