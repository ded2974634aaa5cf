"""The tilelang-course grader: discover, build, run, compare, report (see grader/plugin.py)."""
