"""The warm grader (grader.frontends.warm): the verdicts of a cold run, the isolation of a cold run, and the
--watch loop's choice of what to regrade."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.frontends.watch import changed, fingerprints
from tests.conftest import ROOT, GraderRun
from tests.test_attacks import EXPECTED, judged

WRONG_ADD = ROOT / "tests" / "wrong" / "p02"


def _verdicts(run) -> list[tuple[str, str, str]]:
    return [(r["kernel"], r["case"], r["status"], r["message"]) for r in run.doc["results"]]


@pytest.mark.parametrize("source", ["solution", "wrong"])
def test_a_warm_check_gives_the_verdicts_of_a_cold_one(grade, warm_grade, source):
    if source == "solution":
        args = ("02", "--solutions", "-k", "add", "--exact")
    else:
        wrong = sorted(WRONG_ADD.glob("add_*.py"))[0]
        args = ("02", "--file", str(wrong), "-k", "add", "--exact")
    cold, warm = grade(*args), warm_grade(*args)
    assert cold.code == warm.code
    assert _verdicts(cold) == _verdicts(warm)
    assert [line for line in cold.out.splitlines() if line.startswith("  ")] == [
        line for line in warm.out.splitlines() if line.startswith("  ")
    ]


@pytest.mark.gpu
@pytest.mark.parametrize("source", ["solution", "wrong"])
def test_a_warm_check_on_the_gpu_gives_the_verdicts_of_a_cold_one(grade, warm_grade, source):
    """Forked checks must find the CUDA driver untouched: TileLang's import-time is_available() once
    initialised it in the server, and every warm judge on the H200 died at its first CUDA call."""
    pytest.importorskip("torch").cuda.is_available() or pytest.skip("needs a CUDA GPU")
    if source == "solution":
        args = ("02", "--solutions", "-k", "add", "--exact", "--device", "cuda")
    else:
        wrong = sorted(WRONG_ADD.glob("add_*.py"))[0]
        args = ("02", "--file", str(wrong), "-k", "add", "--exact", "--device", "cuda")
    cold, warm = grade(*args), warm_grade(*args)
    assert cold.code == warm.code, warm.out[-2000:]
    assert _verdicts(cold) == _verdicts(warm)
    assert "the grading process exited" not in warm.out


# The attacks whose defence is different when the check is warm. A warm check forks: the server forks the
# check, the check forks the judge (grader.processes.supervisor), the judge forks the tracer
# (grader.processes.tracing.ForkedTracer), where the cold path starts each as a new interpreter (the tracer
# through `python -m grader.processes.sandbox ... -- python -m grader.trace.tracer`). So what differs warm is
# how the tracer is made: the environment scrubbed in place (os.environ.clear) instead of Popen(env=), the
# descriptors closed by closerange and dup2 instead of pass_fds, the sandbox entered in the forked child
# instead of by a launcher that execs, setsid and the limits in the child, memory that is a copy of the
# judge's (grader and TileLang already imported), and processes whose /proc entries are forks of the server.
# Each attack kept here exercises one of those; tests/test_attacks.py runs every attack cold.
WARM_ATTACKS = {
    # descriptors: fds 1 and 2 dup2'd to the tracer's output file (the check's own fd 1 is the client's socket)
    "forge_stdout.py": "fds 1 and 2 of a forked tracer",
    # descriptors: the reply pipe is dup2'd to fd 3 and every other fd closed in the child, not passed by Popen
    "forge_reply.py": "the reply descriptor of a forked tracer",
    # descriptors: the tracer's death is seen as EOF on the reply pipe, only if no other fork holds its write end
    "exit_while_tracing.py": "EOF on the reply pipe after a fork",
    # sandbox entry and process groups: its ancestors are forks of the server, its daemon setsid()s from a fork
    "forge_json.py": "ancestors' command lines, a daemon from a forked tracer",
    # process groups and signals: children and a new session forked from a forked tracer, killed at the limit
    "fork_at_import.py": "a forked tracer's group and session killed at the time limit",
    # signals: the judge it kills is a fork of the check (multiprocessing's fork context), not a spawned one
    "kill_the_judge.py": "killing a forked judge",
    # environment scrubbing: os.environ cleared and refilled in the forked child
    "read_hidden_cases.py": "the environment scrubbed in place",
    # environment scrubbing and the pid namespace: /proc/PID/environ of forked processes is the server's start-up one
    "hidden_cases_from_proc.py": "/proc of forked processes",
    # environment scrubbing: CUDA_VISIBLE_DEVICES set in place, in a child of a server that imported torch
    "gpu_from_the_tracer.py": "the GPU hidden in a forked child",
    # sandbox entry: the network namespace entered by sandbox.enter in the forked child
    "phone_home.py": "the network namespace entered after fork",
    # cache poisoning: the read-only filesystem entered after fork (the cache's path comes from the request)
    "plant_in_cache.py": "the compile cache read-only after fork",
    # bytecode poisoning: a warm judge imported grader.pipeline.compare before tracing, a cold one after
    "poison_bytecode.py": "bytecode while the judge's modules are already imported",
    # memory copied by fork: the tracer's sys.modules is a copy of the judge's, with the grader imported
    "patch_sys_modules.py": "sys.modules copied from the judge",
    # memory copied by fork: linecache held the course's solutions/ file, whose kernel it traced as its own
    "solution_from_memory.py": "the judge's linecache copied by fork",
    # memory copied by fork: TVM's registry and tilelang.compile are the judge's, copied; TILELANG_* set in place
    "patch_tvm_in_tracer.py": "TVM state copied from the judge",
}
# The others add nothing warm: their defence is in code that runs after the tracer's reply, the same on
# both paths (grader.pipeline.admit refuses call_host_function, unsafe_compile_options, extern_name_injection,
# import_source and disable_barriers; the run and the comparison fail baked_answer and print_from_the_gpu;
# the renderer escapes forge_pass_line), or a kept attack covers their defence: patch_compare and patch_judge
# patch modules as patch_sys_modules does, sleep_at_import times out as fork_at_import does, exit_at_import
# ends as exit_while_tracing does, and link_in_cache and tamper_cache_in_place meet the read-only cache that
# plant_in_cache meets (their own defence, the cache guard, runs only unconfined, which is cold-only here).


def test_every_warm_attack_is_an_attack():
    assert set(WARM_ATTACKS) <= set(EXPECTED)


@pytest.mark.parametrize("name", sorted(WARM_ATTACKS))
def test_attack_fails_through_the_warm_grader(attack_warm_grade, name, tmp_path, attack_cache):
    judged(attack_warm_grade, name, "cpu", tmp_path, attack_cache, stderr_apart=False)


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(WARM_ATTACKS))
def test_attack_fails_through_the_warm_grader_on_the_gpu(attack_warm_grade, name, tmp_path, attack_cache):
    judged(attack_warm_grade, name, "cuda", tmp_path, attack_cache, stderr_apart=False)


LOOK_AROUND = """
import os, json, re, sys
from pathlib import Path

SYSTEM = {{"bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "run", "sbin", "tmp", "usr"}}
# Python's own folders may sit in /tmp (the GPU host's bundle of TileLang, /tmp/site): they are shown, read-only
ON_PATH = re.compile("|".join(re.escape(p.rstrip("/") + "/") for p in sys.path if p.startswith("/tmp/")) or "^$")
raise RuntimeError("SEEN " + json.dumps({{
    "root": sorted(p.name for p in Path("/").iterdir() if p.name not in SYSTEM),
    "tmp": [p.name for p in Path("/tmp").rglob("*") if p.is_file() and not ON_PATH.match(str(p))],
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "env": sorted(n for n in os.environ if n.startswith("TILELANG_COURSE_") or n == "GITHUB_TOKEN"),
    "processes": sorted(int(p.name) for p in Path("/proc").glob("[0-9]*")),
    "hidden": Path({hidden!r}).read_text() if Path({hidden!r}).exists() else None,
    "socket_folder": [p.name for p in Path({socket!r}).iterdir()] if Path({socket!r}).exists() else None,
}}))
""" + (ROOT / "tests" / "attacks" / "patch_compare.py").read_text().split('"""', 2)[2]


def test_the_forked_tracer_is_sandboxed_and_holds_nothing_of_the_judge(warm_grade, warm_server, tmp_path):
    """What the tracer forked from a warm judge sees, sent back as its error line (the only way out)."""
    learner = tmp_path / "look_around.py"
    learner.write_text(LOOK_AROUND.format(hidden="/nonexistent", socket=str(Path(warm_server.path).parent)))
    env = {"GITHUB_TOKEN": "secret"}  # no hidden cases: with them the tracer is not forked (the test below)
    run = warm_grade("08", "--file", str(learner), "-k", "gemv", "--exact", "--case", "square_256", env=env)
    (result,) = run.results("gemv")
    seen = json.loads(result["message"].split("SEEN ", 1)[1])
    assert set(seen["fds"]) <= {0, 1, 2, 3, max(seen["fds"])}  # the listing's own descriptor is the last
    assert seen["env"] == []
    assert seen["processes"] == [1]  # no other process (the judge, the server, the notebook) can be seen
    assert seen["socket_folder"] is None  # nor is the warm server's socket
    # Of the host's root, the system's folders and those on the way to Python, the course's grader, the file and
    # the (empty) HOME
    on_the_way = {Path(sys.prefix).resolve(), ROOT.resolve(), Path.home(), learner.resolve()}
    assert set(seen["root"]) <= {part for path in on_the_way for part in path.parts[1:2]}
    # Of /tmp, only the folders on the way to the graded file and the tracer's work folder: no classmate's file
    # (the graded file is under /tmp unless $TMPDIR is elsewhere)
    assert seen["tmp"] == ([learner.name] if learner.resolve().is_relative_to("/tmp") else [])


READ_THE_JUDGE = """
import gc, json, sys
from pathlib import Path

cases = [
    (case.name, dict(case.sizes))
    for thing in gc.get_objects() if type(thing).__name__ == "Puzzle"
    for kernel in thing.kernels for case in kernel.cases
]
raise RuntimeError("SEEN " + json.dumps({{
    "cases": cases,
    "modules": sorted(n for n, m in sys.modules.items() if "solutions" in str(getattr(m, "__file__", "") or "")),
    "hidden": Path({hidden!r}).exists(),
}}))
""" + (ROOT / "tests" / "attacks" / "patch_compare.py").read_text().split('"""', 2)[2]


def test_with_hidden_cases_a_warm_check_traces_in_a_fresh_tracer_that_holds_none_of_the_judge(warm_grade, tmp_path):
    """A tracer forked from a warm judge holds the judge's memory: its puzzle, every case with its sizes, and the
    course's spec module (the red team walked the frames to ('hidden_1', {'M': 777, 'K': 333})). Where hidden
    cases are named, the tracer starts as a fresh interpreter instead."""
    hidden = tmp_path / "grading-machine" / "hidden.json"
    hidden.parent.mkdir()
    case = {"puzzle": "08", "kernel": "gemv", "sizes": {"M": 777, "K": 333}, "seed": 1, "simulate": True}
    hidden.write_text(json.dumps({"cases": [case]}))
    learner = tmp_path / "read_the_judge.py"
    learner.write_text(READ_THE_JUDGE.format(hidden=str(hidden)))
    env = {"TILELANG_COURSE_HIDDEN_CASES": str(hidden)}
    run = warm_grade("08", "--file", str(learner), "-k", "gemv", "--exact", "--case", "square_256", env=env)
    (result,) = run.results("gemv")
    seen = json.loads(result["message"].split("SEEN ", 1)[1])
    assert seen == {"cases": [], "modules": [], "hidden": False}, seen


def test_the_server_runs_nothing_for_a_client_without_its_secret(warm_server, tmp_path):
    """Whoever reaches the socket (another program of the user, a sandbox had it escaped) and asks for an unconfined
    check gets no answer and starts nothing: the secret reached the server only through its stdin."""
    import socket

    from grader.settings import GradeOptions, GradeRequest

    graded = tmp_path / "p02_mine.py"
    graded.write_text("")
    asked = GradeRequest((("02", str(graded)),), GradeOptions(no_sandbox=True, device="cpu"))
    forged = {"grade": asked.to_dict(), "env": {}, "cwd": str(tmp_path)}
    deadline = time.monotonic() + 60
    while not Path(warm_server.path).exists() and time.monotonic() < deadline:  # it binds once it has its secret
        time.sleep(0.05)
    for request in (forged, {**forged, "secret": "0" * 64}):
        read_end, write_end = os.pipe()
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.settimeout(30)
                client.connect(warm_server.path)
                data = json.dumps(request).encode() + b"\n"
                socket.send_fds(client, [data[:1]], [write_end])  # as the real client sends its results' pipe
                client.sendall(data[1:])
                assert client.recv(4096) == b""  # closed unanswered: no "warm pid=", no check
            os.close(write_end)
            write_end = -1
            assert os.read(read_end, 4096) == b""  # the server kept no copy of the pipe: nothing graded on it
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
    assert warm_server.alive()


def test_the_server_ends_with_the_session_that_started_it():
    from grader.frontends.warm import WarmGrader

    server = WarmGrader()
    assert server.alive()
    server.process.stdin.close()  # what the notebook's kernel dying does
    server.process.wait(timeout=60)
    assert not Path(server.path).exists()
    server.folder.cleanup()


KERNELS = ["add", "mul_relu"]
SOURCE = """import tilelang

@tilelang.jit
def add(A, B):
    return A

@tilelang.jit
def mul_relu(A, B):
    return B
"""


def test_watch_regrades_the_kernel_that_changed_and_all_when_the_rest_did():
    before = fingerprints(SOURCE, KERNELS)
    assert changed({}, before, KERNELS) == KERNELS
    assert changed(before, fingerprints(SOURCE, KERNELS), KERNELS) == []
    assert changed(before, fingerprints(SOURCE.replace("return B", "return A"), KERNELS), KERNELS) == ["mul_relu"]
    assert changed(before, fingerprints("import torch\n" + SOURCE, KERNELS), KERNELS) == KERNELS
    assert changed(before, fingerprints(SOURCE + "def broken(:\n", KERNELS), KERNELS) == KERNELS


P02 = ROOT / "solutions" / "p02_vector_add.py"
P02_KERNELS = ["add", "mul_relu", "add_fragments"]
GROWN = "    # a note the learner added\n\n    # and another\n"  # three lines more in mul_relu: the others move


def _grow_mul_relu(text: str) -> str:
    head, body = text.split("def mul_relu(", 1)
    first, rest = body.split("\n", 1)
    return f"{head}def mul_relu({first}\n{GROWN}{rest}"


def test_watch_regrades_only_the_kernel_that_grew_not_the_ones_it_moved():
    text = P02.read_text()
    before = fingerprints(text, P02_KERNELS)
    grown = _grow_mul_relu(text)
    assert grown.count("\n") == text.count("\n") + 3
    assert changed(before, fingerprints(grown, P02_KERNELS), P02_KERNELS) == ["mul_relu"]
    # lines added outside every kernel that change no code move the kernels too, and regrade none
    spaced = text.replace("\n@tilelang.jit\n", "\n# spacing\n\n@tilelang.jit\n")
    assert changed(before, fingerprints(spaced, P02_KERNELS), P02_KERNELS) == []


class _FakeWarm:
    """What the --watch loop asks of the warm grader, recorded: the kernels of each regrade."""

    asked: list[str] = []

    def alive(self):
        return True

    def run(self, request, env, cwd, timeout, results_fd):
        from grader.frontends.warm import WarmRun

        assert request.options.kernels_exact and not request.options.quiet  # the check prints its verdict lines
        self.asked.append(request.options.kernels)
        return WarmRun(0, "")

    def stop(self):
        pass


def test_the_watch_loop_regrades_the_kernel_whose_source_changed(tmp_path, monkeypatch, capsys):
    from grader.frontends import watch

    learner = tmp_path / "mine.py"
    learner.write_text(P02.read_text())
    polls = []

    def poll(_seconds):  # each poll of the loop: the learner saves an edit once, then presses Ctrl-C
        polls.append(1)
        if len(polls) == 1:
            learner.write_text(_grow_mul_relu(learner.read_text()))
            stamp = learner.stat().st_mtime_ns + 1_000_000_000
            os.utime(learner, ns=(stamp, stamp))
        elif len(polls) == 3:
            raise KeyboardInterrupt

    _FakeWarm.asked = []
    monkeypatch.setattr("grader.frontends.warm.WarmGrader", _FakeWarm)
    monkeypatch.setattr(watch.time, "sleep", poll)
    from grader.settings import GradeOptions, GradeRequest

    request = GradeRequest((("02", str(learner)),), GradeOptions(device="cpu"))
    code = watch.watch(request, P02, P02_KERNELS)
    assert _FakeWarm.asked == ["add,mul_relu,add_fragments", "mul_relu"]
    assert code == 130 and capsys.readouterr().out.splitlines()[-1] == f"stopped watching {learner}"


def signal_state(pid: int) -> str:
    """What the kernel says of a process's signals and of each of its threads: which are blocked, pending, ignored
    and caught, and where each thread waits (for a watcher that did not stop at its Ctrl-C)."""
    lines = []
    for task in sorted(Path(f"/proc/{pid}/task").iterdir(), key=lambda p: int(p.name)):
        with contextlib.suppress(OSError):
            status = dict(line.split(":\t", 1) for line in (task / "status").read_text().splitlines() if ":\t" in line)
            wchan = (task / "wchan").read_text()
            fields = ("Name", "State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")
            lines.append(
                f"task {task.name}: "
                + ", ".join(f"{k} {status.get(k, '?').strip()}" for k in fields)
                + f", wchan {wchan}"
            )
    return "\n".join(lines)


def _sigint_blocked_and_ignored() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def test_ctrl_c_stops_watch_with_one_line_and_exit_code_130(tmp_path):
    learner = tmp_path / "mine.py"
    learner.write_text(P02.read_text())
    log = tmp_path / "watch.log"
    # ci32, ci33 and ci35 each saw this watcher finish the check under way and go on watching for 120 s after its
    # Ctrl-C; alone it passed. A watcher started with SIGINT blocked or ignored (both survive fork and exec) did
    # just that, so it is started so here: --watch now takes Ctrl-C back. Should it hang again, the worker's own
    # state and the watcher's signals as the kernel has them go into the failure's message.
    here = (
        f"this worker: SIGINT {signal.getsignal(signal.SIGINT)}, blocked {signal.pthread_sigmask(signal.SIG_BLOCK, [])}"
    )
    with log.open("w") as sink:
        watcher = subprocess.Popen(
            [sys.executable, "-m", "grader", "02", "--file", str(learner), "-k", "add", "--exact", "--watch"],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=_sigint_blocked_and_ignored,
        )
        code, state = None, ""
        try:
            _wait_for(log, "grading add", count=1, timeout=300)  # Ctrl-C while a check runs
            watcher.send_signal(signal.SIGINT)
            code = watcher.wait(timeout=120)
        except subprocess.TimeoutExpired:
            state = signal_state(watcher.pid)
        finally:
            if watcher.poll() is None:
                watcher.kill()
                watcher.wait()
    output = log.read_text()
    assert code == 130, f"{output}\n{here}\n{state}"
    assert output.splitlines()[-1] == f"stopped watching {learner}", output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output


def test_watch_prints_a_regrade_after_a_save(tmp_path):
    learner = tmp_path / "mine.py"
    learner.write_text((ROOT / "solutions" / "p02_vector_add.py").read_text())
    log = tmp_path / "watch.log"
    with log.open("w") as sink:
        watcher = subprocess.Popen(
            [sys.executable, "-m", "grader", "02", "--file", str(learner), "-k", "add", "--exact", "--watch"],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        try:
            _wait_for(log, "--- ", count=2, timeout=600)  # the first grading: one header, one footer
            text = learner.read_text().replace("        C[i] = A[i] + B[i]\n", "        C[i] = A[i] - B[i]\n")
            assert text != learner.read_text()
            learner.write_text(text)
            _wait_for(log, "--- ", count=4, timeout=600)
        finally:
            watcher.terminate()  # as a kill or a closed terminal would: its warm server and folder go too
            code = watcher.wait(timeout=60)
    output = log.read_text()
    assert code == 128 + signal.SIGTERM, output
    first, second = output.split("grading add")[1:3]
    assert "PASS  even_4096" in first
    assert "FAIL  even_4096" in second and "mul_relu" not in second


def _wait_for(log: Path, marker: str, count: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while log.read_text().count(marker) < count:
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.5)


def _asked(run: GraderRun) -> int:
    """How many cases the run's tracer traced (the rest came from the warm trace cache)."""
    return run.doc["runs"][0]["startup_seconds"]["tracer_asked"]


def test_an_unchanged_kernel_is_not_traced_again_when_warm(warm_grade, grade, tmp_path):
    learner = tmp_path / "mine.py"
    learner.write_text((ROOT / "solutions" / "p02_vector_add.py").read_text())
    args = ("02", "--file", str(learner), "-k", "add", "--exact")
    first, second = warm_grade(*args), warm_grade(*args)
    assert first.code == second.code == first.passed_code and _verdicts(first) == _verdicts(second)
    assert _asked(first) > 0 and _asked(second) == 0  # the second check found every trace cached
    learner.write_text(learner.read_text() + "\n# an edit\n")
    edited = warm_grade(*args)
    assert edited.code == edited.passed_code and _asked(edited) == _asked(first)
    assert _asked(grade(*args)) == _asked(first)  # a cold run never uses the cache


def _fake_server(delay_s: float, body: bytes):
    """One end of a socket pair; a thread answers on the other after ``delay_s``, as a warm server that is
    still importing answers a request waiting in its backlog: ``warm pid=N``, then ``body`` over 0.6 s."""
    import socket
    import threading

    client, server = socket.socketpair()

    def answer() -> None:
        # A check cut at its limit hangs up first: its broken pipe is what that test expects, not an error
        with contextlib.suppress(OSError), server:
            time.sleep(delay_s)
            server.sendall(b"warm pid=999999999\n")  # past any pid_max: killing its group finds nothing
            time.sleep(0.6)
            server.sendall(body)

    threading.Thread(target=answer, daemon=True).start()
    return client


def test_the_servers_warm_up_does_not_count_against_the_checks_time_limit():
    """A check sent while the server still imports torch and TileLang (the notebook's first check, right after
    %load_ext) has its whole limit once it is forked: 1.5 s of warm-up and 0.6 s of check fit a 1 s limit. Before,
    the limit ran from the request, and under CI's load a hang in 01 was cut before its case's verdict."""
    from grader.frontends.warm import EXIT_MARK, _collect

    started = time.monotonic()
    done = _collect(_fake_server(1.5, b"copy_serial passed\n" + EXIT_MARK + b"0"), started + 60, timeout=1.0)
    assert done.returncode == 0 and done.output == "copy_serial passed\n"
    assert time.monotonic() - started >= 2.0


def test_a_check_past_its_limit_is_cut_and_a_server_that_never_forks_by_the_start_limit():
    from grader.frontends.warm import EXIT_MARK, _collect

    started = time.monotonic()
    cut = _collect(_fake_server(0.0, b"late" + EXIT_MARK + b"0"), started + 60, timeout=0.3)
    assert cut.returncode is None and time.monotonic() - started < 0.6  # the check's limit, from the fork
    started = time.monotonic()
    never = _collect(_fake_server(30.0, b""), started + 0.5, timeout=60)
    assert never.returncode is None and time.monotonic() - started < 1.5  # the start limit, not the check's


FORGED_EVENTS = """
import os, json
passed = {{"puzzle": "08", "kernel": "gemv", "case": "square_256", "status": "passed", "sizes": {{}}}}
events = [{{"event": "graded", "result": passed}}, {{"event": "exited", "code": 0}}]
line = "".join(json.dumps(event) + "\\n" for event in events)
print(line, end="")  # the check's output (stdout, the warm connection)
for fd in range(3, 64):  # any descriptor the tracer might hold: the results' pipe, were it there
    try:
        os.write(fd, line.encode())
    except OSError:
        pass
"""


@pytest.mark.parametrize("warm", [False, True], ids=["cold", "warm"])
def test_results_come_back_only_on_their_own_pipe(warm: bool, warm_server):
    """A front end reads a check's results from a pipe only the grading process holds (grader.processes.stream): a
    kernel that prints the events of a passing check, and writes them to every descriptor it has, still fails."""
    from grader.outcome import Status
    from grader.processes import launch

    zeros = (ROOT / "tests" / "attacks" / "patch_compare.py").read_text().split('"""', 2)[2]
    module = FORGED_EVENTS.format() + zeros
    options = launch.check_options(["gemv"], 300.0, device="cpu", cases="square_256")
    run = launch.grade("08", module, options, 300.0, warm=warm_server if warm else None)
    assert run.returncode == 1, run.output
    # FAILED, or ERROR where the writes garbled the tracer's own reply descriptor: never the forged pass
    (result,) = run.results
    assert result.case == "square_256" and result.status in (Status.FAILED, Status.ERROR), result
