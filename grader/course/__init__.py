"""Authoring the course: notebooks generated from the puzzle modules (``notebooks``, ``generate``), their
translations (``translations``), stubs kept in step with the solutions (``sync``), and every case's fit
on each GPU (``fit``)."""
