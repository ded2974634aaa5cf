"""The old name of ``grader.teaching.layouts``, kept so that notebooks and configs already written still work."""

import sys

from grader.teaching import layouts

sys.modules[__name__] = layouts
