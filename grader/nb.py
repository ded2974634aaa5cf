"""The learner's name for ``grader.frontends.notebook`` (``%load_ext grader.nb``, ``from grader.nb import check``)."""

import sys

from grader.frontends import notebook

sys.modules[__name__] = notebook
