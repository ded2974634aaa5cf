"""Grading a class past one machine: the Slurm job array and a PostgreSQL gradebook, on this CPU.

The fixtures start the real services on localhost, in temporary folders of their own (free ports, no
system-wide state), and stop them at the end: munged, slurmctld and slurmd (a generated slurm.conf;
the node declares three GPUs whose device files are links to /dev/null, so ``--gres=gpu:1`` of the
generated ``slurm/autograde.sbatch`` is satisfied on a machine without one, and the script is
submitted as written), and one PostgreSQL cluster (initdb, as the postgres user when run as root). The Debian
packages come from ``.ci/run``; without them the tests that need them skip and say why.

One course of puzzles 01 and 02 and six students is graded by the job array (three tasks) into PostgreSQL,
with one task cancelled half-way through a student and its shard submitted again: every score must be the one
``CLASS`` gives. Beside it a single ``nbgrader autograde`` on SQLite grades the two students whose grading only
this file has (both notebooks solved; one notebook not handed in), and must agree with the array on them;
tests/test_nbgrader.py grades the others' kinds (an attacker, wrong and patched checks) in a single one, and the
hung kernel the array does not grade (it spins for its 40 s limit; a task runs the same autograde command).
"""

from __future__ import annotations

import csv
import fnmatch
import glob
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from grader.nbgrader.shards import FAILED, GRADED, MISSING, shard_students, statuses
from tests.test_hermetic import plant
from tests.test_nbgrader import (
    ATTACK_MARKER,
    Student,
    Warming,
    alive_with,
    check_output,
    fingerprint,
    grader_status,
    make_course,
    nbgrader,
    solution_sources,
    solved,
    submission,
    wrong_and_leaks,
    wrong_and_patches_check,
    wrong_mul_relu,
    zeros_and_attacks,
)

# One worker runs this file (pytest --dist loadgroup): its module fixtures start one Slurm cluster and one
# PostgreSQL server, and grade one course, for every test here; minutes before the first test runs.
pytestmark = [pytest.mark.xdist_group("slurm"), pytest.mark.slow]

ASSIGNMENT = "ps1"
PUZZLES = "01,02"
NOTEBOOKS = ("p01_copy", "p02_vector_add")
# A check's limit (each case gets 0.75 of it less 5 s): the hung kernel costs that much in each grading,
# and every other case must finish well within it on two busy cores (45 s was once too little).
CHECK_TIMEOUT = 60
SHARDS = 3
AT_ONCE = 2  # tasks of the array running at once: the single SQLite autograde beside them gets a core
TASK_TIMEOUT = 900  # the longest the test waits for a grading (a cap; a loaded machine is slow)

Plan = dict[str, tuple[dict, str] | None]  # notebook -> (kernel -> edit, check cells) or None: not submitted


KERNELS = {
    "p01_copy": ("copy_serial", "copy_threads", "copy_tiles"),
    "p02_vector_add": ("add", "mul_relu", "add_fragments"),
}


def every(notebook: str) -> dict:
    return {kernel: solved for kernel in KERNELS[notebook]}


# Student -> what they hand in, and the score it must earn (3 kernels, 1 point each, per puzzle).
CLASS: dict[str, tuple[Plan, float]] = {
    "alice_solved": ({"p01_copy": (every("p01_copy"), ""), "p02_vector_add": (every("p02_vector_add"), "")}, 6),
    "bob_untouched": ({"p01_copy": ({}, ""), "p02_vector_add": ({}, "")}, 0),
    "carol_wrong": (
        {
            "p01_copy": (every("p01_copy"), ""),
            "p02_vector_add": ({"add": solved, "mul_relu": wrong_mul_relu, "add_fragments": solved}, ""),
        },
        5,
    ),
    "gina_patches_check": (
        {
            "p01_copy": ({}, ""),
            "p02_vector_add": ({"add": solved, "mul_relu": wrong_and_patches_check}, 'print("passed all cases")'),
        },
        1,
    ),
    "ivan_missing_notebook": ({"p01_copy": None, "p02_vector_add": (every("p02_vector_add"), "")}, 3),
    # tests/test_nbgrader.py's attacker, graded by a Slurm task: his add stores zeros and, as it is traced,
    # forges reports, appends to the course's config, rewrites the classmates' submissions, kills graders
    # and leaves a daemon; his mul_relu looks for the classmates' files while the other tasks grade.
    "zed_attacks": (
        {"p01_copy": ({}, ""), "p02_vector_add": ({"add": zeros_and_attacks, "mul_relu": wrong_and_leaks}, "")},
        0,
    ),
}
ATTACKER = "zed_attacks"
# The single SQLite autograde beside the array grades only what tests/test_nbgrader.py's single autograde (one
# notebook, p02) does not: a two-notebook submission and one with a notebook missing. Grading the others again
# would repeat that file's work; the array's scores are held to CLASS's. A hung kernel is graded there only (its
# limit is 40 s of CPU spent spinning, the same `nbgrader autograde` a task runs, which adds no time limit).
REFERENCE = ("alice_solved", "ivan_missing_notebook")
REFERENCE_STUDENTS = f"[{''.join(name[0] for name in REFERENCE)}]*"  # nbgrader's --student is one glob
assert [name for name in CLASS if fnmatch.fnmatchcase(name, REFERENCE_STUDENTS)] == list(REFERENCE)
KILLED_SHARD = 1  # bob_untouched and ivan_missing_notebook: cancelled during bob's autograde


# ------------------------------------------------------------------------------------ services


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(what: str, ready, timeout: float, logs: tuple[Path, ...] = (), every: float = 0.3) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p}\n{p.read_text()[-3000:]}" for p in logs if p.exists())
            raise AssertionError(f"{what} not ready after {timeout} s\n{tails}")
        time.sleep(every)


def skip_loudly(request: pytest.FixtureRequest, reason: str) -> None:
    """Skip, and say why on the terminal even when pytest captures output (CI runs -q without -rs)."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\nSKIP {request.node.nodeid or request.node.name}: {reason}")
    pytest.skip(reason)


def missing_programs(names: tuple[str, ...]) -> list[str]:
    return [n for n in names if shutil.which(n) is None and not os.path.exists(f"/usr/sbin/{n}")]


def program(name: str) -> str:
    return shutil.which(name) or f"/usr/sbin/{name}"


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@dataclass
class Slurm:
    folder: Path
    env: dict[str, str]

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=60)
        if check:
            assert done.returncode == 0, f"{' '.join(command)}: {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    def submit(self, *args: str, cwd: Path) -> str:
        done = subprocess.run(
            ["sbatch", "--parsable", *args], cwd=cwd, env=self.env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"sbatch {' '.join(args)}: {done.stderr}"
        return done.stdout.strip().split(";")[0]

    def tasks(self, job: str) -> dict[str, str]:
        """Array task id -> state, of the tasks of ``job`` still queued or running."""
        out = self.run("squeue", "-h", "-r", "-j", job, "-o", "%K %T", check=False).stdout
        return dict(line.split() for line in out.splitlines() if line.strip())

    def wait(self, job: str, timeout: float = TASK_TIMEOUT) -> None:
        # Asked once a second: each squeue is a munge credential and a call to slurmctld, for minutes.
        wait_for(f"job {job}", lambda: not self.tasks(job), timeout, (self.folder / "slurmctld.log",), every=1.0)


@pytest.fixture(scope="module")
def slurm(request: pytest.FixtureRequest) -> Iterator[Slurm]:
    lacking = missing_programs(("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel"))
    if lacking:
        skip_loudly(request, f"no {', '.join(lacking)}: Slurm or munge is not installed (.ci/run installs them)")
    folder = Path(tempfile.mkdtemp(prefix="grader-slurm-"))  # 0700: munged checks who can reach its socket
    key = folder / "munge.key"
    key.write_bytes(secrets.token_bytes(1024))
    key.chmod(0o600)
    socket_path = folder / "munge.socket"
    munge = subprocess.Popen(
        [program("munged"), "-F", "-f", f"--socket={socket_path}", f"--key-file={key}"]
        + [f"--pid-file={folder / 'munged.pid'}", f"--log-file={folder / 'munged.log'}"]
        + [f"--seed-file={folder / 'munged.seed'}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    started: list[subprocess.Popen] = [munge]
    try:
        wait_for("munged", socket_path.exists, 30, (folder / "munged.log",))
        node = "gradenode"
        user = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
        (folder / "state").mkdir()
        (folder / "spool").mkdir()
        conf = folder / "slurm.conf"
        conf.write_text(
            "\n".join(
                [
                    "ClusterName=gradetest",
                    f"SlurmctldHost={socket.gethostname()}(127.0.0.1)",
                    f"SlurmctldPort={free_port()}",
                    f"SlurmdPort={free_port()}",
                    f"SlurmUser={user}",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={socket_path}",
                    f"StateSaveLocation={folder / 'state'}",
                    f"SlurmdSpoolDir={folder / 'spool'}",
                    f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
                    f"SlurmdPidFile={folder / 'slurmd.pid'}",
                    f"SlurmctldLogFile={folder / 'slurmctld.log'}",
                    f"SlurmdLogFile={folder / 'slurmd.log'}",
                    "ProctrackType=proctrack/linuxproc",  # no cgroups in a container; follows the process tree
                    "TaskPlugin=task/none",
                    "MpiDefault=none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "SchedulerType=sched/backfill",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_CPU",
                    "ReturnToService=2",
                    "KillWait=5",
                    "GresTypes=gpu",
                    # The node as the sbatch script expects one: 3 GPUs (see gres.conf below), 4 CPUs
                    # and 32G for each of three tasks. config_overrides: believe this, not the hardware.
                    "SlurmdParameters=config_overrides",
                    f"NodeName={node} NodeHostname={socket.gethostname()} NodeAddr=127.0.0.1 CPUs=12 "
                    "RealMemory=100000 Gres=gpu:3 State=UNKNOWN",
                    f"PartitionName=grade Nodes={node} Default=YES MaxTime=INFINITE State=UP",
                    "",
                ]
            )
        )
        # gres/gpu drops a GPU without a device file, and wants a character device: three links to
        # /dev/null stand for them (Slurm then sets CUDA_VISIBLE_DEVICES=0, 1 or 2 in each task).
        for index in range(3):
            (folder / f"nvidia{index}").symlink_to("/dev/null")
        (folder / "gres.conf").write_text(f"NodeName={node} Name=gpu File={folder}/nvidia[0-2]\n")
        # No node here has a CUDA GPU: the tasks grade on the CPU because sbatch passes this on to them
        env = {**os.environ, "SLURM_CONF": str(conf), "TILELANG_COURSE_DEVICE": "cpu"}
        for command, log in (
            ([program("slurmctld"), "-D", "-c", "-f", str(conf)], "slurmctld.out"),
            ([program("slurmd"), "-D", "-N", node, "-f", str(conf)], "slurmd.out"),
        ):
            with open(folder / log, "w") as handle:
                started.append(subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT))
        cluster = Slurm(folder, env)
        logs = tuple(folder / n for n in ("slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out"))

        def idle() -> bool:
            done = cluster.run("sinfo", "-h", "-N", "-o", "%T", check=False)
            return done.returncode == 0 and done.stdout.strip() == "idle"

        wait_for("slurmd's node", idle, 60, logs)
        yield cluster
    finally:
        for process in reversed(started):
            stop(process)
        shutil.rmtree(folder, ignore_errors=True)


def enterable_tmp() -> str:
    """A temporary folder another user (PostgreSQL's) can reach: $TMPDIR where every folder above it lets
    others in, else the system's /tmp (the run's own $TMPDIR, tests/leftovers.py's, is 0700)."""
    here = Path(tempfile.gettempdir()).resolve()
    return str(here) if all(p.stat().st_mode & 0o001 for p in (here, *here.parents)) else "/tmp"


def postgres_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="module")
def postgres(request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of an empty database ``gradebook`` on a PostgreSQL cluster of the test's own."""
    import pwd

    initdb, pg_ctl = postgres_bin("initdb"), postgres_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        skip_loudly(request, "no initdb or pg_ctl: PostgreSQL is not installed (.ci/run installs postgresql)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        skip_loudly(request, "no psycopg, the PostgreSQL driver (pip install -e '.[dev]' brings it)")
    entry = None
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root: as its own user, as Debian's package makes
        try:
            entry = pwd.getpwnam("postgres")
        except KeyError:
            skip_loudly(request, "running as root and there is no postgres user to run PostgreSQL as")
    folder = Path(tempfile.mkdtemp(prefix="grader-pg-", dir=None if entry is None else enterable_tmp()))
    owner = {}
    if entry is not None:
        os.chown(folder, entry.pw_uid, entry.pw_gid)
        owner = {"user": entry.pw_uid, "group": entry.pw_gid}
    data, port = folder / "data", free_port()
    run = lambda *command: subprocess.run(command, capture_output=True, text=True, timeout=120, **owner)  # noqa: E731
    done = run(initdb, "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
    assert done.returncode == 0, f"initdb: {done.stdout}\n{done.stderr}"
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60"
    try:
        done = run(pg_ctl, "-D", str(data), "-l", str(folder / "postgres.log"), "-o", options, "-w", "start")
        assert done.returncode == 0, (
            f"pg_ctl start: {done.stdout}\n{done.stderr}\n{(folder / 'postgres.log').read_text()}"
        )
        import psycopg

        with psycopg.connect(f"postgresql://postgres@127.0.0.1:{port}/postgres", autocommit=True) as connection:
            connection.execute("CREATE DATABASE gradebook")
        yield f"postgresql://postgres@127.0.0.1:{port}/gradebook"
    finally:
        run(pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------------------- the course


def grader(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def build_course(course: Path, *db: str) -> None:
    """``nbgrader-course`` and ``nbgrader generate_assignment`` (in this process: tests/test_nbgrader.py's
    helpers), then each student's submission."""
    make_course(course, "--assignment", ASSIGNMENT, "--puzzles", PUZZLES, "--timeout", str(CHECK_TIMEOUT), *db)
    nbgrader(course, "generate_assignment", ASSIGNMENT, "--force")
    for student, (plan, _score) in CLASS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for notebook, handed_in in plan.items():
            if handed_in is None:
                continue
            edits, check_cells = handed_in
            release = nbformat.read(course / "release" / ASSIGNMENT / f"{notebook}.ipynb", as_version=4)
            solutions = solution_sources(course / "source" / ASSIGNMENT / f"{notebook}.ipynb")
            handed = submission(release, solutions, Student(student, edits, {}, check_cells))
            nbformat.write(handed, folder / f"{notebook}.ipynb")
        if student == ATTACKER:  # issue 36's plants beside his notebooks: nbgrader copies every file handed in
            plant(folder, planted_markers(course.parent), f"{course.name}-submitted")


def planted_markers(base: Path) -> Path:
    """Where a planted file writes its marker if it ever runs."""
    (base / "planted-ran").mkdir(exist_ok=True)
    return base / "planted-ran"


def exported(course: Path) -> list[dict[str, str]]:
    nbgrader(course, "export")  # in this process (tests/test_nbgrader.py's helper)
    with open(course / "grades.csv", newline="") as handle:
        return [row for row in csv.DictReader(handle) if row["assignment"] == ASSIGNMENT]


@dataclass
class Run:
    sqlite: Path
    cluster: Path
    url: str
    before_resubmit: dict[str, str]  # student -> state right after the cancelled task was gone
    seconds: dict[str, float]
    untouched: dict[str, bool]  # what the attacker went for, per course: unchanged?
    attacker_daemons: list[int]  # processes still carrying the attacker's marker after both gradings


@pytest.fixture(scope="module")
def graded(slurm: Slurm, postgres: str, tmp_path_factory: pytest.TempPathFactory) -> Run:
    base = tmp_path_factory.mktemp("cluster")
    sqlite, cluster = base / "sqlite", base / "cluster"
    seconds: dict[str, float] = {}
    started = time.monotonic()
    # Compile the solutions' kernels once (TileLang's cache) so no check spends its limit on a cold
    # compile; meanwhile build both courses.
    warming = Warming(PUZZLES)
    try:
        build_course(sqlite)
        build_course(cluster, "--db", postgres)
        seconds["build the SQLite and the PostgreSQL course"] = time.monotonic() - started
    finally:
        warming.wait()
    seconds["compile the solutions (from the start)"] = time.monotonic() - started

    watched = {f"{course.name} {what}": [course / what] for course in (sqlite, cluster) for what in ATTACKED}
    # The graders' $TMPDIR, which every local user can write, holds the same plants. Only the plants are
    # watched: the graders write their own temporary files there, and a task cancelled mid-autograde
    # (KILLED_SHARD) leaves its own behind, which says nothing about the attacker.
    temporary = base / "tmpdir"
    plant(temporary, planted_markers(base), "tmpdir")
    watched["$TMPDIR"] = sorted(p for p in temporary.rglob("*") if p.is_file())
    before = {name: fingerprint(paths) for name, paths in watched.items()}
    started = time.monotonic()
    with open(base / "sqlite-autograde.log", "w") as handle:  # the reference, alongside the array
        reference = subprocess.Popen(
            [sys.executable, "-m", "nbgrader", "autograde", ASSIGNMENT, "--JudgeChecks.device=cpu"]
            + ["--student", REFERENCE_STUDENTS],
            cwd=sqlite,
            env={
                **os.environ,
                "TILELANG_ATTACK_COURSE": str(sqlite),
                "TMPDIR": str(temporary),
                "TILELANG_ATTACK_TMP": str(temporary),
            },
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    # sbatch hands its environment to the tasks: the attacker is told where the course is, as one who
    # knows the cluster's layout would be
    slurm = Slurm(
        slurm.folder,
        {
            **slurm.env,
            "TILELANG_ATTACK_COURSE": str(cluster),
            "TMPDIR": str(temporary),
            "TILELANG_ATTACK_TMP": str(temporary),
        },
    )
    array = f"--array=0-{SHARDS - 1}%{AT_ONCE}"
    job = slurm.submit(array, "slurm/autograde.sbatch", ASSIGNMENT, cwd=cluster)
    first = shard_students(list(CLASS), KILLED_SHARD, SHARDS)[0]
    log = cluster / "logs" / ASSIGNMENT / f"{first}.log"
    wait_for(f"{first} being autograded", lambda: log.exists() and "Autograding" in log.read_text(), TASK_TIMEOUT)
    slurm.run("scancel", f"{job}_{KILLED_SHARD}")
    wait_for(f"task {KILLED_SHARD} cancelled", lambda: str(KILLED_SHARD) not in slurm.tasks(job), 120)
    states = {name: state.state for name, state in statuses(cluster, ASSIGNMENT).items()}
    again = slurm.submit(f"--array={KILLED_SHARD}", "slurm/autograde.sbatch", ASSIGNMENT, str(SHARDS), cwd=cluster)
    slurm.wait(job)
    slurm.wait(again)
    seconds["job array, with one task cancelled and resubmitted"] = time.monotonic() - started
    assert reference.wait(timeout=TASK_TIMEOUT) == 0, (base / "sqlite-autograde.log").read_text()[-5000:]
    seconds["single autograde on SQLite (from its start)"] = time.monotonic() - started
    untouched = {name: fingerprint(paths) == before[name] for name, paths in watched.items()}
    untouched["nothing planted ran"] = sorted(p.name for p in planted_markers(base).iterdir()) == []
    print("\ncluster grading seconds:", {k: round(v, 1) for k, v in seconds.items()})
    return Run(sqlite, cluster, postgres, states, seconds, untouched, alive_with(ATTACK_MARKER))


def scores(rows: list[dict[str, str]]) -> dict[str, float]:
    return {row["student_id"]: float(row["score"]) for row in rows}


# -------------------------------------------------------------------------------------- tests


def verdicts(log: Path) -> str:
    """The judge's lines of an autograde log: which kernel passed, failed or hung, and how long it took."""
    return "\n".join(line for line in log.read_text().splitlines() if "judge:" in line or "Autograding" in line)


def test_the_array_gives_every_student_the_single_sqlite_score(graded: Run):
    expected = {name: float(score) for name, (_plan, score) in CLASS.items()}
    rows = exported(graded.cluster)
    assert sorted(row["student_id"] for row in rows) == sorted(CLASS)  # each student once
    why = "\n".join(verdicts(p) for p in sorted((graded.cluster / "logs" / ASSIGNMENT).glob("*.log")))
    assert scores(rows) == expected, why
    # the single autograde on SQLite gives the students it grades the same scores
    reference = scores(exported(graded.sqlite))
    why = verdicts(graded.sqlite.parent / "sqlite-autograde.log")
    assert {name: reference.get(name) for name in REFERENCE} == {name: expected[name] for name in REFERENCE}, why


ATTACKED = ("submitted", "nbgrader_config.py", "release", "source")  # what zed's add goes for, in each course


def test_the_attacker_changes_nothing_reads_no_classmate_and_leaves_no_process(graded: Run):
    """Issue 36's attacks through the Slurm task (tests/test_nbgrader.py makes them through a single autograde):
    zed's score is 0 (test_the_array_gives_every_student_the_single_sqlite_score), every file he went for, in
    both courses, is as it was, his daemon is gone, and his look for the classmates' modules, work folders and
    reports, while the other tasks and the single autograde graded, found nothing."""
    assert graded.untouched == dict.fromkeys(graded.untouched, True)
    assert graded.attacker_daemons == [], "a process the attacker started outlived autograde"
    notebook = graded.cluster / "autograded" / "zed_attacks" / ASSIGNMENT / "p02_vector_add.ipynb"
    leaked = check_output(notebook, "mul_relu")
    assert "LEAK" in leaked and "READ []" in leaked, leaked


def test_a_cancelled_task_resubmitted_loses_and_duplicates_nothing(graded: Run):
    killed = shard_students(list(CLASS), KILLED_SHARD, SHARDS)
    assert graded.before_resubmit[killed[0]] == FAILED  # cancelled in the middle of its autograde
    assert graded.before_resubmit[killed[1]] == MISSING  # never reached
    final = statuses(graded.cluster, ASSIGNMENT)
    assert {name: state.state for name, state in final.items()} == {name: GRADED for name in CLASS}
    assert final["ivan_missing_notebook"].not_submitted == ["p01_copy"]
    from sqlalchemy import create_engine, text

    engine = create_engine(graded.url)
    with engine.connect() as connection:
        count = lambda query: connection.execute(text(query)).scalar()  # noqa: E731
        assert count("SELECT count(*) FROM submitted_assignment") == len(CLASS)
        assert count("SELECT count(*) FROM submitted_notebook") == len(CLASS) * len(NOTEBOOKS)
        assert count("SELECT count(*) FROM grade") == len(CLASS) * 6  # 3 checks per notebook
        assert count("SELECT count(*) FROM student") == len(CLASS)
    engine.dispose()
    for name in killed:  # the resubmitted task graded both students of its shard, once each
        log = (graded.cluster / "logs" / ASSIGNMENT / f"{name}.log").read_text()
        assert log.splitlines()[-1].startswith("# exit 0 after"), log[-2000:]
    outputs = sorted((graded.cluster / "slurm" / "logs").glob("autograde-*.out"))
    assert len(outputs) == SHARDS + 1  # three tasks, and the one resubmitted


def test_status_reads_the_gradebook(graded: Run):
    code, printed = grader_status(graded.cluster)  # the command's main, in this process
    assert code == 0, printed
    assert f"{len(CLASS)} graded, 0 failed, 0 missing" in printed
    assert "not submitted (0 points): p01_copy" in printed
    # how each kernel was checked: alice's six kernels passed on the CPU, none on a GPU
    alice = printed.split("alice_solved")[1].split("bob_untouched")[0]
    assert "    0 case(s) on a GPU, " in alice and "      p02 add: 0 case(s) on a GPU, 3 simulated" in alice, alice
    logs = (graded.cluster / "logs" / ASSIGNMENT / "alice_solved.log").read_text()
    assert "add: 0 case(s) on a GPU, 3 simulated on the CPU, 2 only compiled" in logs, logs[-3000:]
    tasks = "\n".join(p.read_text() for p in (graded.cluster / "slurm" / "logs").glob("autograde-*.out"))
    graded_line = next(line for line in tasks.splitlines() if "alice_solved: graded 6/6" in line)
    assert graded_line.endswith("0 case(s) on a GPU, 18 simulated on the CPU, 12 only compiled"), graded_line


def test_one_host_recipe_uses_the_same_split(graded: Run):
    """``autograde-shards`` on the course the array graded (PostgreSQL): every shard skips its graded students."""
    done = grader("autograde-shards", ASSIGNMENT, "--gpus", "5,7", "--device", "cpu", cwd=graded.cluster, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    for index, gpu in enumerate(("5", "7")):
        log = (graded.cluster / "logs" / ASSIGNMENT / "shards" / f"shard-{index}.log").read_text()
        assert f"CUDA_VISIBLE_DEVICES={gpu}" in log
        expected = shard_students(list(CLASS), index, 2)
        assert [line.split(":")[0].strip() for line in log.splitlines() if "already graded" in line] == expected


# ------------------------------------------------------------------------- no services needed


def test_shards_cover_every_student_once():
    names = [f"s{n:03d}" for n in range(47)][::-1]
    for count in (1, 2, 3, 7, 47, 60):
        shards = [shard_students(names, index, count) for index in range(count)]
        assert sorted(sum(shards, [])) == sorted(names)
        assert max(map(len, shards)) - min(map(len, shards)) <= 1
        assert shards == [shard_students(sorted(names), index, count) for index in range(count)]
    with pytest.raises(ValueError):
        shard_students(names, 3, 3)


def test_a_students_own_cell_metadata_is_read_as_no_counts(tmp_path: Path):
    """An experiment cell whose "tilelang_course" metadata is a string stopped every shard and autograde-status
    (judged_counts read it as a dict; the red team, 2026-12-05); counts that are not integers would have stopped
    the status's sums. Only the shape the judge writes is read."""
    from grader.nbgrader.shards import judged_counts

    def check(grade_id: str, meta: object) -> nbformat.NotebookNode:
        cell = nbformat.v4.new_code_cell('check("copy_serial")')
        cell.metadata.update({"nbgrader": {"grade_id": grade_id, "grade": True}, "tilelang_course": meta})
        return cell

    cells = [nbformat.v4.new_code_cell("x = 1", metadata={"tilelang_course": "x", "nbgrader": "y"})]
    cells += [check("p01_copy_threads_check", {"judge": {"checked": {"gpu": "many"}}})]
    cells += [check("p01_copy_tiles_check", {"judge": "forged"})]
    cells += [check("p01_copy_serial_check", {"judge": {"checked": {"gpu": 0, "simulated": 3}}})]
    path = tmp_path / "p01_copy.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert judged_counts(path) == {"p01 copy_serial": {"gpu": 0, "simulated": 3}}


def test_a_shards_log_is_no_students_log(tmp_path: Path):
    """A student named shard-0 wrote over the shard's own log: the shards' logs have a folder of their own."""
    from grader.nbgrader.shards import log_path, shard_log

    assert shard_log(tmp_path, "ps1", 0) != log_path(tmp_path, "ps1", "shard-0")
    assert shard_log(tmp_path, "ps1", 0).parent != log_path(tmp_path, "ps1", "anyone").parent


def test_a_course_config_without_a_root_keeps_its_gradebook_in_the_course(tmp_path: Path, monkeypatch):
    """``--course DIR`` with a config that names no root (nbgrader's default is the folder it runs in):
    the gradebook is DIR's, wherever the command was started (once it was ./gradebook.db in the checkout)."""
    from grader.nbgrader.shards import db_url

    course, elsewhere = tmp_path / "course", tmp_path / "elsewhere"
    course.mkdir(), elsewhere.mkdir()
    (course / "nbgrader_config.py").write_text("")
    monkeypatch.chdir(elsewhere)
    assert db_url(course) == f"sqlite:///{course / 'gradebook.db'}"
    assert statuses(course, ASSIGNMENT) == {}  # opening it creates the empty gradebook, in the course
    assert (course / "gradebook.db").is_file() and not list(elsewhere.iterdir())


def test_course_writes_the_db_url_and_the_sbatch_script(tmp_path: Path):
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    from grader.nbgrader.course import main as make_course

    url = "postgresql://grader@db.example/tilelang"
    assert make_course([str(tmp_path / "c"), "--puzzles", "02", "--db", url]) == 0
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path / "c")).load_config()
    assert CourseDirectory(config=config).db_url == url
    assert make_course([str(tmp_path / "d"), "--puzzles", "02", "--db", "nosuchdb://x"]) == 2
    script = tmp_path / "c" / "slurm" / "autograde.sbatch"
    text = script.read_text()
    assert "#SBATCH --gres=gpu:1" in text and f"#SBATCH --chdir={tmp_path / 'c'}" in text
    assert (tmp_path / "c" / "slurm" / "logs").is_dir()

    def task(*args: str, **array: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "TILELANG_COURSE_PYTHON": "echo", "SLURM_ARRAY_JOB_ID": "7", **array}
        return subprocess.run(["bash", str(script), *args], env=env, capture_output=True, text=True)

    whole = {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "4"}
    done = task("ps1", **whole, SLURM_ARRAY_TASK_COUNT="5")
    assert done.returncode == 0 and done.stdout.splitlines()[-1].endswith("--shard 2 --shards 5"), done
    one = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "3", "SLURM_ARRAY_TASK_MAX": "3"}
    done = task("ps1", **one, SLURM_ARRAY_TASK_COUNT="1")
    assert done.returncode == 2 and "name the number of shards" in done.stderr
    done = task("ps1", "5", **one, SLURM_ARRAY_TASK_COUNT="1")
    assert done.returncode == 0 and done.stdout.splitlines()[-1].endswith("--shard 3 --shards 5"), done
