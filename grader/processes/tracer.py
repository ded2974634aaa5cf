"""The judge's side of tracing: start the tracer, send it jobs, and admit only TIR that is safe to compile.

The tracer runs the learner's Python (grader.trace.tracer). This module gives it the least it needs
(no GPU, a scrubbed environment, a temporary working directory, limits on memory, file size and time,
its output captured where no verdict is read) and treats each reply as untrusted data: bounded in
size, parsed as JSON, its TVM node types on an allow-list, its names plain identifiers, no call to a
host function, options on an allow-list. ``admit`` is the one gate every traced kernel passes.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.discover import course_root
from grader.pipeline.build import BuildFailed, Signature, check_signature
from grader.processes import reaper, sandbox
from grader.processes.warm import WARM_ENV
from grader.spec import Case, Kernel

MAX_REPLY_BYTES = 32 * 2**20  # a traced 1024x1024-tile GEMM is well under 1 MiB of JSON
MAX_FILE_BYTES = 256 * 2**20  # what the tracer may write to any one file (its output included)

# Environment the tracer keeps; everything else (tokens, hidden-case paths, ...) is dropped.
KEPT_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX")
KEPT_ENV_PREFIXES = ("LC_", "CUDA_HOME", "CUDA_PATH", "TVM_", "TILELANG_")
DROPPED_ENV_PREFIXES = ("TILELANG_COURSE_",)

NODE_TYPE = re.compile(r"^(tirx|ir|relax)\.[A-Za-z.]+$|^(ffi\.(Array|Map|String|Shape)|int|float|bool|None)$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
STRING_VALUE = re.compile(r"^[A-Za-z0-9_.<>\[\]:, +*/%()=-]{0,200}$")  # printf labels, scopes, thread tags
HOST_CALL = re.compile(r"call_packed|call_cpacked|tvm_call_packed|tvm_call_cpacked|call_llvm|call_spirv|tvm_stack")
EXTERN_CALLS = ("tirx.call_extern", "tirx.call_pure_extern")
# What T.print emits (tilelang/cuda/language/print.py), by exact name: the generated CUDA prints a callee's
# name verbatim, so a name that only starts like these could go on with code of its own.
TILELANG_EXTERNS = frozenset({"debug_print_var", "debug_print_msg", "debug_print_buffer_value"})
KEPT_ATTRS = ("global_symbol", "tilelang_out_idx")
IMPORTED_SOURCE = ("pragma_import",)  # T.import_source's pragma_import_c (and _llvm): text pasted into the code
# Pass configs that change how a kernel is lowered, nothing else: none that takes nvcc flags or passes,
# or writes files (tl.device_compile_flags, tirx.add_lower_pass, tl.dump_ir_path, cuda.kernels_output_dir, ...),
# and none that makes the GPU run other than the TIR the simulator runs (tl.disable_thread_storage_sync drops
# the barriers TileLang puts between a shared store and the other threads' loads: a race no CPU case shows).
PASS_CONFIGS = frozenset(
    "tl.disable_warp_specialized tl.enable_auto_warp_specialization tl.enable_fast_math tl.ptxas_register_usage_level "
    "tl.config_index_bitwidth tl.disable_tma_lower tl.disable_vectorize_256 tl.enable_fp32x2_reduction "
    "tl.enable_async_copy tl.enable_lower_ldgstg tl.enable_lower_ldgstg_predicated tl.disable_wgmma "
    "tl.enable_aggressive_shared_memory_merge tl.disable_shared_memory_reuse tl.disable_shuffle_elect "
    "tl.disable_loop_unswitching tl.loop_unswitching_allow_non_trivial_else "
    "tl.force_let_inline tl.storage_rewrite_detect_inplace tl.disable_out_of_bound_warning tl.Simplify "
    "tirx.disable_cse_tir tirx.disable_storage_rewrite tirx.disable_vectorize tirx.use_async_copy "
    "tirx.merge_static_smem tirx.noalias tirx.Simplify".split()
)
FLAG = re.compile(
    r"^(-O[0-3]|--use_fast_math|-use_fast_math|-lineinfo|--extra-device-vectorization|-ftz=(true|false)"
    r"|--ftz=(true|false)|-prec-(div|sqrt)=(true|false)|--prec-(div|sqrt)=(true|false)|--fmad=(true|false)"
    r"|-fmad=(true|false)|-?-maxrregcount=\d+|-Xptxas=-v|--ptxas-options=-v|-D[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_]+)?)$"
)


class TracerGone(Exception):
    """The tracer gave no usable answer: ``status`` is the verdict (timed_out or error)."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def tracer_env(folder: Path) -> dict[str, str]:
    env = {
        name: value
        for name, value in os.environ.items()
        if (name in KEPT_ENV or name.startswith(KEPT_ENV_PREFIXES)) and not name.startswith(DROPPED_ENV_PREFIXES)
    }
    paths = [str(course_root()), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    env.update(
        CUDA_VISIBLE_DEVICES="",  # tracing needs no GPU
        PYTHONPATH=os.pathsep.join(paths),
        PYTHONDONTWRITEBYTECODE="1",
        TMPDIR=str(folder),
        # Its own compile cache in its private folder: TileLang makes its cache's folders at import, which the
        # sandbox's read-only filesystem refuses, and a tracer has nothing to compile or to take from the judge's.
        TILELANG_CACHE_DIR=str(Path(folder) / "tilelang-cache"),
        TILELANG_PRINT_ON_COMPILATION="0",
        PYTHONWARNINGS="ignore",
    )
    return env


def _limit_resources(memory_limit_gb: float) -> None:
    """Runs in the tracer between fork and exec: its own address-space and file-size limits."""
    import resource

    def lower(kind: int, value: int) -> None:
        soft, hard = resource.getrlimit(kind)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(kind, (value, value))

    if memory_limit_gb > 0:
        lower(resource.RLIMIT_AS, int(memory_limit_gb * 2**30))
    lower(resource.RLIMIT_FSIZE, MAX_FILE_BYTES)


class ForkedTracer:
    """The tracer forked from a warm judge (grader.processes.warm) rather than started as a new interpreter, with
    what the cold start gives it: its own session, the limits, a scrubbed environment, a temporary
    working directory, and no descriptor but its job pipe, its output file and its reply pipe. It is
    forked before the judge has loaded the puzzle's cases, so its memory holds none of them."""

    REPLY_FD = 3

    def __init__(self, pid: int, stdin: Any):
        self.pid, self.stdin, self.returncode = pid, stdin, None

    @classmethod
    def start(
        cls, source: Path, work: Path, reply_fd: int, output_fd: int, memory_limit_gb: float, hide: list[Path] | None
    ) -> ForkedTracer:
        """``hide`` not None: confined in the sandbox, which covers those paths (grader.processes.sandbox)."""
        jobs_read, jobs_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the tracer: never returns
            code = 1
            try:
                os.setsid()
                _limit_resources(memory_limit_gb)
                os.dup2(jobs_read, 0)
                os.dup2(output_fd, 1)
                os.dup2(output_fd, 2)
                os.dup2(reply_fd, cls.REPLY_FD)
                os.closerange(cls.REPLY_FD + 1, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 65536)
                if hide is not None:  # confined from here on; this process stays outside as the waiter
                    try:
                        sandbox.enter(work, hide)
                    except sandbox.Unavailable as error:
                        os.write(2, f"sandbox: {error}\n".encode())
                        code = sandbox.FAILED
                        raise
                os.chdir(work)
                environment = tracer_env(work)
                os.environ.clear()
                os.environ.update(environment)
                sys.stdin = os.fdopen(0, "r", encoding="utf-8", closefd=False)
                sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
                sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
                from grader.trace.tracer import main

                main([str(source.resolve()), str(cls.REPLY_FD)])
                code = 0
            finally:
                os._exit(code)
        os.close(jobs_read)
        return cls(pid, os.fdopen(jobs_write, "wb"))

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped already (kill_strays): it is gone, how is not known
                self.returncode = -signal.SIGKILL
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("tracer", timeout or 0)
            time.sleep(0.01)
        return self.returncode if self.returncode is not None else -9

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


@dataclass
class Tracer:
    """One tracer process for one learner file. ``ask`` sends a job and returns its reply."""

    source: Path
    memory_limit_gb: float
    folder: Any = None
    process: Any = None
    reply_fd: int = -1
    output: Any = None
    buffer: bytes = b""
    next_id: int = 0
    shown_limit: float = 0.0  # the --timeout a learner set, named in a hang's sentence (the wait is a bit less)
    confine: bool = True  # in the sandbox (grader.processes.sandbox); False only where the policy allows it unconfined

    def start(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="tilelang-course-trace-")
        work = Path(self.folder.name)
        read_end, write_end = os.pipe()
        self.output = tempfile.TemporaryFile()  # the tracer's stdout and stderr: never read as a verdict
        hide = sandbox.hidden_paths() if self.confine else None
        if os.environ.get(WARM_ENV):
            self.process = ForkedTracer.start(
                self.source, work, write_end, self.output.fileno(), self.memory_limit_gb, hide
            )
        else:
            command = [sys.executable, "-m", "grader.trace.tracer", str(self.source.resolve()), str(write_end)]
            if hide is not None:  # the launcher confines itself, then execs the tracer
                covered = [part for path in hide for part in ("--hide", str(path))]
                command = [sys.executable, "-m", "grader.processes.sandbox", str(work), *covered, "--", *command]
            self.process = subprocess.Popen(
                command,
                cwd=work,
                env=tracer_env(work),
                stdin=subprocess.PIPE,
                stdout=self.output,
                stderr=subprocess.STDOUT,
                pass_fds=(write_end,),
                start_new_session=True,  # one process group to kill, whatever it forks
                preexec_fn=lambda: _limit_resources(self.memory_limit_gb),
            )
        os.close(write_end)
        self.reply_fd = read_end

    def wait_loaded(self, timeout: float) -> tuple[str, str]:
        """(problem, trace) of importing the learner's file: ("", "") when it imported."""
        message = self._read(timeout, "while importing the file")
        if message.get("event") != "loaded":
            raise TracerGone("error", "the tracer gave an answer the grader does not understand")
        return _text(message.get("problem")), _text(message.get("trace"))

    def ask(self, kernel: Kernel, known: tuple[str, ...], arguments: dict[str, Any], timeout: float) -> dict:
        self.next_id += 1
        signature = Signature.of(kernel)
        job = {
            "id": self.next_id,
            "function": signature.function,
            "known": list(known),
            "tensors": list(signature.tensors),
            "blocks": list(signature.blocks),
            "outputs": list(signature.outputs),
            "arguments": arguments,
        }
        try:
            self.process.stdin.write((json.dumps(job) + "\n").encode())
            self.process.stdin.flush()
        except (BrokenPipeError, OSError):
            pass  # it died: _read says how
        reply = self._read(timeout, f"while tracing `{kernel.function}`")
        if reply.get("id") != self.next_id:
            raise TracerGone("error", "the tracer answered another question than the one asked")
        return reply

    def _read(self, timeout: float, when: str) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready = select.select([self.reply_fd], [], [], max(0.0, left))[0] if left > 0 else []
            if not ready:
                cause = (
                    "the file's top level never finishes (a loop, a sleep or input() at import): a puzzle file "
                    "only defines functions"
                    if "importing" in when
                    else "TileLang runs the kernel's Python body to build it, and something there never ends "
                    "(a Python loop or a sleep)"
                )
                limit = self.shown_limit or timeout
                raise TracerGone("timed_out", f"no answer within {limit:g} s {when}: {cause}")
            chunk = os.read(self.reply_fd, 1 << 20)
            if not chunk:
                raise TracerGone("error", self._death(when))
            self.buffer += chunk
            if len(self.buffer) > MAX_REPLY_BYTES:
                raise TracerGone("error", "the traced kernel is far larger than any this puzzle needs")
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            message = None
        if not isinstance(message, dict):
            raise TracerGone("error", "the tracer gave an answer the grader does not understand")
        return message

    def _death(self, when: str) -> str:
        try:
            code = self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        if code == sandbox.FAILED:
            return f"the grader could not make its sandbox {when}: {self._said('sandbox: ') or 'no reason given'}"
        if code is not None and code < 0:
            return (
                f"the process that reads your file was killed by signal {-code} {when}: most often it ran out of "
                "memory (look for a buffer or tensor far larger than the case needs)"
            )
        return (
            f"the process that reads your file ended {when} (exit code {code}): something in the graded file "
            "ended it (sys.exit, os._exit, quit, closing a file descriptor); a puzzle file only defines functions"
        )

    def _said(self, prefix: str) -> str:
        """The last line of the tracer's output that starts with ``prefix``, without it."""
        if self.output is None:
            return ""
        self.output.seek(0)
        lines = [line for line in self.output.read()[-65536:].decode(errors="replace").splitlines() if line]
        found = [line.removeprefix(prefix) for line in lines if line.startswith(prefix)]
        return found[-1][:500] if found else ""

    def stop(self) -> None:
        """Kill the tracer, everything it started, and every orphan it left to this process."""
        if self.process is not None:
            reaper.kill_group(self.process.pid)
            self.process.kill()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            try:
                self.process.stdin.close()
            except OSError:
                pass
            reaper.kill_strays()
        if self.reply_fd >= 0:
            os.close(self.reply_fd)
        if self.output is not None:
            self.output.close()
        if self.folder is not None:
            self.folder.cleanup()
        self.process, self.reply_fd, self.output, self.folder, self.buffer = None, -1, None, None, b""


def _text(value: Any, limit: int = 20000) -> str:
    return value[:limit] if isinstance(value, str) else ""


# ---------------------------------------------------------------------------------- admission


def refused(sentence: str) -> BuildFailed:
    return BuildFailed(sentence, "", "")


def load_tir(text: Any, kernel: Kernel) -> Any:
    """The PrimFunc in a tracer's reply, or BuildFailed: JSON of allowed TVM node types only."""
    from tilelang import tvm

    if not isinstance(text, str) or len(text) > MAX_REPLY_BYTES:
        raise refused(f"`{kernel.function}` did not trace to a kernel the grader can read")
    try:
        document = json.loads(text)
        types = {node.get("type") for node in document["nodes"]}
        root = document["nodes"][document["root_index"]]["type"]
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as error:
        raise refused(f"`{kernel.function}` did not trace to a kernel the grader can read") from error
    strange = sorted(str(t) for t in types if not (isinstance(t, str) and NODE_TYPE.match(t)))
    if root != "tirx.PrimFunc" or strange:
        what = f"objects of type {', '.join(strange[:3])}" if strange else f"a {root}"
        raise refused(f"`{kernel.function}` traced to {what}, which no TileLang kernel contains")
    try:
        tir = tvm.ir.load_json(text)
    except Exception as error:
        raise refused(f"`{kernel.function}` did not trace to a kernel the grader can read") from error
    if not isinstance(tir, tvm.tirx.PrimFunc):
        raise refused(f"`{kernel.function}` did not trace to a kernel")
    return tir


def unsafe_parts(tir: Any) -> list[str]:
    """Sentences for what the judge will not compile: host calls, odd names, unknown attributes."""
    from tilelang import tvm

    problems: list[str] = []

    def visit(node: Any) -> None:
        if isinstance(node, tvm.tirx.Call) and hasattr(node.op, "name"):
            name = str(node.op.name)
            if HOST_CALL.search(name):
                problems.append(f"calls a host function through {name.split('.')[-1]}")
            elif name in EXTERN_CALLS:
                callee = node.args[0].value if node.args and hasattr(node.args[0], "value") else "?"
                if str(callee) not in TILELANG_EXTERNS:
                    problems.append(f"calls the external function `{str(callee)[:60]}` (T.call_extern)")
        elif isinstance(node, tvm.tirx.Var) and not IDENTIFIER.match(str(node.name)):
            problems.append(f"has a variable named {str(node.name)[:40]!r}")
        elif isinstance(node, tvm.tirx.StringImm) and not STRING_VALUE.match(str(node.value)):
            problems.append(f"holds the string {str(node.value)[:40]!r}")
        elif isinstance(node, (tvm.tirx.BufferLoad, tvm.tirx.BufferStore)) and not IDENTIFIER.match(node.buffer.name):
            problems.append(f"has a buffer named {node.buffer.name[:40]!r}")
        elif isinstance(node, tvm.tirx.AttrStmt) and str(node.attr_key).startswith(IMPORTED_SOURCE):
            problems.append(f"imports source code ({node.attr_key})")
        # Annotations of blocks and loops are maps, not expressions: their strings are not StringImm nodes.
        for key, value in (getattr(node, "annotations", None) or {}).items():
            if str(key).startswith(IMPORTED_SOURCE):
                problems.append(f"imports source code (T.import_source, {key})")
            elif isinstance(value, str) and not STRING_VALUE.match(str(value)):
                problems.append(f"holds the string {str(value)[:40]!r} in the annotation {str(key)[:40]!r}")

    tvm.tirx.stmt_functor.post_order_visit(tir.body, visit)
    for buffer in tir.buffer_map.values():
        if not IDENTIFIER.match(str(buffer.name)):
            problems.append(f"has a tensor named {str(buffer.name)[:40]!r}")
    for key in tir.attrs.keys() if tir.attrs is not None else []:
        if str(key) not in KEPT_ATTRS:
            problems.append(f"sets the function attribute {str(key)!r}")
    return sorted(set(problems))


def admit(tir: Any, kernel: Kernel, case: Case) -> Any:
    """The TIR the judge compiles and simulates, or BuildFailed with one sentence."""
    problems = unsafe_parts(tir)
    if problems:
        raise refused(
            f"`{kernel.function}` {problems[0]}: the grader compiles only TileLang's own operations "
            "(T.print included), so remove it"
        )
    check_signature(tir, kernel, case)
    # The kernel's symbol is the puzzle's name, whatever the traced one says (it lands in generated C++);
    # outputs are passed in (poisoned) by the grader instead of allocated by TileLang.
    return tir.with_attr("global_symbol", kernel.function).without_attr("tilelang_out_idx")


def admit_options(options: Any, kernel: Kernel) -> dict[str, Any]:
    """The decorator's options the judge passes to tilelang.compile: known pass configs with plain
    values, and nvcc flags from an allow-list; anything else is refused with one sentence."""
    if not options:
        return {}
    if not isinstance(options, dict) or set(options) - {"pass_configs", "compile_flags"}:
        raise refused(f"`{kernel.function}` has @tilelang.jit options the grader does not pass on")
    admitted: dict[str, Any] = {}
    configs = options.get("pass_configs") or {}
    if configs:
        if not isinstance(configs, dict):
            raise refused(f"`{kernel.function}`'s pass_configs is not a dict")
        for key, value in configs.items():
            if key not in PASS_CONFIGS or not isinstance(value, (bool, int, float, str)) or len(str(value)) > 100:
                raise refused(
                    f"`{kernel.function}` sets the pass config {str(key)[:60]!r} = {str(value)[:40]!r}, which the "
                    "grader does not pass on (it takes PassConfigKey options that only change lowering, plain values)"
                )
        admitted["pass_configs"] = dict(configs)
    flags = options.get("compile_flags") or []
    if flags:
        if not isinstance(flags, list) or not all(isinstance(f, str) for f in flags):
            raise refused(f"`{kernel.function}`'s compile_flags is not a list of strings")
        for flag in flags:
            if not FLAG.match(flag):
                raise refused(
                    f"`{kernel.function}` passes nvcc the flag {flag[:60]!r}, which the grader does not pass on "
                    "(it takes -O, --use_fast_math, -lineinfo, -maxrregcount, -D and the precision flags)"
                )
        admitted["compile_flags"] = list(flags)
    return admitted
