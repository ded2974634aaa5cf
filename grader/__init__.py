"""The tilelang-course grader. The folders are the map; arrows point down this list, never up:

- ``frontends/``  what people and tools talk to: the CLI, ``--watch``, the notebook helpers (``grader.nb``),
  the pytest plugin, the one renderer of verdicts, and the warm grader.
- ``nbgrader/``, ``course/``, ``teaching/``  an instructor's grading, the course's authoring tools (notebooks,
  translations, sync), and the notebooks' experiments and pictures.
- ``processes/``  who runs what, and with which rights: the supervisor, the judge process, the tracer
  process as the judge sees it, the sandbox and the reaper. Trusted: nothing here imports ``trace/``.
- ``pipeline/``  one module per grading step, in order: shape (the puzzle cut to the run), trace, admit, build,
  inputs, execute (run on the GPU or simulate on the CPU), compare, grade (the gates), bench; plus hidden cases
  and saved failures. No processes, no environment, no printing.
- the root  the course's data model: ``spec`` (a puzzle as data), ``outcome`` (a verdict), ``settings`` (every
  option and environment name), ``discover``, ``devices``, ``hints``, ``concepts``, ``budget``, ``verified``.
- ``trace/``  untrusted: the only code that imports a learner's file, run in the sandboxed tracer process. A leaf
  that no trusted module imports.
- ``i18n/``  translating what the grader says at run time.

tests/test_architecture.py checks these rules (and that no module imports another in a cycle).
"""
