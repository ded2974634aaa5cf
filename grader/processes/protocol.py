"""What the judge process and the supervisor say to each other, as types.

On the wire each message is a plain dict with an ``"event"`` key (multiprocessing pickles it); ``encode`` and
``decode`` are the only places that know the dict's keys. In order:

    judge -> Described (or Fatal)            the device, the puzzle's kernels and cases
    supervisor -> Plan                       which cases to grade, kernel by kernel
    judge -> CaseStart, Phase, Alive ...      what the case in flight is doing (the supervisor's clocks)
    judge -> Timings                         where the seconds before the first verdict went
    judge -> Result per case, then Done

A CUDA fault poisons the judge's context, so after a crash it reports and exits, and the supervisor starts a
fresh judge for the next kernel.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from grader.outcome import CaseResult

# What the case in flight is doing (Phase). The grader's own work has --compile-timeout; the learner's code
# (importing the file, tracing it, simulating or running the kernel) has --timeout.
STARTING, TRACING, COMPILING, SIMULATING, RUNNING = "starting", "tracing", "compiling", "simulating", "running"
PROFILING = "profiling"  # --profile: the course's kernel built and both run under Nsight Compute (no learner code)
# --explain: the case simulated again, up to three times, recording one block (learner TIR: --timeout)
EXPLAINING = "explaining"
GRADER_PHASES = (STARTING, COMPILING, PROFILING)


@dataclass
class Fatal:
    """The judge cannot grade at all (no TileLang, a broken spec, the sandbox refused): one sentence."""

    message: str


@dataclass
class Described:
    device: str
    mode: str  # "cuda", "cpu" (simulated) or "compile"
    puzzle: dict[str, Any]  # the canonical kernels and cases (judge._describe)
    arch: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    isolation: str = ""  # "" when the tracer runs in the sandbox, else the sentence that says it does not


@dataclass
class Plan:
    plan: list[tuple[str, list[str]]]  # (kernel, [case, ...]) in the order to grade them


@dataclass
class CaseStart:
    kernel: str
    case: str


@dataclass
class Phase:
    phase: str  # one of the phases above


@dataclass
class Alive:
    """The judge traced one more case: the supervisor's clock starts again."""


@dataclass
class Timings:
    timings: dict[str, float]


@dataclass
class Result:
    result: CaseResult


@dataclass
class Done:
    pass


Message = Fatal | Described | Plan | CaseStart | Phase | Alive | Timings | Result | Done
EVENTS: dict[str, type] = {
    "fatal": Fatal,
    "described": Described,
    "plan": Plan,
    "case_start": CaseStart,
    "phase": Phase,
    "alive": Alive,
    "timings": Timings,
    "result": Result,
    "done": Done,
}
NAMES = {kind: name for name, kind in EVENTS.items()}


def encode(message: Message) -> dict[str, Any]:
    """The dict that goes over the pipe."""
    if isinstance(message, Result):
        return {"event": "result", "result": message.result.to_dict()}
    return {"event": NAMES[type(message)], **asdict(message)}


def decode(data: dict[str, Any]) -> Message:
    """The message a dict from the pipe stands for; ValueError for anything else."""
    if not isinstance(data, dict) or data.get("event") not in EVENTS:
        raise ValueError(f"not a message of the grader's protocol: {str(data)[:100]}")
    kind = EVENTS[data["event"]]
    try:
        if kind is Result:
            return Result(CaseResult.from_dict(data["result"]))
        known = {f.name for f in fields(kind)}
        return kind(**{k: v for k, v in data.items() if k in known})
    except (KeyError, TypeError, AttributeError) as error:  # an event without the fields it needs
        raise ValueError(f"not a message of the grader's protocol: {str(data)[:100]} ({error!r})") from None


class Channel:
    """One end of the pipe between the judge and the supervisor, speaking in messages."""

    def __init__(self, conn: Any):
        self.conn = conn

    def send(self, message: Message) -> None:
        self.conn.send(encode(message))

    def recv(self) -> Message:
        return decode(self.conn.recv())

    def recv_plan(self) -> list[tuple[str, list[str]]]:
        """The supervisor's Plan (the judge waits for nothing else)."""
        message = self.recv()
        if not isinstance(message, Plan):
            raise ValueError(f"expected the plan, got {type(message).__name__}")
        return message.plan

    def close(self) -> None:
        self.conn.close()
