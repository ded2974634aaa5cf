"""What people and tools talk to: ``cli`` (``python -m grader``), ``watch`` (``--watch``), ``notebook``
(``grader.nb``: check(), bench(), profile(), explain(), hint()), ``plugin`` (pytest, which runs every grade),
``render`` (the one place a verdict becomes text, for every front end), ``explain_view`` (``--explain``'s steps
as text and as an HTML page) and the warm grader (``warm``, ``warm_server``) that notebooks and ``--watch`` fork
their checks from."""
