"""The old name of ``grader.teaching.pictures``, kept so that notebooks and configs already written still work."""

import sys

from grader.teaching import pictures

sys.modules[__name__] = pictures
