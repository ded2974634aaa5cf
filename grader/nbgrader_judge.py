"""The old name of ``grader.nbgrader.judge``, kept so that notebooks and configs already written still work."""

import sys

from grader.nbgrader import judge

sys.modules[__name__] = judge
