"""grader.settings: one option table behind both front ends, GradeOptions, JudgeRequest, the environment names."""

import json
import os
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest
from _pytest.config.argparsing import Parser

from grader import settings
from grader.discover import course_root
from grader.frontends import cli, plugin
from grader.settings import CLI, OPTIONS, PYTEST, GradeOptions, JudgeRequest

ROOT = course_root()


@pytest.fixture(autouse=True)
def _no_arch_in_environment(monkeypatch):
    monkeypatch.delenv(settings.ARCH, raising=False)


def from_cli(*argv: str) -> GradeOptions:
    return GradeOptions.from_parsed(cli.parser().parse_args(["08", *argv]), CLI)


def pytest_parser() -> Parser:
    parser = Parser(_ispytest=True)
    plugin.pytest_addoption(parser)
    return parser


def from_pytest(*argv: str) -> GradeOptions:
    return GradeOptions.from_parsed(pytest_parser().parse(list(argv)), PYTEST)


def flags_of(parser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def test_the_table_is_the_dataclass():
    assert [o.name for o in OPTIONS] == [f.name for f in fields(GradeOptions)]
    for option, field in zip(OPTIONS, fields(GradeOptions), strict=True):
        assert field.default == option.default, option.name
    assert len({o.cli for o in OPTIONS if o.cli}) == len([o for o in OPTIONS if o.cli])
    assert all(o.pytest.startswith("--grade-") for o in OPTIONS if o.pytest)


def test_both_parsers_declare_exactly_the_tables_flags():
    cli_flags = flags_of(cli.parser())
    assert {o.cli for o in OPTIONS if o.cli} <= cli_flags
    pytest_flags = {name for option in pytest_parser().getgroup("grader").options for name in option.names()}
    assert pytest_flags == {o.pytest for o in OPTIONS if o.pytest} | {"--grade"}
    assert settings.OPTION["spec_dir"].fronts == (PYTEST,)
    assert settings.OPTION["device"].fronts == (CLI, PYTEST)


def test_defaults_agree_between_the_routes():
    by_cli, by_pytest = from_cli(), from_pytest()
    assert by_cli == by_pytest == GradeOptions()
    assert by_cli.memory_limit_gb == by_pytest.memory_limit_gb == 32.0  # was 0 (none) through pytest --grade
    assert by_cli.timeout == 180.0 and by_cli.device == "auto" and by_cli.params == ()


def test_equal_flags_give_equal_options(tmp_path):
    saved = str(tmp_path / "failed")
    by_cli = from_cli(
        *("--device", "cpu", "--arch", "sm_80", "--case", "tail_1000,small", "-k", "gemv", "--exact", "--bench"),
        "--full",
        *("--param", "BLOCK_N=64", "--param", "STAGES=2", "--json", "r.json", "--timeout", "5", "--seed-offset", "3"),
        *("--memory-limit", "4", "--save-failures", saved, "--verbose"),
    )
    by_pytest = from_pytest(
        *("--grade-device", "cpu", "--grade-arch", "sm_80", "--grade-cases", "tail_1000,small"),
        *("--grade-kernels", "gemv", "--grade-kernels-exact", "--grade-bench", "--grade-param", "BLOCK_N=64"),
        "--grade-full",
        *("--grade-param", "STAGES=2", "--grade-json", "r.json", "--grade-timeout", "5", "--grade-seed-offset", "3"),
        *("--grade-memory-limit", "4", "--grade-save-failures", saved, "--grade-verbose"),
    )
    assert by_cli == by_pytest
    assert by_cli.params == ("BLOCK_N=64", "STAGES=2") and by_cli.block_params() == {"BLOCK_N": 64, "STAGES": 2}
    assert by_cli.timeout == 5.0 and by_cli.seed_offset == 3 and by_cli.memory_limit_gb == 4.0
    assert by_cli.json == Path("r.json") and by_cli.save_failures == Path(saved)
    assert by_cli.kernels_exact and by_cli.bench and by_cli.verbose and by_cli.full


def test_arch_defaults_to_the_environment_by_both_routes(monkeypatch):
    monkeypatch.setenv(settings.ARCH, "sm_86")
    assert from_cli().arch == from_pytest().arch == "sm_86"
    assert from_cli("--arch", "sm_80").arch == "sm_80"


def test_pytest_argv_is_generated_from_the_table_and_read_back_equal(tmp_path):
    options = GradeOptions(
        kernels="gemv,add",
        cases="tail_1000",
        kernels_exact=True,
        bench=True,
        params=("BLOCK_N=64", "STAGES=2"),
        json=tmp_path / "r.json",
        device="compile",
        arch="sm_75",
        timeout=7.5,
        seed_offset=-2,
        save_failures=tmp_path / "f",
        memory_limit_gb=0.0,
        verbose=True,
        spec_dir=tmp_path,
    )
    argv = options.pytest_argv()
    assert argv.count("--grade-param") == 2 and "--grade-memory-limit" in argv
    assert from_pytest(*argv) == options
    assert GradeOptions().pytest_argv() == []  # defaults go unsaid: the plugin has the same ones


def test_the_cli_hands_the_run_its_options_typed_and_pytest_none(tmp_path):
    """The command line's flags become a typed request (grader.frontends.grading.run takes it as it is): pytest's
    own argv holds the files and the plugin's fixed settings, and no option."""
    from grader.frontends import grading

    flags = ["-k", "gemv", "--bench", "--json", "r.json", "--verbose", "--timeout", "5"]
    args = cli.parser().parse_args(["08", *flags])
    request = cli.grade_request(args, cli.targets(args, ROOT))
    assert request.options == from_cli(*flags) == cli.grade_options(args)
    assert [(puzzle_id, Path(path).name) for puzzle_id, path in request.targets] == [("08", "p08_matrix.py")]
    argv = grading.pytest_args(request)
    option_flags = {flag for option in settings.OPTIONS for flag in (option.cli, option.pytest) if flag}
    assert not option_flags & set(argv) and "--grade" not in argv and "5" not in argv
    assert argv[0].endswith("p08_matrix.py") and "grader.frontends.plugin" in argv
    relative = cli.grade_options(cli.parser().parse_args(["08", "--save-failures", "here"]))
    assert relative.save_failures == Path("here").resolve()


def test_help_names_each_front_ends_own_flags():
    cli_help = cli.parser().format_help()
    assert "-k names are whole kernel names only" in cli_help and "with --bench:" in cli_help
    assert "only the kernel named NAME" in " ".join(cli_help.split())  # -k NAME: exact first, then a substring
    assert settings.ARCH in cli_help and "(default 32;" in cli_help
    group = pytest_parser().getgroup("grader")
    helps = {option.names()[0]: option.attrs()["help"] for option in group.options}
    assert helps["--grade-kernels-exact"].startswith("--grade-kernels names are whole kernel names")
    assert "--grade-cases" in helps["--grade-full"] and "--grade-device compile" in helps["--grade-full"]
    assert helps["--grade-param"].startswith("with --grade-bench:")
    assert "-: to stdout" in cli_help and "stdout" not in helps["--grade-json"]  # the CLI's own redirection


def test_options_and_requests_cross_a_process_boundary_as_json():
    options = GradeOptions(params=("BLOCK_N=64",), json=Path("r.json"), device="cpu", memory_limit_gb=2.5)
    data = json.loads(json.dumps(options.to_dict()))
    assert data["params"] == ["BLOCK_N=64"] and data["json"] == "r.json"
    assert GradeOptions.from_dict(data) == options
    request = JudgeRequest("08", "solutions/p08_matrix.py", "puzzles/p08_matrix.py", options)
    sent = json.loads(json.dumps(request.with_scratch("/tmp/judge-1").to_dict()))
    back = JudgeRequest.from_dict(sent)
    assert back.options == options and back.scratch == "/tmp/judge-1" and back.puzzle_id == "08"
    with pytest.raises(TypeError, match="memory_limit"):
        GradeOptions.from_dict({"memory_limit": 3})


def test_block_params_say_which_text_is_wrong():
    assert GradeOptions(params=("BLOCK_N=-1",)).block_params() == {"BLOCK_N": -1}
    for bad in ("block_n=64", "BLOCK_N", "BLOCK_N=x"):
        with pytest.raises(ValueError, match=re.escape(f"--param {bad}:")):
            GradeOptions(params=(bad,)).block_params()
    with pytest.raises(cli.UsageError):
        cli.parse_params(["nope"])


def test_the_plugin_refuses_a_bad_param_before_grading(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "grader.frontends.plugin", "--grade-param", "nope", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "--param nope: write a block parameter" in done.stderr


def test_every_environment_name_is_declared_once():
    names = settings.ENVIRONMENT
    assert len(set(names)) == len(names) and all(n.startswith(settings.PREFIX) for n in names)
    texts = {path: path.read_text() for path in (ROOT / "grader").rglob("*.py")}
    for name in names:
        declared = [p for p, text in texts.items() if f'"{name}"' in text or f"'{name}'" in text]
        assert declared == [ROOT / "grader" / "settings.py"], (name, declared)
    found = {m for text in texts.values() for m in re.findall(r"\bTILELANG_COURSE_[A-Z_]+", text)}
    assert found <= set(names), found - set(names)


def test_the_old_module_names_are_aliases():
    from grader import i18n
    from grader.frontends import notebook, warm
    from grader.pipeline import hidden
    from grader.processes import sandbox

    assert hidden.ENV == settings.HIDDEN_CASES and i18n.ENV == settings.LANG and warm.WARM_ENV == settings.WARM
    assert sandbox.ENV == settings.SANDBOX and sandbox.HIDE_ENV == settings.SANDBOX_HIDE
    assert notebook.JUDGE_AFTER_ENV == settings.JUDGE_AFTER
    assert notebook.TIMEOUT_ENV == settings.CHECK_TIMEOUT and notebook.WARM_SWITCH_ENV == settings.WARM_GRADER


def test_settings_imports_nothing_from_grader():
    source = (ROOT / "grader" / "settings.py").read_text()
    assert not re.search(r"^\s*(from|import) grader", source, re.MULTILINE)


def test_only_a_narrowed_check_without_a_gpu_leaves_the_large_cases_uncompiled(monkeypatch):
    """The quick check: -k on a machine that simulates. Everything else compiles every case, so a large case
    that does not build (shared memory, registers) is still found before the learner leaves the puzzle."""
    monkeypatch.delenv(settings.HIDDEN_CASES, raising=False)
    assert plugin.is_quick(GradeOptions(kernels="gemv"), "cpu")
    assert not plugin.is_quick(GradeOptions(), "cpu")  # a whole puzzle
    assert not plugin.is_quick(GradeOptions(kernels="gemv", full=True), "cpu")
    assert not plugin.is_quick(GradeOptions(kernels="gemv"), "compile")  # --device compile, or no simulator
    assert not plugin.is_quick(GradeOptions(kernels="gemv"), "cuda")  # a GPU runs them all
    assert not plugin.is_quick(GradeOptions(kernels="gemv", bench=True), "cpu")
    assert not plugin.is_quick(GradeOptions(kernels="gemv", profile="gemv"), "cpu")  # profiles the large case
    assert cli.grade_options(cli.parser().parse_args(["08", "--solutions", "-k", "gemv"])).full  # the course's own
    assert not cli.grade_options(cli.parser().parse_args(["08", "-k", "gemv"])).full
    monkeypatch.setenv(settings.HIDDEN_CASES, "/course/hidden.json")  # an instructor's run
    assert not plugin.is_quick(GradeOptions(kernels="gemv"), "cpu")


def test_the_command_that_compiles_what_a_quick_check_left_out(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "p08_matrix.py"
    options = GradeOptions(kernels="gemv", device="cpu", arch="sm_80")
    assert plugin.compile_all_command("08", mine, options) == (
        "python -m grader 08 --file p08_matrix.py -k gemv --device cpu --arch sm_80 --full"
    )
    course = ROOT / "puzzles" / "p08_matrix.py"  # the course's own puzzle file: no --file
    assert plugin.compile_all_command("08", course, GradeOptions(kernels="matmul", kernels_exact=True)) == (
        "python -m grader 08 -k matmul --exact --full"
    )


def test_compile_jobs_reads_its_variable_else_the_usable_cpus(monkeypatch):
    monkeypatch.setenv(settings.COMPILE_JOBS, "3")
    assert settings.compile_jobs() == 3
    monkeypatch.setenv(settings.COMPILE_JOBS, "0")
    assert settings.compile_jobs() == 1  # never no compile at all
    monkeypatch.setenv(settings.COMPILE_JOBS, "many")
    assert settings.compile_jobs() == settings.usable_cpus() == len(os.sched_getaffinity(0))


def test_the_instructors_options_come_from_one_table():
    """nbgrader's JudgeChecks traits and autograde-shard(s)' flags are built from settings.INSTRUCTOR_OPTIONS: the
    same names (courses' configs and scripts use them), defaults, choices and help; one device vocabulary."""
    from nbgrader.preprocessors import NbGraderPreprocessor

    from grader.nbgrader import shards
    from grader.nbgrader.judge import JudgeChecks

    table = settings.INSTRUCTOR_OPTION
    assert set(table) == {"device", "timeout", "no_sandbox", "hidden_cases", "bench"}  # nbgrader_config.py's names
    assert set(settings.GRADING_DEVICES) < set(settings.DEVICES)  # the grader's own words, fewer of them
    assert table["device"].choices == settings.GRADING_DEVICES
    traits = JudgeChecks.class_traits(config=True)
    for name, option in table.items():
        trait = traits[name]
        assert (trait.default_value, trait.help) == (option.default, option.help), name
        assert tuple(getattr(trait, "values", None) or ()) == (option.choices or ()), name
    inherited = NbGraderPreprocessor.class_traits(config=True)
    assert {name for name in traits if name not in inherited} == set(table)  # no trait declared apart
    shard, shards_at_once = shards.shard_parser(), shards.shards_parser()
    for parser, argv in ((shard, ["ps1", "--shard", "0", "--shards", "1"]), (shards_at_once, ["ps1", "--shards", "1"])):
        taken = {action.dest: action for action in parser._actions if action.dest in table}
        assert set(taken) == {name for name, option in table.items() if option.flag}
        for name, action in taken.items():
            option = table[name]
            assert action.option_strings == [option.flag] and action.help == option.help
            assert (action.default, action.choices) == (option.default, option.choices), name
        args = parser.parse_args(argv)
        assert (args.device, args.no_sandbox) == (table["device"].default, table["no_sandbox"].default)
        assert parser.parse_args([*argv, "--device", "cpu", "--no-sandbox"]).device == "cpu"


def test_the_instructors_device_falls_back_to_the_environment_then_cuda(monkeypatch):
    monkeypatch.delenv(settings.DEVICE, raising=False)
    assert settings.grading_device(None) == "cuda" and settings.grading_device("cpu") == "cpu"
    monkeypatch.setenv(settings.DEVICE, "cpu")
    assert settings.grading_device(None) == "cpu" and settings.grading_device("cuda") == "cuda"


def test_only_settings_names_the_devices_or_declares_an_instructor_option():
    """No second vocabulary: the device words are written in settings alone, no module declares a --device flag
    of its own (the CLI's comes from settings.OPTIONS), and no nbgrader module a --no-sandbox flag. (The CLI's own
    --no-sandbox, a learner's switch outside OPTIONS, is left for the step that puts it there.)"""
    for path in (ROOT / "grader").rglob("*.py"):
        if path.name == "settings.py":
            continue
        text = path.read_text()
        assert not re.search(r"""\(["']cuda["'], ["']cpu["']""", text), path
        assert not re.search(r"""add_argument\(\s*["']--device["']""", text), path
        if "nbgrader" in path.parts:
            assert not re.search(r"""add_argument\(\s*["']--no-sandbox["']""", text), path


def test_the_notebooks_and_the_courses_time_limits_are_the_settings(monkeypatch):
    import inspect

    from grader.frontends import notebook
    from grader.nbgrader import course

    monkeypatch.delenv(settings.CHECK_TIMEOUT, raising=False)
    assert notebook.default_timeout() == settings.DEFAULT_CHECK_TIMEOUT_S
    assert inspect.signature(notebook.bench).parameters["timeout"].default == settings.BENCH_TIMEOUT_S
    assert inspect.signature(notebook.profile).parameters["timeout"].default == settings.PROFILE_TIMEOUT_S
    assert course.CHECK_TIMEOUT_S == settings.INSTRUCTOR_OPTION["timeout"].default  # the course's check() calls
