"""Why a warm check on the GPU answers differently from a cold one: run 02 add twice through grader.frontends.warm."""

import os
import sys

sys.path.insert(0, os.getcwd())
from grader.frontends.warm import WarmGrader

w = WarmGrader()
try:
    for argv in (["02", "--solutions", "-k", "add", "--exact"], ["02", "--solutions", "-k", "add", "--exact"]):
        r = w.run(argv, dict(os.environ), os.getcwd(), 300)
        print("exit", r.returncode)
        print(r.output[-3000:])
finally:
    w.stop()
