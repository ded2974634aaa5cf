"""Every process that decides or reports a verdict starts hermetic: nothing near the graded file, in the
current folder, in $TMPDIR or in HOME can put code into it.

Python itself would: ``python -m grader`` puts the current folder first on ``sys.path`` (a ``torch.py``
there is imported instead of torch), runs ``sitecustomize``/``usercustomize`` and the ``.pth`` files of
the user's site-packages, and obeys ``PYTHON*`` variables (``PYTHONSTARTUP``, ``PYTHONHOME``,
``PYTHONBREAKPOINT``). So a trusted process is an interpreter started with ``-I`` (no current or script
folder on the path, no user site, no ``PYTHON*`` variable), which then puts back on ``sys.path`` only
the course's own root (found from this file, not from the current folder) and the ``PYTHONPATH``
folders the person running the grader named, less those anyone could plant in (``trusted_paths``).

``command(module, *args)`` is how a trusted process starts another; ``reexec(module, argv)`` is how
``python -m grader``, typed by a person, becomes one before it imports anything else. What Python
resolves before any course code runs stays outside this: ``python -m grader`` in a folder that holds a
``grader/`` package runs that package (docs/security.md says how an instructor avoids it).

This module imports only the standard library: it runs first.
"""

# Only modules every interpreter has loaded before it runs a line of ours (os, sys): anything else would be
# looked up on a sys.path that still starts with the current folder.
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # the course, from this file

# PYTHON* variables a trusted process passes on (to compilers and the tracer, which start without -I); any other
# (PYTHONSTARTUP, PYTHONHOME, PYTHONBREAKPOINT, PYTHONUSERBASE, PYTHONINSPECT, ...) is dropped.
KEPT_PYTHON_ENV = ("PYTHONPATH", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONUTF8", "PYTHONDONTWRITEBYTECODE")
# pytest reads these before any course code could refuse them: extra options, plugins to load, plugins found by
# entry point. The grader's pytest loads only the plugin the course names.
DROPPED_PYTEST_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DEBUG", "PYTEST_THEME", "PYTEST_THEME_MODE")

_BOOT = (
    "import sys\n"
    "sys.path[:0] = {paths!r}\n"
    "if {quiet!r}:\n"
    "    import warnings; warnings.simplefilter('ignore')\n"
    "import runpy\n"
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)\n"
)


def _writable_by_anyone(folder):
    """/tmp and the like: a folder any local user may create files in."""
    try:
        return bool(os.stat(folder).st_mode & 0o002)
    except OSError:
        return True


def _temporary_folder(env):
    """$TMPDIR (or TEMP, TMP), else /tmp: tempfile.gettempdir() without importing tempfile."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if env.get(name):
            return env[name]
    return "/tmp"


def trusted_paths(env=None, cwd=None):
    """The course root, then each PYTHONPATH folder that is absolute and exists and is none of: the current
    folder (this process's, and ``cwd``, the child's), $TMPDIR, HOME, or a folder anyone may write to. (A GPU
    host's bundle of TileLang, e.g. /tmp/site, is such a PYTHONPATH folder; a relative entry would mean the
    current folder.)"""
    env = os.environ if env is None else env
    refused = {os.getcwd(), cwd or os.getcwd(), _temporary_folder(env), env.get("HOME") or "/"}
    refused = {os.path.realpath(p) for p in refused}  # the caller's folder and the child's
    paths = [ROOT]
    for entry in (env.get("PYTHONPATH") or "").split(os.pathsep):
        if not entry or not os.path.isabs(entry) or not os.path.isdir(entry):
            continue
        folder = os.path.realpath(entry)
        if folder in refused or _writable_by_anyone(folder) or folder in paths:
            continue
        paths.append(folder)
    return paths


def environment(env=None, cwd=None):
    """``env`` for a trusted process: PYTHON* variables only from KEPT_PYTHON_ENV (PYTHONPATH as
    trusted_paths), pytest's own variables dropped and its plugin autoload off."""
    env = dict(os.environ if env is None else env)
    out = {
        name: value
        for name, value in env.items()
        if not (name.startswith("PYTHON") and name not in KEPT_PYTHON_ENV) and name not in DROPPED_PYTEST_ENV
    }
    out["PYTHONPATH"] = os.pathsep.join(trusted_paths(env, cwd))
    out["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return out


def command(module, *args, env=None, cwd=None):
    """``python -m MODULE ARGS`` as a hermetic interpreter (see the module's docstring)."""
    env = os.environ if env is None else env
    boot = _BOOT.format(paths=trusted_paths(env, cwd), module=module, quiet=env.get("PYTHONWARNINGS") == "ignore")
    return [sys.executable, "-I", "-c", boot, *args]


def is_hermetic():
    """This interpreter started as command() starts one: -I, so no current folder, user site or PYTHON*."""
    return bool(sys.flags.isolated)


def reexec(module, argv):
    """Become ``command(module, *argv)`` unless already hermetic. Call it before importing anything that is
    not the standard library: until then nothing from the current folder has been imported."""
    if is_hermetic():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, command(module, *argv), environment())
