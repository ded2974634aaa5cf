"""The tracer process: ``python -m grader.trace.tracer SOURCE REPLY_FD``.

It imports the learner's file and answers jobs, one JSON line each, read from stdin:
  {"id": 3, "function": "gemv", "known": [...], "tensors": [...], "blocks": [...], "arguments": {...}}
with one JSON line on the file descriptor REPLY_FD:
  {"event": "ready"}                                        once, TileLang imported, before the learner's file
  {"event": "loaded", "problem": "", "trace": ""}          once, after the import
  {"id": 3, "status": "traced", "tir": "<tvm.ir.save_json>", "options": {...}}
  {"id": 3, "status": "not_implemented"} | {"id": 3, "status": "failed", "summary": ..., ...}
Its stdout and stderr belong to the judge (a file it never shows as a verdict). The judge treats
every reply as data to validate: this process runs the learner's Python and proves nothing.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO


def send(reply: TextIO, message: dict[str, Any]) -> None:
    reply.write(json.dumps(message) + "\n")
    reply.flush()


def answer(module: Any, source: Path, job: dict[str, Any]) -> dict[str, Any]:
    """Trace one job: the TIR as JSON and the decorator's options, or why not."""
    from grader.pipeline.build import (
        OUT_OF_MEMORY,
        BuildFailed,
        NotImplementedYet,
        Signature,
        failure_of,
        out_of_memory,
    )
    from grader.pipeline.trace import jit_options, kernel_function, trace

    signature = Signature(job["function"], tuple(job["tensors"]), tuple(job["blocks"]), tuple(job.get("outputs", ())))
    try:
        from tilelang import tvm

        function = kernel_function(module, signature, tuple(job["known"]))
        tir = trace(function, signature, job["arguments"], source)
        if not isinstance(tir, tvm.tirx.PrimFunc):
            summary = f"`{signature.function}` traced to a {type(tir).__name__}, not a kernel"
            raise BuildFailed(summary, "", "", kind="not_a_kernel")
        return {"status": "traced", "tir": tvm.ir.save_json(tir), "options": jit_options(function)}
    except NotImplementedYet:
        return {"status": "not_implemented"}
    except BuildFailed as error:
        failed = error
    except Exception as error:
        if out_of_memory(error):
            summary, trace = f"tracing {OUT_OF_MEMORY}", traceback.format_exc()
            return {"status": "failed", "summary": summary, "trace": trace, "kind": "out_of_memory"}
        failed = failure_of(error, source, signature)
    return {
        "status": "failed",
        "summary": failed.summary,
        "location": failed.location,
        "hint": failed.hint,
        "trace": failed.trace,
        "kind": str(failed.kind),  # the judge takes it only from grader.pipeline.admit.TRACER_KINDS
        "renamed": str(failed.facts.get("renamed", "")),  # and this only where it is an identifier
    }


def main(argv: list[str]) -> None:
    source, reply = Path(argv[0]), os.fdopen(int(argv[1]), "w", encoding="utf-8")
    jobs = sys.stdin
    sys.dont_write_bytecode = True  # importing the learner's file must not write __pycache__ next to it
    os.environ.setdefault("TILELANG_PRINT_ON_COMPILATION", "0")
    logging.getLogger("tilelang").setLevel(logging.WARNING)
    import tilelang  # noqa: F401  (before the learner's file: its import time is ours)

    from grader.trace.learner import load_learner

    send(reply, {"event": "ready"})  # the grader's part of the start is over; the learner's file comes next

    module, problem, trace = load_learner(source)
    send(reply, {"event": "loaded", "problem": problem, "trace": trace})
    if problem:
        return
    for line in jobs:
        job = json.loads(line)
        send(reply, {"id": job["id"], **answer(module, source, job)})


if __name__ == "__main__":
    main(sys.argv[1:])
