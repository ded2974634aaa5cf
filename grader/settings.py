"""Every setting of the grader, each declared once: the ``TILELANG_COURSE_*`` environment names, and the
table of grading options from which both front ends build their parsers.

``python -m grader`` (grader.frontends.cli) builds its argparse parser from ``OPTIONS``, and the pytest
plugin (grader.frontends.plugin) its ``--grade-*`` options from the same records, so a flag, its default
and its help exist in one place. Either parser's result becomes a ``GradeOptions``. A front end hands a grading
run a typed ``GradeRequest`` (grader.frontends.grading; ``to_dict``/``from_dict`` across a process boundary), and
the supervisor hands the judge process a ``JudgeRequest`` the same way; ``GradeOptions.pytest_argv`` writes the
``--grade-*`` flags for whoever drives the plugin through pytest itself.

This module imports nothing from grader: every other module may import it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

# ---------------------------------------------------------------------------------------------- environment
PREFIX = "TILELANG_COURSE_"  # every name below starts so; the tracer drops them all from its environment
# Set in a forked (warm) check: the judge and the tracer start by fork too (grader.frontends.warm).
WARM = "TILELANG_COURSE_WARM"
# The learner's language for grader messages and notebooks: zh_CN, or en (grader.i18n).
LANG = "TILELANG_COURSE_LANG"
# A JSON file of hidden cases an instructor adds to the graded ones (grader.pipeline.hidden).
HIDDEN_CASES = "TILELANG_COURSE_HIDDEN_CASES"
# "off": run the graded file unconfined (--no-sandbox); "require": refuse to grade unconfined (sandbox).
SANDBOX = "TILELANG_COURSE_SANDBOX"
# More paths the sandbox hides, os.pathsep-separated (nbgrader's JudgeChecks names the course folder).
SANDBOX_HIDE = "TILELANG_COURSE_SANDBOX_HIDE"
# nbgrader grading: "cuda" (default) or "cpu" to grade without a GPU (grader.nbgrader.shards, JudgeChecks).
DEVICE = "TILELANG_COURSE_DEVICE"
# The GPU generation graded for when --arch is not given (sm_75 ... sm_90): the default of --arch.
ARCH = "TILELANG_COURSE_ARCH"
# Seconds: the default time limit of every notebook check (slow machines; grader.frontends.notebook).
CHECK_TIMEOUT = "TILELANG_COURSE_CHECK_TIMEOUT"
# Set by the nbgrader config: a notebook check() only says it is deferred; the judge grades after the run.
JUDGE_AFTER = "TILELANG_COURSE_JUDGE_AFTER"
# "0": notebook checks start a cold grader each time instead of going through the session's warm one.
WARM_GRADER = "TILELANG_COURSE_WARM_GRADER"
# The Python the Slurm batch scripts run the grader with (grader.nbgrader.course), else the one that wrote them.
PYTHON = "TILELANG_COURSE_PYTHON"
# How many cases one judge compiles at once (default: the CPUs this process may run on); several graders
# sharing a machine (the test suite's workers, a node's shards) each take their share.
COMPILE_JOBS = "TILELANG_COURSE_COMPILE_JOBS"

ENVIRONMENT = (WARM, LANG, HIDDEN_CASES, SANDBOX, SANDBOX_HIDE, DEVICE, ARCH, CHECK_TIMEOUT, JUDGE_AFTER, WARM_GRADER)
ENVIRONMENT += (PYTHON, COMPILE_JOBS)

# ---------------------------------------------------------------------------------------------- options
CLI, PYTEST = "cli", "pytest"
DEVICES = ("auto", "cuda", "cpu", "compile")
DEFAULT_MEMORY_LIMIT_GB = 32.0
DEFAULT_TIMEOUT_S = 180.0
# The grader's own work before a case runs (starting its processes, importing TileLang, compiling): a slow
# machine's problem, not the kernel's, so it has a limit of its own and --timeout bounds only the kernel's time.
DEFAULT_COMPILE_TIMEOUT_S = 300.0
# A notebook's limits, for the whole run of each helper (grader.frontends.notebook); a check's is also $CHECK_TIMEOUT.
DEFAULT_CHECK_TIMEOUT_S = 120.0
BENCH_TIMEOUT_S = 600.0
PROFILE_TIMEOUT_S = 900.0  # two kernels built, then each replayed many times under Nsight Compute
EXPLAIN_TIMEOUT_S = 300.0  # every case simulated, then one recorded step by step (a check's limit, if longer)


def case_timeout(check_timeout: float) -> float:
    """The limit each case of a check gets (the grader's --timeout) when the whole check has ``check_timeout``
    seconds (a notebook's check(timeout=...), nbgrader's JudgeChecks.timeout): three quarters of it, less 5 s
    for starting the grader, so a hung case is named before the check itself is cut; never under 5 s."""
    return max(5.0, 0.75 * check_timeout - 5.0)


@dataclass(frozen=True)
class Option:
    """One grading option. ``cli``/``pytest`` are its flag in each front end ("" where that front end does
    not take it); ``help`` may name other options as ``{field}``, written as that front end's flag."""

    name: str  # the GradeOptions field
    cli: str
    pytest: str
    help: str
    default: Any = None
    type: Callable[[str], Any] | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    action: str = "store"  # "store", "store_true" or "append"
    env: str = ""  # an environment name whose value, when set, is the default instead
    cli_help: str = ""  # more help that holds only for python -m grader

    @property
    def fronts(self) -> tuple[str, ...]:
        return tuple(front for front, flag in ((CLI, self.cli), (PYTEST, self.pytest)) if flag)

    def flag(self, front: str) -> str:
        return self.cli if front == CLI else self.pytest

    def dest(self, front: str) -> str:
        """The attribute the parser stores it in: the field's name, prefixed grade_ for pytest."""
        return self.name if front == CLI else f"grade_{self.name}"

    def parser_default(self) -> Any:
        if self.action == "append":
            return []
        if self.env and os.environ.get(self.env):
            return os.environ[self.env]
        return self.default

    def add_to(self, add_argument: Callable[..., Any], front: str) -> None:
        """Declare this option with ``add_argument`` (argparse's, or a pytest option group's addoption)."""
        flags = {option.name: option.flag(front) for option in OPTIONS}
        kwargs: dict[str, Any] = {
            "dest": self.dest(front),
            "action": self.action,
            "help": self.help.format(**flags) + (self.cli_help if front == CLI else ""),
        }
        if self.action != "store_true":
            kwargs["default"] = self.parser_default()
            if self.type is not None:
                kwargs["type"] = self.type
            if self.metavar is not None:
                kwargs["metavar"] = self.metavar
            if self.choices is not None:
                kwargs["choices"] = self.choices
        add_argument(self.flag(front), **kwargs)


OPTIONS: tuple[Option, ...] = (
    Option(
        "kernels",
        "-k",
        "--grade-kernels",
        "only the kernel named NAME; a NAME that is no kernel's whole name: every kernel whose name contains it "
        "(comma-separated for several)",
        default="",
        metavar="NAME",
    ),
    Option(
        "cases",
        "--case",
        "--grade-cases",
        "only the case named NAME (comma-separated for several)",
        default="",
        metavar="NAME",
    ),
    Option(
        "kernels_exact",
        "--exact",
        "--grade-kernels-exact",
        "{kernels} names are whole kernel names only, never parts of one (a {kernels} NAME that is a kernel's whole "
        "name is exact already: {kernels} add grades add, not add_fragments)",
        default=False,
        action="store_true",
    ),
    Option(
        "full",
        "--full",
        "--grade-full",
        "with {kernels} on a machine without a CUDA GPU: also compile the cases too large to simulate, which such a "
        "quick check leaves out to answer sooner (a whole puzzle, a case named by {cases}, {device} compile and "
        "--solutions always compile them)",
        default=False,
        action="store_true",
    ),
    Option(
        "bench",
        "--bench",
        "--grade-bench",
        "time each kernel's large case against torch (GPU)",
        default=False,
        action="store_true",
    ),
    Option(
        "params",
        "--param",
        "--grade-param",
        "with {bench}: time the bench cases with this block parameter instead (e.g. {params} BLOCK_N=128); "
        "repeatable; the graded cases are not run",
        default=(),
        metavar="NAME=VALUE",
        action="append",
    ),
    Option(
        "repeat",
        "--repeat",
        "--grade-repeat",
        "with {bench}: time each figure N times, the kernel and its baselines taking turns, and print the median "
        "with the min-max spread",
        default=5,
        type=int,
        metavar="N",
    ),
    Option(
        "profile",
        "--profile",
        "--grade-profile",
        "say why KERNEL takes its time (comma-separated for several): its bench case beside the course's own "
        "kernel, from Nsight Compute's counters on a GPU, else (or with {static}) from an estimate made of its "
        "TIR and ptxas; never a grade",
        default="",
        metavar="KERNEL",
    ),
    Option(
        "explain",
        "--explain",
        "--grade-explain",
        "show inside KERNEL on the CPU simulator, step by step: one block of one case (the first failed simulated "
        "case, or {cases}), as text and as an HTML page; for a failed case it opens at the step the first wrong "
        "element came from; never a grade",
        default="",
        metavar="KERNEL",
    ),
    Option(
        "block",
        "--block",
        "--grade-block",
        "with {explain}: the block to show, as blockIdx x[,y[,z]] (default: the block that wrote the first wrong "
        "element, else block 0)",
        default="",
        metavar="X[,Y,Z]",
    ),
    Option(
        "static",
        "--static",
        "--grade-static",
        "with {profile}: the estimate alone, without a GPU's counters (works on any machine with nvcc)",
        default=False,
        action="store_true",
    ),
    Option(
        "json",
        "--json",
        "--grade-json",
        "write machine-readable results to PATH",
        type=Path,
        metavar="PATH",
        cli_help=" (-: to stdout, and the report to stderr)",
    ),
    Option(
        "device",
        "--device",
        "--grade-device",
        "auto (default): the GPU if there is one, else cpu: compile for {arch} and simulate the small cases; "
        "cuda: the GPU or nothing; compile: compile only",
        default="auto",
        choices=DEVICES,
    ),
    Option(
        "arch",
        "--arch",
        "--grade-arch",
        "grade for a GPU generation: sm_75 (T4), sm_80 (A100), sm_86 (RTX 30xx), sm_89 (RTX 40xx, L4) or "
        "sm_90 (H100/H200): its block sizes and shared memory limit. Default: this machine's GPU, else sm_90 "
        f"(also set by {ARCH}). Naming another GPU than this one compiles for it and simulates",
        default="",
        metavar="SM",
        env=ARCH,
    ),
    Option(
        "timeout",
        "--timeout",
        "--grade-timeout",
        f"seconds a case's own code may take: tracing its Python, simulating it or running it on the GPU "
        f"(default {DEFAULT_TIMEOUT_S:g}; starting and compiling have {{compile_timeout}})",
        default=DEFAULT_TIMEOUT_S,
        type=float,
        metavar="S",
    ),
    Option(
        "compile_timeout",
        "--compile-timeout",
        "--grade-compile-timeout",
        "seconds the grader's own work for a case may take before it runs: starting the grading processes and "
        f"compiling (default {DEFAULT_COMPILE_TIMEOUT_S:g})",
        default=DEFAULT_COMPILE_TIMEOUT_S,
        type=float,
        metavar="S",
    ),
    Option(
        "seed_offset",
        "--seed-offset",
        "--grade-seed-offset",
        "shift every case's seed by N",
        default=0,
        type=int,
        metavar="N",
    ),
    Option(
        "save_failures",
        "--save-failures",
        "--grade-save-failures",
        "write each failed case's inputs, expected and actual outputs to DIR, with the command that replays it",
        type=Path,
        metavar="DIR",
    ),
    Option(
        "memory_limit_gb",
        "--memory-limit",
        "--grade-memory-limit",
        f"memory (address space) of the grading process when it simulates or compiles (default "
        f"{DEFAULT_MEMORY_LIMIT_GB:g}; 0: none; never applied when it runs on a CUDA GPU)",
        default=DEFAULT_MEMORY_LIMIT_GB,
        type=float,
        metavar="GB",
    ),
    Option(
        "verbose", "--verbose", "--grade-verbose", "show full TileLang/TVM traces", default=False, action="store_true"
    ),
    Option(
        "quiet",
        "--quiet",
        "--grade-quiet",
        "print no verdict lines, only send the results (and write {json}, if given): for a front end that renders "
        "the results itself (a notebook's check(), nbgrader's JudgeChecks), so that a check is rendered once",
        default=False,
        action="store_true",
    ),
    Option(
        "no_sandbox",
        "--no-sandbox",
        "",  # the CLI's own: it sets SANDBOX=off for the judge, which starts the tracer
        "run the graded file's Python unconfined (where this machine cannot make a sandbox, an instructor's run "
        "with hidden cases refuses to grade without this)",
        default=False,
        action="store_true",
    ),
    Option(
        "spec_dir",
        "",
        "--grade-spec-dir",
        "folder whose pNN_*.py files hold the trusted cases (default: solutions/)",
        type=Path,
        metavar="DIR",
    ),
)

OPTION = {option.name: option for option in OPTIONS}


def _default(name: str) -> Any:
    return OPTION[name].default


@dataclass(frozen=True)
class GradeOptions:
    """What a grading run was asked for, from either front end's flags (defaults: ``OPTIONS``)."""

    kernels: str = _default("kernels")  # comma-separated names: a kernel's whole name, else a part of some
    cases: str = _default("cases")  # comma-separated case names
    kernels_exact: bool = _default("kernels_exact")
    # with kernels or cases and no GPU: compile the cases too large to simulate too (a narrowed check skips them)
    full: bool = _default("full")
    bench: bool = _default("bench")
    params: tuple[str, ...] = _default("params")  # "NAME=VALUE" texts, as given (block_params parses them)
    repeat: int = _default("repeat")  # with bench: repetitions of each figure
    profile: str = _default("profile")  # a kernel's exact name: profile its bench case ("": no profile)
    explain: str = _default("explain")  # a kernel's exact name: record one block of one simulated case
    block: str = _default("block")  # with explain: "x[,y[,z]]" ("": the block the first wrong element came from)
    static: bool = _default("static")  # with profile: the estimate from TIR and ptxas only, no counters
    json: Path | None = _default("json")
    device: str = _default("device")  # one of DEVICES
    arch: str = _default("arch")  # "": this GPU, else sm_90
    timeout: float = _default("timeout")  # seconds a case's own code may take (trace, simulate, run)
    compile_timeout: float = _default("compile_timeout")  # seconds to start the processes and to compile a case
    seed_offset: int = _default("seed_offset")
    save_failures: Path | None = _default("save_failures")
    memory_limit_gb: float = _default("memory_limit_gb")  # 0: none
    verbose: bool = _default("verbose")
    quiet: bool = _default("quiet")  # the front end renders the typed results: print no verdict lines
    no_sandbox: bool = _default("no_sandbox")  # the judge reads SANDBOX, which grader.frontends.grading sets from it
    spec_dir: Path | None = _default("spec_dir")  # None: the course's solutions/

    @classmethod
    def from_parsed(cls, values: Any, front: str) -> GradeOptions:
        """From a parser's result: an argparse Namespace (``front`` CLI) or a pytest Config (``front`` PYTEST).
        An option that front end does not take keeps its default."""
        got: dict[str, Any] = {}
        for option in OPTIONS:
            if not option.flag(front):
                continue
            dest = option.dest(front)
            value = values.getoption(dest) if hasattr(values, "getoption") else getattr(values, dest)
            got[option.name] = tuple(value or ()) if option.action == "append" else value
        return cls(**got)

    def pytest_argv(self) -> list[str]:
        """The ``--grade-*`` arguments that give the plugin these options (only those not at their default)."""
        return self.argv(PYTEST)

    def argv(self, front: str) -> list[str]:
        argv: list[str] = []
        for option in OPTIONS:
            value = getattr(self, option.name)
            flag = option.flag(front)
            if not flag or value == option.default:
                continue
            if option.action == "store_true":
                argv.append(flag)
            elif option.action == "append":
                for item in value:
                    argv += [flag, str(item)]
            else:
                argv += [flag, str(value)]
        return argv

    def block_params(self) -> dict[str, int]:
        """``params`` as {NAME: VALUE}; ValueError names the one that is not NAME=INTEGER."""
        return parse_params(self.params)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able: paths as text, params as a list."""
        out = asdict(self)
        for name, value in out.items():
            if isinstance(value, Path):
                out[name] = str(value)
            elif isinstance(value, tuple):
                out[name] = list(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GradeOptions:
        """The inverse of to_dict; a key that is not a field is an error (the two sides disagree)."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise TypeError(f"GradeOptions has no field {', '.join(sorted(unknown))}")
        got = dict(data)
        for name in ("json", "save_failures", "spec_dir"):
            if got.get(name) is not None:
                got[name] = Path(got[name])
        if "params" in got:
            got["params"] = tuple(got["params"])
        return cls(**got)


# ------------------------------------------------------------------------------------- instructor options
# An instructor's grading (nbgrader's JudgeChecks, autograde-shard(s), the Slurm task) runs on a GPU, or on the CPU
# when told: DEVICES' words, without auto (no GPU is refused, not worked around) or compile (nothing would run).
GRADING_DEVICES = ("cuda", "cpu")
DEFAULT_JUDGE_TIMEOUT_S = 240.0  # seconds one kernel's check may take under JudgeChecks, compiles included


@dataclass(frozen=True)
class InstructorOption:
    """One option of an instructor's grading: ``trait`` is its name on nbgrader's JudgeChecks
    (``--JudgeChecks.<trait>``, ``c.JudgeChecks.<trait>``), ``flag`` its flag on ``autograde-shard(s)`` ("" where
    those do not take it). grader.nbgrader.judge builds the traits and grader.nbgrader.shards the flags from
    these records, so both take the same words with the same defaults."""

    trait: str
    flag: str
    help: str
    default: Any
    type: type = str  # str, float or bool (a bool's flag is store_true)
    choices: tuple[str, ...] | None = None
    env: str = ""  # the environment name that says it too (what the shards set for every autograde they start)

    def add_to(self, add_argument: Callable[..., Any]) -> None:
        """Declare this option's flag with argparse's ``add_argument``, stored under the trait's name."""
        if self.type is bool:
            add_argument(self.flag, dest=self.trait, action="store_true", help=self.help)
        else:
            add_argument(
                self.flag, dest=self.trait, type=self.type, choices=self.choices, default=self.default, help=self.help
            )


INSTRUCTOR_OPTIONS: tuple[InstructorOption, ...] = (
    InstructorOption(
        "device",
        "--device",
        f"cuda (the default; also set by {DEVICE}): refuse to grade where no CUDA GPU is usable; cpu: grade "
        "without one (small cases simulated on the CPU, the rest only compiled)",
        default=None,
        choices=GRADING_DEVICES,
        env=DEVICE,
    ),
    InstructorOption(
        "timeout",
        "",
        "seconds one kernel's check may take, compiles included",
        default=DEFAULT_JUDGE_TIMEOUT_S,
        type=float,
    ),
    InstructorOption(
        "no_sandbox",
        "--no-sandbox",
        "grade even where this machine cannot make the sandbox: the student's code then runs with the grading "
        f"user's rights (also set by {SANDBOX}=off)",
        default=False,
        type=bool,
        env=SANDBOX,
    ),
    InstructorOption(
        "hidden_cases",
        "",
        "the hidden-cases file on the grading machine (given to the grader only)",
        default="",
    ),
    InstructorOption(
        "bench",
        "",
        "on a GPU, also time each kernel's bench case against torch and the roofline, so that the class report "
        "can show where the class went (the timing takes each check longer: give it room in timeout)",
        default=False,
        type=bool,
    ),
)

INSTRUCTOR_OPTION = {option.trait: option for option in INSTRUCTOR_OPTIONS}


def grading_device(given: str | None) -> str:
    """An instructor's device: as given (a JudgeChecks trait, a shard's --device), else $TILELANG_COURSE_DEVICE,
    else cuda. A word outside GRADING_DEVICES (from the environment) comes back as it is, for the caller to refuse."""
    return given or os.environ.get(DEVICE, "") or "cuda"


def hidden_cases_file(env: Mapping[str, str] | None = None) -> Path | None:
    """The instructor's hidden cases file, as $TILELANG_COURSE_HIDDEN_CASES names it (None when unset or empty) in
    ``env`` (default: this process's environment). The processes read it here and hand the path to the pipeline,
    which reads no environment."""
    value = (os.environ if env is None else env).get(HIDDEN_CASES, "").strip()
    return Path(value) if value else None


def parse_params(texts: Sequence[str]) -> dict[str, int]:
    """``["BLOCK_N=128", "STAGES=4"]`` to a dict, or ValueError naming the one that is not NAME=INTEGER."""
    params = {}
    for text in texts:
        name, _, value = text.partition("=")
        name = name.strip()
        if not name.isidentifier() or not name.isupper() or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"--param {text}: write a block parameter and a whole number, e.g. --param BLOCK_N=128")
        params[name] = int(value)
    return params


@dataclass(frozen=True)
class GradeRequest:
    """One grading run, as every front end asks for it (grader.frontends.grading.run): which files to grade as
    which puzzles, and how. Crosses a process boundary only as to_dict's JSON (grader.processes.launch)."""

    targets: tuple[tuple[str, str], ...]  # (puzzle id, path of the file graded), in the order to grade them
    options: GradeOptions = field(default_factory=GradeOptions)

    def to_dict(self) -> dict[str, Any]:
        return {"targets": [list(target) for target in self.targets], "options": self.options.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GradeRequest:
        targets = tuple((str(puzzle_id), str(path)) for puzzle_id, path in data["targets"])
        return cls(targets, GradeOptions.from_dict(data.get("options", {})))


@dataclass(frozen=True)
class JudgeRequest:
    """What the supervisor asks one judge process to grade (grader.processes.judge.serve)."""

    puzzle_id: str
    spec_file: str  # the trusted module the cases come from
    kernel_file: str  # the graded file
    options: GradeOptions = field(default_factory=GradeOptions)
    scratch: str = ""  # the judge's temporary folder (TMPDIR), set by the supervisor as it starts one

    def with_scratch(self, folder: str) -> JudgeRequest:
        return replace(self, scratch=folder)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "options": self.options.to_dict()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JudgeRequest:
        return cls(**{**data, "options": GradeOptions.from_dict(data.get("options", {}))})


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, which a container or a Slurm allocation narrows)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def compile_jobs() -> int:
    """How many cases one judge compiles at once: $TILELANG_COURSE_COMPILE_JOBS, else every usable CPU."""
    value = os.environ.get(COMPILE_JOBS, "")
    return max(1, int(value)) if value.isdigit() else usable_cpus()
