"""The processes that decide a verdict start hermetic (grader.processes.hermetic): files planted where Python or
pytest would pick them up never run there. Written as a student who has read the grader would: every file below writes a
marker when it runs and tries to make a kernel that stores zeros pass; the kernel must still fail and no marker
may appear.

Planted at once, so each channel costs one grading: in the graded file's folder and its parent, the current
folder, $TMPDIR, and (for the channels the course starts itself) HOME's user site.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

from grader.outcome import Status
from tests.conftest import ROOT

ZEROS_GEMV = (ROOT / "tests" / "attacks" / "patch_compare.py").read_text().split('"""', 2)[2]
CASE = "square_256"

# A pytest hook that turns every report into a pass: what a conftest.py or a plugin named by an ini file would add.
FORGE = """
import pathlib
pathlib.Path({marker!r}).write_text("ran")

def pytest_runtest_makereport(item, call):
    pass

def pytest_collection_modifyitems(items):
    for item in items:
        item.runtest = lambda: None
"""
INI = {
    "pytest.ini": "[pytest]\naddopts = -p planted_plugin\n",
    "tox.ini": "[pytest]\naddopts = -p planted_plugin\n",
    "setup.cfg": "[tool:pytest]\naddopts = -p planted_plugin\n",
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "-p planted_plugin"\n',
}
MODULES = ("conftest", "planted_plugin", "torch", "numpy", "tilelang", "sitecustomize", "usercustomize", "pytest")


def plant(folder: Path, markers: Path, where: str, package: bool = True) -> None:
    """Every plant in ``folder``, each writing ``markers/WHERE-NAME`` when it runs."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in MODULES:
        code = FORGE.format(marker=str(markers / f"{where}-{name}"))
        if name not in ("conftest", "planted_plugin"):
            code += "\nraise ImportError('planted')\n"
        (folder / f"{name}.py").write_text(code)
    for name, text in INI.items():
        (folder / name).write_text(text)
    (folder / "__init__.py").write_text(FORGE.format(marker=str(markers / f"{where}-__init__")))
    if package:
        (folder / "grader").mkdir(exist_ok=True)
        (folder / "grader" / "__init__.py").write_text(FORGE.format(marker=str(markers / f"{where}-grader")))


def plant_user_site(home: Path, markers: Path) -> None:
    """A .pth and a usercustomize in HOME's user site-packages, as Python computes it for that HOME."""
    site = Path(sysconfig.get_path("purelib", f"{os.name}_user", vars={"userbase": str(home / ".local")}))
    site.mkdir(parents=True, exist_ok=True)
    marker = str(markers / "home-pth")
    (site / "planted.pth").write_text(f"import pathlib; pathlib.Path({marker!r}).write_text('ran')\n")
    (site / "usercustomize.py").write_text(FORGE.format(marker=str(markers / "home-usercustomize")))


def planted_course(tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    """(graded file, current folder, markers, environment) with plants everywhere."""
    markers = tmp_path / "markers"
    markers.mkdir()
    parent = tmp_path / "student"
    graded_folder = parent / "hw"
    plant(parent, markers, "parent")
    plant(graded_folder, markers, "graded-folder")
    graded = graded_folder / "p08_matrix.py"
    graded.write_text(ZEROS_GEMV)
    temporary = tmp_path / "tmpdir"
    plant(temporary, markers, "tmpdir")
    here = tmp_path / "here"
    plant(here, markers, "cwd", package=False)  # a grader/ here is what `python -m` itself resolves: see below
    home = tmp_path / "home"
    plant_user_site(home, markers)
    env = {**os.environ, "TMPDIR": str(temporary), "PYTEST_ADDOPTS": "-p planted_plugin"}
    env["PYTEST_PLUGINS"] = "planted_plugin"
    return graded, here, markers, env


def verdict(report: Path) -> dict:
    document = json.loads(report.read_text())
    (result,) = [r for r in document["results"] if r["kernel"] == "gemv"]
    return result


def test_nothing_planted_runs_in_a_check_typed_at_the_terminal(tmp_path: Path):
    """``python -m grader`` typed in a folder full of plants, with pytest's and Python's variables set by them."""
    graded, here, markers, env = planted_course(tmp_path)
    report = tmp_path / "report.json"
    temporary = Path(env["TMPDIR"])
    before = sorted(p.name for p in temporary.iterdir())
    arguments = ["08", "--file", str(graded), "-k", "gemv", "--exact", "--case", CASE, "--device", "cpu"]
    done = subprocess.run(
        [sys.executable, "-m", "grader", *arguments, "--json", str(report)],
        cwd=here,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert sorted(p.name for p in markers.iterdir()) == [], done.stdout + done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdict(report)["status"] == Status.FAILED
    # every temporary folder of the run (the judge's, the tracer's, the trial sandbox's) is gone
    assert sorted(p.name for p in temporary.iterdir()) == before


def test_nothing_planted_runs_in_a_check_the_course_starts(tmp_path: Path, monkeypatch):
    """The route of a notebook's check() and of nbgrader's JudgeChecks (grader.processes.launch.grade),
    whose module sits in $TMPDIR: the same plants, and the ones only a process the course starts can be kept
    from (HOME's user site, PYTHONSTARTUP, the current folder and $TMPDIR on PYTHONPATH)."""
    import tempfile

    from grader.processes.launch import check_options, grade

    graded, here, markers, env = planted_course(tmp_path)
    env["HOME"] = str(tmp_path / "home")
    env["PYTHONSTARTUP"] = str(here / "conftest.py")
    env["PYTHONPATH"] = os.pathsep.join([str(here), env["TMPDIR"], os.environ.get("PYTHONPATH", "")])
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(tempfile, "tempdir", None)  # found again from TMPDIR
    monkeypatch.chdir(here)
    run = grade("08", ZEROS_GEMV, check_options(["gemv"], 600, device="cpu", cases=CASE), 600)
    assert sorted(p.name for p in markers.iterdir()) == [], run.output
    assert run.returncode == 1, run.output
    (result,) = [r for r in run.results if r.kernel == "gemv"]
    assert result.status == Status.FAILED


def test_the_hermetic_path_keeps_out_the_folders_anyone_can_plant_in(tmp_path: Path, monkeypatch):
    from grader.processes import hermetic

    world = tmp_path / "world"
    world.mkdir()
    world.chmod(0o777)
    named = tmp_path / "bundle"
    named.mkdir()
    env = {"PYTHONPATH": os.pathsep.join(["relative", str(tmp_path), str(world), str(named)]), "HOME": str(tmp_path)}
    assert hermetic.trusted_paths(env, cwd=str(tmp_path)) == [hermetic.ROOT, str(named)]
    kept = hermetic.environment({**env, "PYTHONSTARTUP": "x", "PYTHONHOME": "y", "PYTEST_ADDOPTS": "-p x"})
    assert "PYTHONSTARTUP" not in kept and "PYTHONHOME" not in kept and "PYTEST_ADDOPTS" not in kept
    assert kept["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] == "1"
    assert hermetic.command("grader", "08")[1] == "-I"
