"""The untrusted side of the grader: the only code that imports a learner's module.

Learner Python (the module's top level, and the body of each ``@tilelang.jit`` function that
TileLang's eager frontend runs while tracing) runs only in the tracer process
(``python -m grader.trace.tracer``), which the judge starts with no GPU, a scrubbed environment, a
temporary working directory and resource limits. It answers each (kernel, sizes) job with the traced
TIR serialized by ``tvm.ir.save_json``, or with a sentence saying why it could not trace it. Nothing
here judges: whatever the tracer says is data the judge validates (``grader.processes.tracing``).
"""
