"""Explain: one block of one simulated case, step by step, and for a failed case where the first wrong element
came from (``--explain KERNEL``, ``explain()`` in a notebook).

The record is made here, in the judge, from the admitted TIR: the learner's Python never runs in this step. It
takes up to three simulations of the case on the inputs the graded run drew: one to find the first wrong
element, one to find which block and step last wrote it, one to record that block (record.py). Then the steps
the wrong element depends on are read for evidence of the likely cause (``mark``).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from grader.outcome import Explanation, Step
from grader.pipeline.explain.record import MAX_STEPS, Recorder, Search
from grader.spec import Case, Kernel

OVERWRITES = {"copy", "fill", "parallel", "store", "cumsum"}  # ops that set what they write (unless they read it)


def grid_of(tir: Any) -> list[int]:
    """The launch grid's extents (blockIdx.x, .y, .z as the kernel has them), from the TIR."""
    from tilelang import tvm

    found: dict[str, int] = {}

    def visit(node: Any) -> None:
        binding = getattr(node, "thread_binding", None)
        if isinstance(node, tvm.tirx.For) and binding is not None and binding.thread_tag.startswith("blockIdx"):
            if isinstance(node.extent, tvm.tirx.IntImm):
                found.setdefault(binding.thread_tag, int(node.extent))

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    return [found[tag] for tag in sorted(found)]


def explain_case(*args: Any, **kwargs: Any) -> Explanation:
    """The record of one block of a case (``_explain_case``), run single-threaded as the simulator is."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # a loaded 2-core machine runs tiny ops far faster single-threaded
    try:
        return _explain_case(*args, **kwargs)
    finally:
        torch.set_num_threads(previous)


def _explain_case(
    tir: Any,
    kernel: Kernel,
    case: Case,
    fresh: Any,
    source: str,
    block: tuple[int, ...] | None = None,
    **simulation: Any,
) -> Explanation:
    """The record of ``block`` (None: the block that wrote the first wrong element, else the first block).

    ``fresh()`` returns new (inputs, outputs) lists as the graded run drew them; ``simulation`` holds the
    simulator's options for this case (shared-memory limit, TMA stores, block order)."""
    from grader.pipeline.compare import compare
    from grader.pipeline.inputs import reference_outputs
    from grader.pipeline.simulate import SimulationError, Unsupported, simulate

    grid = grid_of(tir)
    explanation = Explanation(kernel.function, case.name, [], grid)
    if not case.simulate:
        simulated = ", ".join(c.name for c in kernel.cases if c.simulate)
        explanation.problem = f"the case {case.name} is not simulated on the CPU; explain one of: {simulated}"
        return explanation

    def named(inputs: list, outputs: list) -> dict[str, torch.Tensor]:
        return {t.name: x for t, x in zip(kernel.inputs + kernel.outputs, inputs + outputs)}

    problem = ""
    keep = (0, MAX_STEPS)
    if block is None:
        inputs, outputs = fresh()
        pristine = [x.clone() for x in inputs]
        try:
            simulate(tir, named(inputs, outputs), **simulation)
        except (SimulationError, Unsupported) as error:
            problem = str(error)
        target = None if problem else first_wrong(kernel, case, pristine, outputs, compare, reference_outputs)
        if target is not None:
            inputs, outputs = fresh()
            search = Search(target["buffer"], target["flat"])
            try:
                Recorder(tir, named(inputs, outputs), search=search, **_limits(simulation)).run()
            except (SimulationError, Unsupported):
                pass  # the recorded run below says what stopped it
            explanation.target = {k: v for k, v in target.items() if k != "flat"}
            if search.found is not None:
                block = search.found.block
                # most of the steps before the store, which the evidence is read from, and a few after
                first = max(0, search.found.step - MAX_STEPS * 3 // 4)
                keep = (first, first + MAX_STEPS)
            else:  # nobody wrote it: most often a tail the grid or a guard leaves out, so show the last block
                block = tuple(n - 1 for n in grid)
                shown = f"{target['buffer']}[{_where(target['index'])}]"
                blocks = " x ".join(map(str, grid))
                explanation.why = (
                    f"no block wrote {shown}: the grid ({blocks} blocks) or a guard leaves it out; "
                    "this is the last block"
                )
    block = tuple(block) if block is not None else tuple(0 for _ in grid)
    if len(block) != len(grid) or any(not 0 <= b < n for b, n in zip(block, grid)):
        explanation.problem = f"there is no block {list(block)} in this case's grid of {grid} blocks"
        return explanation
    explanation.block = list(block)
    inputs, outputs = fresh()
    recorder = Recorder(
        tir, named(inputs, outputs), want=block, source=source.splitlines(), keep=keep, **_limits(simulation)
    )
    try:
        recorder.run()
    except (SimulationError, Unsupported) as error:
        explanation.problem = str(error)
    explanation.problem = explanation.problem or problem
    explanation.steps = recorder.steps
    explanation.truncated = recorder.dropped > 0
    if explanation.target and not explanation.why:
        mark(explanation)
    explanation.target = {k: _said(v) if k in ("got", "expected") else v for k, v in explanation.target.items()}
    return explanation


def _said(value: Any) -> Any:
    """A value of the target as JSON keeps it: a NaN or an infinity as its name ("nan", "inf", "-inf"), since
    strict JSON writes them as null (grader.frontends.render.write_json) and a notebook would show None."""
    return value if not isinstance(value, float) or math.isfinite(value) else str(value)


def _limits(simulation: dict[str, Any]) -> dict[str, Any]:
    """The simulator's options as the Interpreter takes them (simulate() takes a device profile)."""
    profile = simulation.get("profile")
    limits = {k: v for k, v in simulation.items() if k != "profile"}
    if profile is not None:
        limits.update(shared_limit=profile.shared_per_block, gpu=f"a block on {profile.label}")
    return limits


def _where(index: list[int]) -> str:
    return ", ".join(str(i) for i in index)


def first_wrong(kernel: Kernel, case: Case, inputs: list, outputs: list, compare: Any, reference: Any) -> dict | None:
    """The first wrong element of the first output that fails: its buffer, index, flat index, values."""
    expected = reference(kernel, inputs)
    for spec, got, want in zip(kernel.outputs, outputs, expected):
        verdict = compare(spec.name, got, want, kernel.tolerance_for(spec.dtype))
        if verdict.ok or verdict.first_wrong is None:
            continue
        flat = verdict.first_wrong
        index = [int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(got.shape))]
        return {
            "buffer": spec.name,
            "index": index,
            "flat": flat,
            "got": float(got.reshape(-1)[flat]),
            "expected": float(want.reshape(-1)[flat]),
        }
    return None


# ---------------------------------------------------------------------------------------------- evidence


def _touches(step: Step, buffer: str, *modes: str) -> bool:
    return any(t.buffer == buffer and t.mode in modes for t in step.touches)


def _label(step: Step) -> str:
    loops = ", ".join(f"{k}={v}" for k, v in step.loops.items())
    return f"line {step.line} (step {step.index}{', ' + loops if loops else ''})"


def mark(explanation: Explanation) -> None:
    """Mark the step the first wrong element most likely went wrong at, and say why, from what the steps did:
    the last store of the element, then, among the block-local buffers it came from, a read past a tensor's
    edge, a value overwritten before anything read it, or a buffer added to before anything set it."""
    steps = explanation.steps
    target = explanation.target
    name, where = target["buffer"], _where(target["index"])
    writers = [s for s in steps if _touches(s, name, "write")]
    if not writers:
        explanation.why = f"this block never wrote {name}[{where}]"
        return
    store = writers[-1]
    explanation.marked = store.index
    chain = [t.buffer for t in store.touches if t.mode == "read" and t.scope != "global"]
    sentence = (
        f"{name}[{where}] = {target['got']:.5g} (expected {target['expected']:.5g}) was stored at {_label(store)}"
    )
    if chain:
        sentence += f" from {', '.join(sorted(set(chain)))}"
    before = [s for s in steps if s.index < store.index]
    seen: set[str] = set()
    suspects: list[tuple[int, Step, str]] = []  # (priority, step, sentence)
    while chain:
        buffer = chain.pop()
        if buffer in seen:
            continue
        seen.add(buffer)
        writes = [s for s in before if _touches(s, buffer, "write")]
        for step in writes:
            chain += [t.buffer for t in step.touches if t.mode == "read" and t.scope != "global"]
            # A tile read wholly past a tensor's edge (a tail's partial read is how tails work)
            zero = [
                t.buffer
                for t in step.touches
                if t.mode == "zero" and not any(r.buffer == t.buffer and r.mode == "read" for r in step.touches)
            ]
            if zero:
                suspects.append((0, step, f"{_label(step)} read only past the edge of {zero[0]}, which gives zeros"))
        suspects += _lost_writes(before, buffer, writes)
        if writes and _accumulates(writes[0], buffer):
            suspects.append((2, writes[0], f"{_label(writes[0])} added to {buffer} before any step had set it"))
    if suspects:
        suspects.sort(key=lambda s: (s[0], -s[1].index))
        _, step, because = suspects[0]
        explanation.marked = step.index
        sentence += f"; the likely cause: {because}"
    explanation.why = sentence


def _accumulates(step: Step, buffer: str) -> bool:
    """The step adds to ``buffer`` (reads it and writes it), as a reduce without clear or a gemm does."""
    return _touches(step, buffer, "write") and _touches(step, buffer, "read")


def _lost_writes(steps: list[Step], buffer: str, writes: list[Step]) -> list[tuple[int, Step, str]]:
    """Writes of ``buffer`` that a later step overwrote before any step read them: work thrown away."""
    found = []
    for first, second in zip(writes, writes[1:]):
        between = [s for s in steps if first.index < s.index <= second.index]
        read = any(_touches(s, buffer, "read") for s in between if s is not second)
        if not read and not _accumulates(second, buffer) and second.line == first.line:
            found.append(
                (1, second, f"{_label(second)} overwrote {buffer} before any step read what the step before wrote")
            )
    return found[-1:]
