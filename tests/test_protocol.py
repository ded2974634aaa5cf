"""The judge and the supervisor speak in typed messages (grader.processes.protocol): every message survives
the trip through a real pipe, and anything that is not one is refused rather than guessed at."""

import multiprocessing

import pytest

from grader import outcome
from grader.outcome import CaseResult, Status
from grader.processes.protocol import (
    EVENTS,
    Alive,
    CaseStart,
    Channel,
    Described,
    Done,
    Fatal,
    Phase,
    Plan,
    Result,
    Timings,
    decode,
    encode,
)

MESSAGES = [
    Fatal("TileLang cannot be imported"),
    Described("NVIDIA H200", "cuda", {"id": "02", "kernels": []}, "sm_90", {"device_s": 0.5}, ""),
    Plan([("add", ["tail_1000", "large_2p27"])]),
    CaseStart("add", "tail_1000"),
    Phase("compiling"),
    Alive(),
    Timings({"trace_s": 1.25}),
    Result(CaseResult("02", "add", "tail_1000", Status.FAILED, {"N": 1000}, "3 of 1000 wrong", checked="gpu")),
    Done(),
]


def test_every_kind_of_message_is_covered_here():
    assert {type(m) for m in MESSAGES} == set(EVENTS.values())


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_a_message_survives_a_real_pipe(message):
    here, there = multiprocessing.Pipe()
    Channel(there).send(message)
    got = Channel(here).recv()
    assert got == message
    if isinstance(got, Result):
        assert got.result.status is outcome.Status.FAILED and got.result.checked == "gpu"


@pytest.mark.parametrize("data", [{"plan": []}, {"event": "pass_everything"}, ["result"], None, {"event": 3}])
def test_what_is_not_a_message_is_refused(data):
    with pytest.raises(ValueError, match="not a message"):
        decode(data)


def test_the_wire_form_is_a_plain_dict_named_by_its_event():
    assert encode(CaseStart("add", "tail_1000")) == {"event": "case_start", "kernel": "add", "case": "tail_1000"}
    assert encode(Done()) == {"event": "done"}
