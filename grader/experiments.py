"""The old name of ``grader.teaching.experiments``, kept so that notebooks and configs already written still work."""

import sys

from grader.teaching import experiments

sys.modules[__name__] = experiments
