"""What people and tools talk to: ``cli`` (``python -m grader``), ``watch`` (``--watch``), ``notebook``
(``grader.nb``: check(), bench(), hint()), ``plugin`` (pytest, which runs every grade), ``render`` (the one place a
verdict becomes text, for every front end) and the warm grader (``warm``, ``warm_server``) that notebooks and
``--watch`` fork their checks from."""
