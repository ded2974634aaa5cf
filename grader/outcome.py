"""What grading one case produced. Plain dataclasses that travel between processes as dicts."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

# What a terminal or a browser would obey rather than show: C0/C1 control characters but tab and newline
# (escape sequences, carriage return, backspace) and the bidirectional overrides that reorder a line.
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def plain(text: str) -> str:
    """``text`` without the characters that could make one line display as another (a forged PASS)."""
    return CONTROL.sub("", text)


class Status(StrEnum):
    """A case's verdict, from best to worst. A ``str``: it compares equal to its value ("passed"), and JSON
    and result files written before the enum read the same. "compiled" means TileLang accepted the kernel
    but nothing ran (no GPU); "setup" means the machine cannot grade (no compiler), not that the kernel is
    wrong."""

    PASSED = "passed"
    COMPILED = "compiled"
    FAILED = "failed"
    NOT_IMPLEMENTED = "not_implemented"
    ERROR = "error"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    NOT_RUN = "not_run"
    UNSUPPORTED = "unsupported"  # the CPU simulator cannot run a construct: no verdict on the numbers
    NOT_APPLICABLE = "not_applicable"  # no block parameters fit this GPU: neither passed nor failed
    SETUP = "setup"


# The verdicts a kernel passes with (not applicable: no block parameters fit this GPU).
GOOD = (Status.PASSED, Status.COMPILED, Status.NOT_APPLICABLE)


@dataclass
class Bench:
    kernel_ms: float
    torch_ms: float
    tflops: float | None = None
    gbps: float | None = None
    floor_ms: float | None = None  # the roofline: bytes at the measured copy bandwidth or flops at the peak
    bound: str = ""  # which of the two sets floor_ms: "memory" or "compute"
    others: dict[str, float] = field(default_factory=dict)  # further baselines (Kernel.baselines): name -> ms
    params: dict[str, int] = field(default_factory=dict)  # block parameters timed, where the learner chose them
    limits: str = ""  # how the floor's two limits were obtained on this GPU
    # The repetitions (--repeat): each figure above is their median; these are their [min, max] in ms
    repeats: int = 1
    kernel_range: tuple[float, float] | None = None
    torch_range: tuple[float, float] | None = None
    others_range: dict[str, tuple[float, float]] = field(default_factory=dict)
    gpu: dict[str, Any] = field(default_factory=dict)  # grader.pipeline.gpu_state.GpuState after the timings

    def __post_init__(self) -> None:
        # JSON brings the ranges back as lists
        self.kernel_range = tuple(self.kernel_range) if self.kernel_range else None
        self.torch_range = tuple(self.torch_range) if self.torch_range else None
        self.others_range = {name: tuple(pair) for name, pair in self.others_range.items()}

    @property
    def spread_percent(self) -> float | None:
        """The kernel's run-to-run spread: (max - min) / median, in percent."""
        if not self.kernel_range:
            return None
        return 100.0 * (self.kernel_range[1] - self.kernel_range[0]) / self.kernel_ms

    @property
    def within_spread(self) -> bool:
        """The kernel's and torch's ranges overlap: which of the two is faster is within run-to-run noise."""
        if not self.kernel_range or not self.torch_range:
            return False
        return self.kernel_range[0] <= self.torch_range[1] and self.torch_range[0] <= self.kernel_range[1]

    @property
    def roofline_percent(self) -> float | None:
        """The floor over the kernel's time, in percent: 100 is as fast as the hardware allows."""
        return 100.0 * self.floor_ms / self.kernel_ms if self.floor_ms else None

    @property
    def speedup(self) -> float:
        """Torch time over our time: above 1 means faster than torch."""
        return self.torch_ms / self.kernel_ms


@dataclass
class ProfileReport:
    """Why a kernel takes its time (``--profile KERNEL``), never part of a grade: the learner's kernel and the
    course's reference side by side, as figures keyed by name (grader.pipeline.profile.FIGURES), and the
    sentences of what to try that the figures lead to. ``mode`` "gpu": Nsight Compute's counters with the
    static estimate; "static": the estimate alone (no GPU, or --static)."""

    mode: str
    yours: dict[str, Any] = field(default_factory=dict)
    reference: dict[str, Any] = field(default_factory=dict)
    advice: list[str] = field(default_factory=list)
    problem: str = ""  # why the counters could not be read here, and how to enable them

    def __post_init__(self) -> None:
        self.advice = [plain(line) for line in self.advice]
        self.problem = plain(self.problem)


@dataclass
class Touch:
    """One buffer one step of ``--explain`` read or wrote.

    ``mode``: "read", "write", or "zero" (a read past a global tensor's edge, which gives zeros). Where the step
    touched whole boxes (a tile op's region), ``boxes`` lists them as [lo0, hi0, lo1, hi1, ...], half-open element
    indices clipped to the buffer; where it touched elements one by one (a T.Parallel store or load), ``mask`` is
    the touched elements of the whole buffer, row-major, as packed bits in base64 (grader.pipeline.explain)."""

    buffer: str
    scope: str  # "global", "shared", "shared.dyn", "local.fragment", "local", "local.var"
    shape: list[int]
    mode: str
    boxes: list[list[int]] = field(default_factory=list)
    mask: str = ""
    count: int = 0  # elements touched


@dataclass
class TileValues:
    """A block-local buffer's values right after a step wrote it: a 2-D view (a 1-D tile is one row, higher ranks
    fold their leading axes into rows), exact when it has at most MAX_CELLS per side, else each cell is the
    element of largest magnitude of its patch (``cell`` elements a side). None where an element was never
    written (the simulator starts every block-local buffer as NaN)."""

    buffer: str
    scope: str
    shape: list[int]
    values: list[list[float | None]]
    cell: list[int] = field(default_factory=lambda: [1, 1])  # rows, columns of the buffer per shown cell
    low: float | None = None
    high: float | None = None


@dataclass
class Step:
    """One tile operation (a T.copy, T.gemm, T.reduce_*, T.fill, ...) or one T.Parallel nest / store, as the
    block ran it, with the loop iterations it sits in (``loops``: variable -> value, outermost first)."""

    index: int
    line: int  # in the kernel's file; 0 where the TIR does not say
    source: str  # that line's text
    op: str  # "copy", "fill", "reduce", "gemm", "cumsum", "atomic_add", "parallel", "store"
    loops: dict[str, int] = field(default_factory=dict)
    touches: list[Touch] = field(default_factory=list)
    tiles: list[TileValues] = field(default_factory=list)


@dataclass
class Explanation:
    """``--explain KERNEL``: one block's steps in one case's simulation, and, for a failed case, the step the view
    opens at. Computed by the judge from the admitted TIR; never part of a verdict."""

    kernel: str
    case: str
    block: list[int]  # blockIdx (x, y, z as the grid has them)
    grid: list[int]
    steps: list[Step] = field(default_factory=list)
    marked: int = -1  # index of the step the view opens at (-1: the first)
    why: str = ""  # the sentence that says what the marked step did to the first wrong element
    target: dict[str, Any] = field(default_factory=dict)  # {"buffer", "index", "got", "expected"} of that element
    truncated: bool = False  # more steps ran than are kept (grader.pipeline.explain.MAX_STEPS)
    problem: str = ""  # why there is no view (not simulated, the block does not exist, ...)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Explanation:
        data = dict(data)
        steps = []
        for step in data.pop("steps", []):
            step = dict(step)
            touches = [Touch(**t) for t in step.pop("touches", [])]
            tiles = [TileValues(**t) for t in step.pop("tiles", [])]
            steps.append(Step(**step, touches=touches, tiles=tiles))
        return cls(**data, steps=steps)


class CauseKind(StrEnum):
    """Why a case did not pass, as the judge names it: one member per cause it tells apart from the evidence
    (the numbers' pattern, the TIR, the simulator, the process), never from its own sentences. What the
    cause's ``facts`` hold is said beside each member."""

    # The numbers (grader.pipeline.compare); every one of these facts has "output", and "tiles" where the
    # output is tiled: {"tile": [sizes], "wrong": tiles holding a wrong element, "total": tiles}
    WRONG_SHAPE = "wrong_shape"  # "shape", "expected"
    ZEROS = "zeros"  # every element 0
    UNDERFLOW = "underflow"  # every element 0 and the expected values tiny: "largest"
    NOTHING_WRITTEN = "nothing_written"  # every element still the NaN it starts as
    OVERFLOW = "overflow"  # infinite elements: "infinite"
    UNWRITTEN_END = "unwritten_end"  # the last "count" positions along "axis" never written: "in_tile" (a bound
    # one short inside a block that ran) or not
    UNCOVERED_TAIL = "uncovered_tail"  # only the partial edge tiles, never written: too few blocks
    UNGUARDED_TAIL = "unguarded_tail"  # only the partial edge tiles, wrong values: unguarded reads or writes
    UNWRITTEN = "unwritten"  # "count" elements never written, the rest right
    NAN_SPREAD = "nan_spread"  # "nan" NaN elements among "values" wrong ones: a buffer read before it was set
    IMPRECISE = "imprecise"  # small errors past the tolerance: "max_rel_error"
    CLAMP = "clamp"  # the wrong elements are a clamp's: "bound", "pattern" (missing, cut, wrong_side, misplaced)
    SHIFTED = "shifted"  # one error along runs of "run" elements of "axis": a term each run shares is wrong
    WRONG_VALUES = "wrong_values"  # none of the above: "wrong", "total", "most" (nearly every element)
    SIDE_EFFECT = "side_effect"  # stored to an input or past an output: "inputs_written", "outside_outputs"
    # Across a kernel's cases (grader.pipeline.across)
    SEVERAL_STEPS = "several_steps"  # "loop", "steps", "online", "passing" (the one-step cases that pass)
    LARGE_INPUTS = "large_inputs"  # "scales" (input -> factor), "passing" (the ordinary cases that pass)
    # The admitted TIR (grader.pipeline.checks, the puzzle's concepts)
    # (these ten have no facts: grader.pipeline.checks says them in sentences only)
    NEVER_INITIALIZED = "never_initialized"  # a buffer read or added into before anything sets it
    ADDED_NEVER_SET = "added_never_set"  # an output added into atomically that nothing zeroes first
    CORNER_COPY = "corner_copy"  # a tile copied from a corner where it should move with the loop
    ROUNDS_DOWN = "rounds_down"  # a grid or loop count that rounds a size down (N // BLOCK)
    REDUCE_RESTART = "reduce_restart"  # a reduction that clears what earlier tiles summed
    MASK_OFFSET = "mask_offset"  # a mask inside a tile loop that counts positions from 0 in every tile
    OVERWRITTEN = "overwritten"  # a buffer a loop overwrites (= for +=) or clears on every step and reads only
    # after it
    LOOP_SHORT = "loop_short"  # a loop one step short of a dimension it walks (T.serial(K - 1))
    TILE_STEP = "tile_step"  # a tile loop whose copies step by another length than their tile's
    REPEATED_UPDATE = "repeated_update"  # an element updated from itself in a T.Parallel over a variable its index
    # leaves out: each thread applies the update once per value of that variable it covers
    CONCEPT_MISS = "concept_miss"  # "wants", "instead" (None where the TIR names nothing)
    EMPTY_LAUNCH = "empty_launch"  # a grid extent of 0
    SHARED_MEMORY = "shared_memory"  # a block over the GPU's shared memory: "needed", "available" (bytes)
    # Running it
    RACE = "race"  # two blocks on one element: "buffer", "element", "first", "did_first", "second", "did_second"
    FAULT = "fault"  # the simulator stopped it (an index out of bounds, mismatched regions): "line"
    CRASHED = "crashed"  # "where": "gpu" (the launch failed; "warp_specialized") or "process" (the judge died)
    TIMED_OUT = "timed_out"  # "phase": tracing, compiling, simulating, running, starting, ...
    UNSUPPORTED = "unsupported"  # the CPU simulator cannot run a construct
    MISCOMPILED = "miscompiled"  # TileLang's CUDA does otherwise than the TIR (grader.pipeline.miscompiles):
    # "construct" ("moved_clear"), "buffer", "loop"
    # Building it
    NOT_IMPLEMENTED = "not_implemented"  # the stub's TODO is still there
    MISSING_KERNEL = "missing_kernel"  # no kernel under the stub's name: "renamed" (the likely one) or None
    NOT_A_KERNEL = "not_a_kernel"  # a plain Python function where a @tilelang.jit kernel belongs
    LOAD_ERROR = "load_error"  # the file (or a notebook cell defining the kernel) failed to run
    REFUSED = "refused"  # admission turned the TIR or its compile options away (grader.pipeline.admit)
    SIGNATURE = "signature"  # the kernel's tensors are not the puzzle's (names, order, shapes, dtypes)
    BUILD_ERROR = "build_error"  # TileLang or nvcc rejected it: "location"
    # Not the kernel's doing
    NOT_RUN = "not_run"  # an earlier case of the kernel crashed or timed out
    NOT_APPLICABLE = "not_applicable"  # "reason": "unfit" (no block parameters fit) or "shared_memory"
    COMPILE_ONLY = "compile_only"  # "reason": "no_gpu" or "too_large" (to simulate)
    SETUP = "setup"  # this machine cannot grade
    OUT_OF_MEMORY = "out_of_memory"
    INTERNAL_ERROR = "internal_error"  # a grader bug


@dataclass
class Cause:
    """A typed reason for a verdict: what kind of cause and the facts that name it (JSON-able values only:
    str, int, float, bool, None, and lists and dicts of them). The learner reads the hint; the instructor's
    class report counts these."""

    kind: CauseKind
    facts: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kind = CauseKind(self.kind)
        self.facts = _plain_facts(self.facts)


def _plain_facts(value: Any) -> Any:
    """Facts with every string made plain (a fact may hold a name or a location the learner's file chose)."""
    if isinstance(value, str):
        return plain(value)
    if isinstance(value, dict):
        return {plain(str(k)): _plain_facts(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_facts(v) for v in value]
    return value


@dataclass
class Structure:
    """The shape of a kernel's admitted TIR, for finding look-alike submissions (grader.pipeline.structure):
    a bottom-k MinHash sketch (sorted ints below 2**63) of the token 5-gram shingles of the TIR printed as
    TVMScript for ``case``, the kernel's first public case, with every name the judge's own. ``tokens``: how
    many tokens that text has."""

    sketch: list[int]
    tokens: int
    case: str


@dataclass
class CaseResult:
    puzzle: str
    kernel: str
    case: str
    status: Status
    sizes: dict[str, int]
    message: str = ""
    file: str = ""  # the graded source file
    details: list[str] = field(default_factory=list)
    hint: str = ""
    trace: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    wrong: int | None = None
    total: int | None = None
    seconds: float = 0.0
    bench: Bench | None = None
    # The first wrong output's tiles: {"output": name, "tile": [...], "wrong": [[0/1, ...], ...], ...}
    tile_map: dict[str, Any] | None = None
    saved: str = ""  # --save-failures: the file holding this case's inputs and outputs
    replay: str = ""  # the command that grades this one case again on the same inputs
    # Where it ran, so how its numbers were checked (grader.verified): "gpu" ran on a GPU, "simulated" on the
    # CPU simulator, "compiled" only compiled (numbers not compared); "" none of these (it did not build, say).
    # The message never says it: the renderer (grader.frontends.render) writes "simulated on CPU: " from it.
    checked: str = ""
    arch: str = ""  # what it was compiled for ("sm_90a"), where the pipeline got that far
    profile: ProfileReport | None = None  # --profile: why it takes its time (no part of the verdict)
    explanation: Explanation | None = None  # --explain: one block's steps in the simulator (no part of the verdict)
    cause: Cause | None = None  # why it did not pass, typed (None where it passed, or nothing was named)
    structure: Structure | None = None  # on the kernel's first public case only: its admitted TIR's sketch

    def __post_init__(self) -> None:
        self.status = Status(self.status)
        # Every text here may carry what the learner's file wrote (an exception's message, a name, a line).
        for name in ("kernel", "case", "message", "file", "hint", "trace", "saved", "replay", "checked", "arch"):
            setattr(self, name, plain(getattr(self, name)))
        self.details = [plain(line) for line in self.details]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CaseResult:
        data = dict(data)
        bench = data.pop("bench", None)
        profile = data.pop("profile", None)
        explanation = data.pop("explanation", None)
        cause = data.pop("cause", None)
        structure = data.pop("structure", None)
        return cls(
            **data,
            bench=Bench(**bench) if bench else None,
            profile=ProfileReport(**profile) if profile else None,
            explanation=Explanation.from_dict(explanation) if explanation else None,
            cause=Cause(**cause) if cause else None,
            structure=Structure(**structure) if structure else None,
        )
