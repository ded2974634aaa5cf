"""The tilelang-course grader: discover, build, run, compare, report (see grader/frontends/plugin.py)."""
