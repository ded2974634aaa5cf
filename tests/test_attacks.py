"""Attacks on the verdict (tests/attacks/): learner files that try to fake a pass, each graded through
`python -m grader` as a learner runs it. Every file's `gemv` writes zeros; whatever else the file does
(patch the grader, forge output, kill or fork processes, plant files or bytecode, read the hidden cases,
phone home), gemv must fail with a plain sentence and nothing on stderr, and nothing the file tried may
be left behind: no file written, no process alive, no connection made.

Each attack runs in the sandbox (grader.processes.sandbox), as every run does where the machine allows it.
The attacks whose only evidence is what they write also run with --no-sandbox, where the older
defences alone hold (the reaper, the compile-cache guard): that run shows each attack is live, so the
sandboxed run's "nothing happened" means something.

The CPU tests pass --device cpu and grade gemv's small simulated case; the gpu-marked test runs every
attack on the GPU (`python -m pytest -q -m gpu tests/test_attacks.py`).
"""

from __future__ import annotations

import ast
import contextlib
import ctypes
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from grader.outcome import Status
from tests.conftest import ROOT, GraderRun

ATTACKS = ROOT / "tests" / "attacks"
CASE = "square_256"  # gemv, simulated on the CPU
FAILING = {Status.FAILED, Status.ERROR, Status.TIMED_OUT, Status.CRASHED, Status.NOT_RUN}

# attack file -> (status gemv gets, a phrase its message must contain, or a tuple of phrases one of which it
# must), graded in the sandbox
EXPECTED = {
    "patch_compare.py": (Status.FAILED, "of 256 output elements wrong"),
    "patch_judge.py": (Status.FAILED, "of 256 output elements wrong"),
    "patch_sys_modules.py": (Status.FAILED, "of 256 output elements wrong"),
    "forge_stdout.py": (Status.FAILED, "of 256 output elements wrong"),
    # its forked child fails to write its pid and answers too: which of the two answers first decides the phrase
    # Its daemon, forked while the file is imported, fails to write its pid file (read-only) and its message
    # races the tracer's own on the reply pipe: an ERROR when it arrives first, else the kernel's zeros fail.
    "forge_json.py": (
        (Status.ERROR, Status.FAILED),
        ("No such file or directory", "Read-only file system", "the tracer answered another question")
        + ("of 256 output elements wrong",),
    ),
    "plant_in_cache.py": (Status.ERROR, "Read-only file system"),
    "layout_of_the_output.py": (Status.ERROR, "annotates the layout of a tile outside shared memory"),
    "layout_reads_memory.py": (Status.ERROR, "annotates a layout with BufferLoad in its indices"),
    "print_from_the_gpu.py": (Status.FAILED, "of 256 output elements wrong"),
    "exit_at_import.py": (Status.ERROR, "ended while importing the file"),
    "exit_while_tracing.py": (Status.ERROR, "ended while tracing `gemv`"),
    "read_hidden_cases.py": (Status.ERROR, "LEAKED hidden cases:  nothing"),
    "forge_reply.py": (Status.ERROR, "did not trace to a kernel the grader can read"),
    "call_host_function.py": (Status.ERROR, "calls the external function `system`"),
    "unsafe_compile_options.py": (Status.ERROR, "flag '-ccbin=/tmp/not-a-compiler'"),
    "sleep_at_import.py": (Status.TIMED_OUT, "the file's top level never finishes"),
    "fork_at_import.py": (Status.ERROR, "tilelang-course-attack-fork.pids'"),  # its folder is not in the sandbox
    # solutions/ is not in the sandbox; unconfined (below), the inputs' hash of the TIR still fails it
    "baked_answer.py": (Status.ERROR, "KeyError: '08'"),
    "link_in_cache.py": (Status.ERROR, "Read-only file system"),
    "tamper_cache_in_place.py": (Status.FAILED, "of 256 output elements wrong"),  # no cache in the sandbox
    "extern_name_injection.py": (Status.ERROR, "calls the external function `debug_print_msg(0), C[0] ="),
    "host_code_by_ffi_call.py": (Status.ERROR, "calls the operation 'tl.tvm_ffi_call_with_result', which is not one"),
    "import_source.py": (Status.ERROR, "imports source code (T.import_source, pragma_import_c)"),
    "patch_tvm_in_tracer.py": (Status.FAILED, "of 256 output elements wrong"),
    "disable_barriers.py": (Status.ERROR, "sets the pass config 'tl.disable_thread_storage_sync'"),
    "poison_bytecode.py": (Status.ERROR, "No such file or directory: '"),  # nor solutions/ to compile
    "kill_the_judge.py": (Status.FAILED, "of 256 output elements wrong"),
    "hidden_cases_from_proc.py": (Status.ERROR, "LEAKED: [] []"),
    "forge_pass_line.py": (Status.ERROR, "[32m  PASS  square_256"),
    "phone_home.py": (Status.FAILED, "of 256 output elements wrong"),
    "gpu_from_the_tracer.py": (Status.ERROR, "GPU seen by the tracer: "),
    "cpp_in_loop_var_name.py": (Status.FAILED, "of 256 output elements wrong"),
    "cpp_in_buffer_and_let_names.py": (Status.FAILED, "of 256 output elements wrong"),
    # What the sandbox's root leaves out (grader.processes.sandbox.readable_paths): none of these can be read
    "reference_from_git.py": (Status.FAILED, "of 256 output elements wrong"),
    "classmate_module.py": (Status.FAILED, "of 256 output elements wrong"),
    "path_socket.py": (Status.FAILED, "of 256 output elements wrong"),
    "cache_sizes.py": (Status.ERROR, "LEAKED cache entries: 0 []"),
    "session_keyring.py": (Status.ERROR, "LEAKED key: none"),
    "fill_the_disk.py": (Status.ERROR, ("MiB, then: No space left on device", "MiB, then: File too large")),
    # stopped by the cap on tasks where one applies (test_a_fork_bomb_costs_only_its_own_check), else by its bound
    "fork_bomb.py": (Status.ERROR, "importing the file failed: RuntimeError: forked "),
    "zero_the_reference.py": (Status.ERROR, "views one of its tensors at another offset, type or size"),
    "define_a_builtin.py": (Status.ERROR, "passes nvcc the flag '-DblockIdx=threadIdx'"),
    # its attack is on nbgrader's copy of a submission (test_a_submission_of_links_is_not_graded); here, zeros
    "nbgrader_links.py": (Status.FAILED, "of 256 output elements wrong"),
    # its attack is on nbgrader's exchange (test_collect_believes_nothing_a_student_forges_in_the_exchange); zeros
    "nbgrader_exchange.py": (Status.FAILED, "of 256 output elements wrong"),
    # its attack is on nbgrader validate (test_validate_runs_no_students_notebook_as_the_instructor); here, zeros
    "validate_as_instructor.py": (Status.FAILED, "of 256 output elements wrong"),
    # right in a simulator that converted floats to integers as x86 does; zeros on the GPU, whose cvt saturates
    "saturating_cast.py": (Status.FAILED, "of 256 output elements wrong"),
    # right where uint32 arithmetic did not wrap; on the GPU only C[0] is stored
    "unsigned_wrap.py": (Status.FAILED, "of 256 output elements wrong"),
    # no case of it is simulated on the CPU (the grader exits 3: no verdict); on the GPU its zeros fail
    # right where T.truncmod was floored; on the GPU one output in seven is stored
    "truncated_mod.py": (Status.FAILED, "of 256 output elements wrong"),
    # right where T.max(NaN, x) was NaN; on the GPU fmaxf returns x and C is zeros. No verdict on the CPU (exit 3)
    "nan_max.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("T.max or T.min of NaN and a number", "of 256 output elements wrong"),
    ),
    # right where NaN != NaN held; the lowering folds the test away and the GPU stores zeros. No verdict on the CPU
    "nan_compared.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a comparison of NaN", "of 256 output elements wrong"),
    ),
    "flush_to_zero.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("the build option -ftz=true, which changes float arithmetic", "of 256 output elements wrong"),
    ),
    # right where an int32 nothing wrote read as 0; undefined on the GPU. No verdict on the CPU (exit 3)
    "uninitialised_int.py": (Status.UNSUPPORTED, "an integer read from memory the kernel allocated and nothing wrote"),
    # right where every lane's thread index was 0; on the GPU only thread 0 stores its sums
    "thread_index.py": ((Status.UNSUPPORTED, Status.FAILED), ("the thread index", "of 256 output elements wrong")),
    # right where the last lane's store to one shared element was kept; on the GPU any thread's may be
    "lanes_disagree.py": ((Status.UNSUPPORTED, Status.FAILED), ("lanes of one T.Parallel", "output elements wrong")),
    # warm, it traced the course's kernel from the judge's linecache (tests/test_warm.py); cold there is none: zeros
    "solution_from_memory.py": (Status.FAILED, "of 256 output elements wrong"),
    # right where int32 + wrapped; the lowering folds the overflowing test to false and the GPU stores zeros
    "signed_overflow.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("an overflow of int32", "of 256 output elements wrong"),
    ),
    # the same in int64
    "int64_overflow.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("an overflow of int64", "of 256 output elements wrong"),
    ),
    # right where int8 + wrapped; C computes it in int, the test is false and the GPU stores zeros
    "int8_overflow.py": ((Status.UNSUPPORTED, Status.FAILED), ("an int8 result outside int8", "output elements wrong")),
    # right where T.max(NaN, x) of fp16 was NaN; on the GPU __hmax returns x and most of C is zeros
    "fp16_max_nan.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("T.max or T.min of NaN and a number", "output elements wrong"),
    ),
    # right where an int local kept its first lane's value; on the GPU each thread keeps its own and most of C is 0
    "private_int_lane.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("an integer that the lanes of one T.Parallel left different", "output elements wrong"),
    ),
    # right where T.copy converted float32 to int32 as x86 does (INT_MIN); the GPU's cvt.rzi saturates (INT_MAX)
    "saturating_copy.py": (Status.FAILED, "of 256 output elements wrong"),
    # right where a float cast to int8 was clamped to 127; the GPU keeps the low byte of the int32 conversion
    "narrow_cast.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a float converted to int8 outside int8", "output elements wrong"),
    ),
    # right where an int8 T.gemm was multiplied in float32 (2^24 + 1 is 2^24 there); the GPU's int8 MMA is exact
    "integer_gemm.py": (Status.FAILED, "of 256 output elements wrong"),
    # right where a float32 T.gemm was multiplied in float32; the GPU's Tensor Cores read TF32 (10 mantissa bits)
    "tf32_gemm.py": (Status.FAILED, "of 256 output elements wrong"),
    # right where a 16-bit x * y - c was fused, as nvcc does by default; built with --fmad=false it is not
    "fmad_off.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("the build option --fmad=false, which changes float arithmetic", "of 256 output elements wrong"),
    ),
    # right where a float32 x * y + c was rounded twice; nvcc contracts it into one fma.rn.f32
    "fp32_fma.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a float multiply-add that nvcc may contract", "output elements wrong"),
    ),
    # the same with the product kept in a T.alloc_var first; nvcc contracts through the register too
    "fp32_fma_in_a_register.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a float multiply-add that nvcc may contract", "output elements wrong"),
    ),
    # in fp16: `q = x * x` then `q + p` was rounded twice, `x * x + p` once; the PTX of the two is the same
    "fp16_fma_in_a_register.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a float multiply-add that nvcc may contract", "output elements wrong"),
    ),
    # right where T.rsqrt(x) was torch's 1 / sqrt(x); the GPU's rsqrtf is rsqrt.approx.f32 (2 ulp) and C mostly zeros
    "approximate_rsqrt.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a math function the GPU computes approximately", "output elements wrong"),
    ),
    # right where T.exp(x) in float32 was exp in float64 rounded; the GPU's expf is within 2 ulp (ex2.approx.ftz)
    "approximate_exp.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a math function the GPU computes approximately", "output elements wrong"),
    ),
    # right where a float16 T.sigmoid was torch's float32 sigmoid rounded once; TileLang's is three float16 steps
    "approximate_sigmoid.py": (
        (Status.UNSUPPORTED, Status.FAILED),
        ("a math function the GPU computes approximately", "output elements wrong"),
    ),
}
# Run with --no-sandbox, each of these gets what it came for: evidence that the attack is live (test_..._live).
LIVE_UNCONFINED = {
    "baked_answer.py": (Status.FAILED, "output elements wrong"),
    "reference_from_git.py": (Status.PASSED, "max abs err"),
    "classmate_module.py": (Status.PASSED, "max abs err"),
    "session_keyring.py": (Status.ERROR, "LEAKED key: secret-token-in-the-keyring"),
    "cache_sizes.py": (Status.ERROR, "LEAKED cache entries: "),
}
# Run again with --no-sandbox, where what they write is the evidence that they ran: (status, phrase) there.
UNCONFINED = {
    "fork_at_import.py": (Status.TIMED_OUT, "the file's top level never finishes"),
    "forge_json.py": (Status.FAILED, "of 256 output elements wrong"),
    "plant_in_cache.py": (Status.FAILED, "of 256 output elements wrong"),
    "link_in_cache.py": (Status.FAILED, "of 256 output elements wrong"),
    "tamper_cache_in_place.py": (Status.FAILED, "of 256 output elements wrong"),
    "phone_home.py": (Status.FAILED, "of 256 output elements wrong"),
}
DAEMON_WATCH_S = 0.3
SLOW = {"sleep_at_import.py", "fork_at_import.py"}  # they run into the timeout: give it a short one
FORK_PIDS = "tilelang-course-attack-fork.pids"  # in the test's own folder, TILELANG_ATTACK_DIR
FORGE_PID = "tilelang-course-attack-forge-json.pid"
PLANTED = "tilelang-course-attack-planted.so"
LINK = "tilelang-course-attack-link"  # link_in_cache.py's symbolic link to a folder of its own
EXISTING = "tilelang-course-attack-existing.bin"  # in the cache before the run; tamper_cache_in_place.py edits it
ORIGINAL = b"a library the judge compiled earlier\n" * 64
PICKLE_RAN = "tilelang-course-attack-pickle-ran"  # kill_the_judge.py's payload, were a saved failure loaded
BYTECODE = [ROOT / "grader" / "pipeline" / "__pycache__", ROOT / "solutions" / "__pycache__"]


def test_every_attack_file_has_an_expectation():
    assert sorted(p.name for p in ATTACKS.glob("*.py")) == sorted(EXPECTED)


def attack(
    grade,
    name: str,
    device: str,
    folder: Path,
    cache: Path,
    hidden: Path | None = None,
    port: int = 0,
    confined: bool = True,
) -> GraderRun:
    extra = ["--timeout", "8"] if name in SLOW else []  # starting and compiling have --compile-timeout
    extra += [] if confined else ["--no-sandbox"]
    env = {"TILELANG_COURSE_HIDDEN_CASES": str(hidden)} if hidden else {}
    env["TILELANG_ATTACK_DIR"] = str(folder)
    env["TILELANG_ATTACK_PORT"] = str(port)
    # The judge's compile cache, the attacks' own (conftest's attack_cache), named to the attacks that tamper
    # with it: the tracer's own TILELANG_CACHE_DIR is a private folder, so they cannot find it from there.
    env["TILELANG_CACHE_DIR"] = env["TILELANG_ATTACK_CACHE"] = str(cache)
    env["GITHUB_TOKEN"] = "secret-token-the-tracer-must-not-see"
    chosen = ["-k", "gemv", "--exact", "--case", CASE, "--device", device, *extra]
    return grade("08", "--file", str(ATTACKS / name), *chosen, env=env)


class Listener:
    """A TCP server on this machine that counts the connections the attack makes."""

    def __init__(self) -> None:
        self.server = socket.create_server(("0.0.0.0", 0))
        self.server.settimeout(0.2)
        self.port, self.connections, self.running = self.server.getsockname()[1], 0, True
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.running:
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self.running = False
        self.thread.join()
        self.server.close()


class Planted:
    """What some attacks look for, put where they look: a classmate's right module in $TMPDIR (classmate_module.py),
    Unix sockets bound to paths in the test's folder, $TMPDIR and HOME (path_socket.py), a token in the session
    keyring (session_keyring.py). ``names``: what it put in the test's folder; ``connections``: accepted ones."""

    def __init__(self, name: str, folder: Path) -> None:
        self.names: list[str] = []
        self.paths: list[Path] = []
        self.servers: list[socket.socket] = []
        self.connections = 0
        if name == "classmate_module.py":
            classmate = Path(tempfile.mkdtemp(prefix="tilelang-course-check-"))
            (classmate / "p08_notebook.py").write_text((ROOT / "solutions" / "p08_matrix.py").read_text())
            self.paths.append(classmate)
        if name == "path_socket.py":
            spot = f"tilelang-course-attack-{os.getpid()}-{folder.name}.sock"
            for path in (folder / "grader.sock", Path(tempfile.gettempdir()) / spot, Path.home() / f".{spot}"):
                server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                server.bind(str(path))
                server.listen(8)
                server.setblocking(False)
                self.servers.append(server)
                self.paths.append(path)
            self.names.append("grader.sock")
        if name == "session_keyring.py":
            add_key(b"tilelang-course-attack", b"secret-token-in-the-keyring")

    def close(self) -> None:
        for server in self.servers:
            with contextlib.suppress(OSError):
                while True:
                    server.accept()[0].close()
                    self.connections += 1
            server.close()
        for path in self.paths:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def add_key(description: bytes, payload: bytes) -> None:
    """A "user" key in this process's session keyring, which the grader's processes inherit (add_key(2))."""
    libc = ctypes.CDLL(None, use_errno=True)
    number = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine)
    if number is None or libc.syscall(number, b"user", description, payload, len(payload), ctypes.c_int(-3)) < 0:
        pytest.skip(f"no session keyring here (errno {ctypes.get_errno()})")


def unchecked_bytecode() -> list[Path]:
    """.pyc files beside the course's sources that Python would load without checking them (PEP 552)."""
    found = []
    for folder in BYTECODE:
        for path in folder.glob("*.pyc") if folder.is_dir() else []:
            with path.open("rb") as handle:
                header = handle.read(8)
            if len(header) == 8 and int.from_bytes(header[4:8], "little") == 1:
                found.append(path)
    return found


def processes_running(path: Path, folder: Path) -> list[int]:
    """Live processes of this test's run of ``path``: the command line names the file (a cold tracer's does)
    and the environment names the test's folder (another test may grade the same file meanwhile)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            ours = f"TILELANG_ATTACK_DIR={folder}".encode() in (cmdline.parent / "environ").read_bytes().split(b"\0")
            if ours and str(path).encode() in cmdline.read_bytes() and alive(int(cmdline.parent.name)):
                found.append(int(cmdline.parent.name))
        except OSError:
            continue
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split(")")[1][:3]


def judged(
    grade, name: str, device: str, tmp_path: Path, cache: Path, stderr_apart: bool = True, confined: bool = True
) -> None:
    """``cache``: the judge's compile cache (conftest's attack_cache). ``stderr_apart``: the run's stderr is
    its own stream (a warm run sends both as one)."""
    hidden = tmp_path / "hidden.json"
    hidden.write_text('{"cases": [], "note": "the instructor\'s secret"}')
    fork_pids, forge_pid = tmp_path / FORK_PIDS, tmp_path / FORGE_PID
    if name == "tamper_cache_in_place.py":
        cache.mkdir(parents=True, exist_ok=True)
        (cache / EXISTING).write_bytes(ORIGINAL)
    listener = Listener()
    planted = Planted(name, tmp_path)
    try:
        run = attack(grade, name, device, tmp_path, cache, hidden, listener.port, confined)
        status, phrase = (EXPECTED if confined else UNCONFINED)[name]
        statuses = (status,) if isinstance(status, str) else status
        assert run.code in ((1, 3) if Status.UNSUPPORTED in statuses else (1,)), run.out + run.err  # 3: no verdict
        assert run.err == "" or not stderr_apart, run.err
        assert "Traceback" not in run.out, run.out
        assert run.doc is not None and run.doc.get("results"), "the JSON report is missing or forged"
        (result,) = run.results("gemv")
        assert result["status"] in ((status,) if isinstance(status, str) else status), result
        assert any(p in result["message"] for p in ((phrase,) if isinstance(phrase, str) else phrase)), result
        # forged verdict lines never reach the terminal: no line shows as a PASS
        assert not [line for line in run.out.splitlines() if line.lstrip().startswith("PASS")], run.out
        assert "\x1b" not in run.out and "\r" not in run.out and "\u202e" not in run.out, repr(run.out)
        assert "secret-token" not in run.out and "the instructor's secret" not in run.out
        assert ("not isolated" in run.out) == (not confined), run.out
        # A daemon, were one alive, would rewrite the report: forge_json.py's does ten times a second, so three of
        # its periods are enough to see it (a second per attack was 110 s of every CI run).
        time.sleep(DAEMON_WATCH_S)
        again = json.loads(run.json_path.read_text())
        rewritten = "the report was rewritten after the grader wrote it"
        assert [r["status"] for r in again["results"]] == [result["status"]], rewritten
    finally:
        listener.close()
        planted.close()
    if confined:
        made = sorted(p.name for p in tmp_path.iterdir() if p.name not in ("cache", *planted.names))
        assert made == sorted(["hidden.json", run.json_path.name]), made
        assert listener.connections == 0, "the learner's file reached a server on this machine"
        assert planted.connections == 0, "the learner's file reached a Unix socket of this machine"
        assert not unchecked_bytecode(), "unchecked bytecode was planted beside the course's sources"
        if stderr_apart:  # a cold tracer's command line names the file: none of its processes may be alive
            left = processes_running(ATTACKS / name, tmp_path)
            assert not left, "a process of the learner's file outlived the grader"
    if name == "phone_home.py" and not confined:
        assert listener.connections > 0, "the attack never reached the server"
    if name == "fork_at_import.py" and not confined:
        pids = [int(p) for p in fork_pids.read_text().split()] if fork_pids.exists() else []
        assert pids, "the attack never forked"
        assert not [p for p in pids if alive(p)], "a process the learner's file forked outlived the grader"
    if name == "forge_json.py" and not confined:
        assert forge_pid.exists() and not alive(int(forge_pid.read_text()))
    if name == "kill_the_judge.py":
        assert not (tmp_path / PICKLE_RAN).exists()
    if name == "gpu_from_the_tracer.py":
        assert " 0 device(s)" in result["message"] or "device(s)" not in result["message"], result["message"]
    if name == "plant_in_cache.py":
        assert not (cache / PLANTED).exists(), "a file planted in the compile cache survived"
    if name == "link_in_cache.py":
        assert (tmp_path / "tilelang-course-attack-planted-folder").is_dir() != confined, "the attack never ran"
        assert not (cache / LINK).is_symlink(), "a link planted in the compile cache survived"
    if name == "tamper_cache_in_place.py":
        existing = cache / EXISTING
        assert not existing.exists() or existing.read_bytes() == ORIGINAL, "a cache file edited in place survived"
        existing.unlink(missing_ok=True)
    return run


# The fork bomb is judged once, by test_a_fork_bomb_costs_only_its_own_check, with a classmate graded beside it:
# its 1,024 forks of a tracer are about 20 s of a CI worker, and a second run would check nothing more.
JUDGED_BESIDE_A_CLASSMATE = "fork_bomb.py"


# Attacks on the simulator's arithmetic: kernels whose numbers the simulator once got other than the GPU, and nothing
# that reaches past the judge (no import-time code, no file, process or environment touched). Their defence is in
# grader.pipeline.simulate, which the judge runs as tests.inprocess does (trace, simulate, compare), so on the CPU
# they are graded there, a tenth of a second each instead of a cold grader's five; on a GPU each goes through the
# command line (test_attack_fails_on_the_gpu), and the process boundary is the other attacks' to test.
ON_THE_SIMULATOR = frozenset({
    "fp16_max_nan.py", "int64_overflow.py", "int8_overflow.py", "lanes_disagree.py", "nan_compared.py", "nan_max.py",
    "private_int_lane.py", "saturating_cast.py", "signed_overflow.py", "thread_index.py", "truncated_mod.py",
    "uninitialised_int.py", "unsigned_wrap.py", "saturating_copy.py", "narrow_cast.py", "integer_gemm.py",
    "tf32_gemm.py", "fp32_fma.py", "fp32_fma_in_a_register.py", "fp16_fma_in_a_register.py", "approximate_rsqrt.py",
    "approximate_exp.py", "approximate_sigmoid.py",
})  # fmt: skip


def test_the_simulators_attacks_are_kernels_alone():
    """What ON_THE_SIMULATOR's promise rests on, read from each file: nothing runs at import but the imports, the
    decorated kernel and constants, and it names no module but tilelang's (no os, sys, subprocess, ctypes...)."""
    for name in sorted(ON_THE_SIMULATOR):
        tree = ast.parse((ATTACKS / name).read_text())
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert imported <= {"tilelang"}, (name, imported)
        kinds = {type(n).__name__ for n in tree.body}
        assert kinds <= {"Expr", "Import", "ImportFrom", "FunctionDef", "Assign"}, (name, kinds)
        calls = [n for n in tree.body if isinstance(n, ast.Expr) and not isinstance(n.value, ast.Constant)]
        assert not calls, (name, "a statement that runs at import")


@pytest.mark.parametrize("name", sorted(set(EXPECTED) - {JUDGED_BESIDE_A_CLASSMATE} - ON_THE_SIMULATOR))
def test_attack_fails_on_the_cpu(grade, name, tmp_path, attack_cache):
    judged(grade, name, "cpu", tmp_path, attack_cache)


@pytest.mark.parametrize("name", sorted(ON_THE_SIMULATOR))
def test_attack_on_the_simulators_arithmetic_gets_no_cpu_pass(name):
    from tests.inprocess import grade_simulated

    (result,) = grade_simulated("08", ATTACKS / name, "gemv", cases=[CASE])
    status, phrase = EXPECTED[name]
    assert result.status in ((status,) if isinstance(status, str) else status), result
    assert any(p in result.message for p in ((phrase,) if isinstance(phrase, str) else phrase)), result


@pytest.mark.parametrize("name", sorted(UNCONFINED))
def test_attack_fails_unconfined_on_the_cpu(grade, name, tmp_path, attack_cache):
    judged(grade, name, "cpu", tmp_path, attack_cache, confined=False)


@pytest.mark.parametrize("name", sorted(LIVE_UNCONFINED))
def test_attack_is_live_unconfined(grade, name, tmp_path, attack_cache):
    """Without the sandbox each of these gets what it came for, so its failing in the sandbox means something."""
    planted = Planted(name, tmp_path)
    try:
        if name == "cache_sizes.py":  # something in the judge's cache to find, as any earlier grading leaves
            attack_cache.mkdir(parents=True, exist_ok=True)
            (attack_cache / "entry-of-an-earlier-grading").write_text("{777: [128]}")
        run = attack(grade, name, "cpu", tmp_path, attack_cache, confined=False)
    finally:
        planted.close()
        (attack_cache / "entry-of-an-earlier-grading").unlink(missing_ok=True)
    (result,) = run.results("gemv")
    status, phrase = LIVE_UNCONFINED[name]
    assert result["status"] == status and phrase in result["message"], result
    if name == "cache_sizes.py":
        assert "LEAKED cache entries: 0 " not in result["message"], result


# What the GPU computes for these is undefined by construction (a value nothing wrote): it may pass there or not,
# and the CPU's refusal of a verdict is what their CPU test pins.
UNDEFINED_ON_THE_GPU = {"uninitialised_int.py", "lanes_disagree.py"}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(set(EXPECTED) - UNDEFINED_ON_THE_GPU))
def test_attack_fails_on_the_gpu(grade, name, tmp_path, attack_cache):
    judged(grade, name, "cuda", tmp_path, attack_cache)


def test_a_fork_bomb_costs_only_its_own_check(grade, tmp_path, attack_cache):
    """Everything test_attack_fails_on_the_cpu checks of an attack (judged), for the fork bomb; and the bomb stops
    at the sandbox's cap on tasks (where one applies: grader.processes.sandbox.task_cap), and a right gemv graded
    at the same moment still passes."""
    from grader.processes.sandbox import MAX_TASKS, task_cap

    classmate = Path(tempfile.mkdtemp(prefix="tilelang-course-classmate-"))  # judged() owns tmp_path
    try:
        report = classmate / "beside.json"
        beside = subprocess.Popen(
            [sys.executable, "-m", "grader", "08", "--solutions", "-k", "gemv", "--exact", "--case", CASE]
            + ["--device", "cpu", "--json", str(report)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        run = judged(grade, JUDGED_BESIDE_A_CLASSMATE, "cpu", tmp_path, attack_cache)
        assert beside.wait(timeout=600) == 0
        assert [r["status"] for r in json.loads(report.read_text())["results"]] == [Status.PASSED]
    finally:
        shutil.rmtree(classmate, ignore_errors=True)
    (result,) = run.results("gemv")
    forked = int(result["message"].split("forked ", 1)[1].split()[0])
    assert not processes_running(ATTACKS / "fork_bomb.py", tmp_path)
    if not task_cap():
        assert forked < MAX_TASKS and "Resource temporarily unavailable" in result["message"], result["message"]


def test_a_submission_of_links_is_not_graded(tmp_path):
    """nbgrader_links.py's plants in a student's submission, and a classmate's whole submission linked as another
    student's: JudgeChecks refuses both before it grades anything, and removes what nbgrader copied through the
    links into autograded/ (the hidden cases, the gradebook); a submission without links is graded as before."""
    pytest.importorskip("nbgrader")
    from traitlets.config import Config

    from grader.nbgrader.judge import JudgeChecks, LinkedSubmission
    from grader.outcome import CONTROL

    # the attack file's constants (literals), read without importing it and TileLang with it
    constants = {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse((ATTACKS / "nbgrader_links.py").read_text()).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }
    notebook, plants = constants["NOTEBOOK"], constants["PLANTS"]

    course = tmp_path / "course"
    (tmp_path / "grading-machine").mkdir()
    (tmp_path / "grading-machine" / "hidden_cases.json").write_text('{"cases": []}')
    (course / "source" / "ps1").mkdir(parents=True)
    (course / "source" / "ps1" / notebook).write_text("{}")
    (course / "gradebook.db").write_text("the gradebook")
    mallory = course / "submitted" / "mallory" / "ps1"
    mallory.mkdir(parents=True)
    for name, target in plants.items():
        (mallory / name).symlink_to(target)
        assert (mallory / name).exists(), name  # the plant reaches what it names
    # a link whose name is terminal escapes, for the instructor's log: named without them
    (mallory / "\x1b]0;PWNED\x07\x1b[2Jall kernels PASSED\u202e").symlink_to("notes.txt")
    alice = course / "submitted" / "alice" / "ps1"
    alice.mkdir(parents=True)
    (alice / notebook).write_text("{}")
    (course / "submitted" / "zed").mkdir()
    (course / "submitted" / "zed" / "ps1").symlink_to("../alice/ps1")
    for student in ("mallory", "alice", "zed"):  # what nbgrader's init_assignment copied, following the links
        copied = course / "autograded" / student / "ps1"
        copied.mkdir(parents=True)
        for name in ("notes.txt", "data.csv") if student == "mallory" else ("notes.txt",):
            (copied / name).write_text("copied through a link")
    config = Config()
    config.CourseDirectory.root = str(course)
    judge = JudgeChecks(config=config)

    def resources(student: str) -> dict:
        return {"nbgrader": {"student": student, "assignment": "ps1", "notebook": "p02_vector_add"}}

    hannah = course / "submitted" / "hannah" / "ps1"  # a tar extracted in the course's root: a hard link
    hannah.mkdir(parents=True)
    os.link(course / "gradebook.db", hannah / "data.csv")
    copied = course / "autograded" / "hannah" / "ps1"
    copied.mkdir(parents=True)
    (copied / "data.csv").write_text("copied through a link")
    for student in ("mallory", "zed", "hannah"):
        with pytest.raises(LinkedSubmission, match=f"{student}'s submission holds symbolic or hard links") as refused:
            judge.refuse_links(resources(student))
        assert not CONTROL.search(str(refused.value)), repr(refused.value)
        assert not [p for p in (course / "autograded" / student).rglob("*") if p.is_file()], student
    judge.refuse_links(resources("alice"))
    assert (course / "autograded" / "alice" / "ps1" / "notes.txt").is_file()


def test_collect_copies_a_submissions_links_as_links(tmp_path):
    """nbgrader_links.py's plants handed in through the exchange: the course's collect (its config names it) copies
    them into submitted/ as links, which autograde then refuses (test_a_submission_of_links_is_not_graded), and
    not as the files they point at; in a group-shared course it makes no linked file group-writable."""
    pytest.importorskip("nbgrader")
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config import Config

    from grader.nbgrader.course import Course, config_text
    from grader.nbgrader.exchange import LinkSafeCollect

    course = Course(tmp_path / "course", "ps1", ("02",), None, 60, tmp_path / "exchange", "tilelang-course")
    assert 'c.ExchangeFactory.collect = "grader.nbgrader.exchange.LinkSafeCollect"' in config_text(course)
    secret = tmp_path / "hidden_cases.json"
    secret.write_text('{"cases": []}')
    secret.chmod(0o600)
    inbound = tmp_path / "inbound" / "mallory+ps1+2026-12-05 04:00:00.000000 UTC+abc"
    inbound.mkdir(parents=True)
    (inbound / "p02_vector_add.ipynb").write_text("{}")
    (inbound / "notes.txt").symlink_to(secret)
    config = Config()
    config.CourseDirectory.root = str(tmp_path / "course")
    config.CourseDirectory.groupshared = True
    collect = LinkSafeCollect(coursedir=CourseDirectory(config=config), config=config)
    dest = tmp_path / "course" / "submitted" / "mallory" / "ps1"
    collect.do_copy(str(inbound), str(dest))
    assert (dest / "notes.txt").is_symlink() and os.readlink(dest / "notes.txt") == str(secret)
    assert (dest / "p02_vector_add.ipynb").read_text() == "{}" and not (dest / "p02_vector_add.ipynb").is_symlink()
    assert secret.stat().st_mode & 0o777 == 0o600, "collect changed the mode of a linked file"


def exchange_constants(name: str) -> dict:
    """An attack file's module-level constants (literals), read without importing it and TileLang with it."""
    return {
        node.targets[0].id: ast.literal_eval(node.value)
        for node in ast.parse((ATTACKS / name).read_text()).body
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)
    }


def collect_from_exchange(tmp_path: Path, safe: bool) -> tuple[Path, dict]:
    """nbgrader_exchange.py's three forgeries in an exchange beside an honest submission, collected by the course's
    collect (``safe``) or nbgrader's own: the forged time and name in ps1, the hard link in his submission of ps2,
    the linked folder as his submission of ps3.
    Submissions are made by this test's user, so the student "mallory" is that user."""
    import datetime
    import pwd

    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.collect import ExchangeCollect
    from traitlets.config import Config

    from grader.nbgrader.exchange import LinkSafeCollect

    plants = exchange_constants("nbgrader_exchange.py")
    me = pwd.getpwuid(os.getuid()).pw_name
    course, exchange = tmp_path / "course", tmp_path / "exchange"
    (course / "source" / "ps1").mkdir(parents=True)
    secret = tmp_path / "hidden_cases.json"
    secret.write_text('{"cases": [], "note": "the instructor\'s secret"}')
    inbound = exchange / "tilelang-course" / "inbound"
    inbound.mkdir(parents=True)
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")

    def hand_in(student: str, stated: str, tag: str, assignment: str = "ps1") -> Path:
        folder = inbound / f"{student}+{assignment}+{stated}+{tag}"
        folder.mkdir()
        (folder / plants["NOTEBOOK"]).write_text(f'{{"by": "{me}", "tag": "{tag}"}}')
        (folder / "timestamp.txt").write_text(stated)
        return folder

    linked = hand_in(me, now, "hard-link", "ps2")  # his own, with a hard link to the hidden cases
    (course / "source" / "ps3").mkdir()
    (course / "source" / "ps3" / plants["NOTEBOOK"]).write_text('{"by": "the instructor, with the solutions"}')
    (inbound / f"{me}+ps3+{now}+linked-folder").symlink_to(plants["LINKED_FOLDER"])
    assert (inbound / f"{me}+ps3+{now}+linked-folder" / plants["NOTEBOOK"]).is_file()
    os.link(secret, linked / plants["HARD_LINK"])
    hand_in(me, plants["FORGED_TIME"], "late")  # handed in now, stating a time before the due date
    alice = course / "submitted" / plants["IMPERSONATED"] / "ps1"  # collected earlier, her own
    alice.mkdir(parents=True)
    (alice / plants["NOTEBOOK"]).write_text('{"by": "alice"}')
    (alice / "timestamp.txt").write_text("2026-06-01 00:00:00.000000 UTC")
    hand_in(plants["IMPERSONATED"], now, "impersonated")  # owned by this user, not alice

    config = Config()
    config.CourseDirectory.root = str(course)
    config.CourseDirectory.course_id = "tilelang-course"
    config.CourseDirectory.assignment_id = "ps1"
    config.Exchange.root = str(exchange)
    config.Exchange.path_includes_course = True
    config.ExchangeCollect.update = True
    kind = LinkSafeCollect if safe else ExchangeCollect
    for assignment in ("ps1", "ps2", "ps3"):
        config.CourseDirectory.assignment_id = assignment
        kind(coursedir=CourseDirectory(config=config), config=config).start()
    return course / "submitted", plants


def test_collect_believes_nothing_a_student_forges_in_the_exchange(tmp_path):
    """nbgrader_exchange.py handed in: the course's collect leaves the hard-linked submission and the impersonation
    uncollected (alice's own submission stays) and records the time the late submission last changed, not the
    time it states; honest fields are kept (its notebook)."""
    pytest.importorskip("nbgrader")
    import datetime
    import pwd

    from nbgrader.utils import parse_utc

    submitted, plants = collect_from_exchange(tmp_path, safe=True)
    me = pwd.getpwuid(os.getuid()).pw_name
    assert not (submitted / me / "ps2").exists(), "a submission holding a hard link was collected"
    assert not (submitted / me / "ps3").exists(), "a linked submission folder was collected"
    assert "the instructor's secret" not in "".join(p.read_text() for p in submitted.rglob("*") if p.is_file())
    alice = submitted / plants["IMPERSONATED"] / "ps1"
    assert json.loads((alice / plants["NOTEBOOK"]).read_text()) == {"by": "alice"}, "alice's submission was replaced"
    late = submitted / me / "ps1"
    assert json.loads((late / plants["NOTEBOOK"]).read_text())["tag"] == "late"
    recorded = parse_utc((late / "timestamp.txt").read_text())
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs(recorded - now) < datetime.timedelta(minutes=5), f"the forged time was kept: {recorded}"


def test_nbgraders_own_collect_believes_the_forgeries(tmp_path):
    """The same exchange collected by nbgrader's own collect: each forgery gets what it came for, so the course's
    collect refusing them (above) means something."""
    pytest.importorskip("nbgrader")
    import pwd

    submitted, plants = collect_from_exchange(tmp_path, safe=False)
    me = pwd.getpwuid(os.getuid()).pw_name
    linked = submitted / me / "ps2" / plants["HARD_LINK"]
    assert "the instructor's secret" in linked.read_text()
    solutions = submitted / me / "ps3" / plants["NOTEBOOK"]
    assert not solutions.is_symlink() and "the solutions" in solutions.read_text()
    alice = submitted / plants["IMPERSONATED"] / "ps1"
    assert json.loads((alice / plants["NOTEBOOK"]).read_text())["tag"] == "impersonated"
    assert (submitted / me / "ps1" / "timestamp.txt").read_text() == plants["FORGED_TIME"]


def test_validate_runs_no_students_notebook_as_the_instructor(tmp_path):
    """validate_as_instructor.py's cell in a notebook under submitted/: the instructor's `nbgrader validate` in the
    course's folder, with the course's config, runs none of it and says why; the same notebook under source/ (the
    instructor's own) is run, which shows the cell works and validate runs it where it is allowed to."""
    pytest.importorskip("nbgrader")
    import nbformat

    from grader.nbgrader.course import main as make_course

    plants = exchange_constants("validate_as_instructor.py")
    course = tmp_path / "course"
    assert make_course([str(course), "--puzzles", "02", "--assignment", "ps1"]) == 0
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(plants["CELL"])])
    submitted = course / "submitted" / "mallory" / "ps1"
    submitted.mkdir(parents=True)
    nbformat.write(notebook, submitted / plants["NOTEBOOK"])
    nbformat.write(notebook, course / "source" / "ps1" / "mine.ipynb")
    marker = tmp_path / "ran-as-the-instructor"
    env = {**os.environ, "TILELANG_ATTACK_DIR": str(tmp_path)}

    def validate(path: Path) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "nbgrader", "validate", str(path.relative_to(course))]
        return subprocess.run(command, cwd=course, env=env, capture_output=True, text=True, timeout=300)

    refused = validate(submitted / plants["NOTEBOOK"])
    assert not marker.exists(), "the student's cell ran as the instructor"
    assert "would run the notebook in" in refused.stdout + refused.stderr, refused.stdout + refused.stderr
    validate(course / "source" / "ps1" / "mine.ipynb")
    assert marker.read_text() == str(course / "source" / "ps1"), "validate ran no notebook at all"
