"""--profile KERNEL [--static] (issue 27): the profile names why a slow kernel is slow.

tests/slow_kernels/pNN/*.py are correct kernels, written as a learner might, that are slow for one cause each
(their CAUSE). On any machine the static estimate must name the causes it can see (spills, too few
blocks); on a GPU Nsight Compute's counters must name every file's cause, and the course's own kernels
must show what they are tuned for (DRAM bandwidth for the copy, Tensor Cores for the GEMM).

The CLI is run as a learner runs it, in a fresh process, with ``--json -``.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from grader.outcome import CaseResult
from grader.pipeline.profile import advice, counters
from tests.conftest import ROOT

SLOW = ROOT / "tests" / "slow_kernels"  # not tests/slow, which would read as the slow marker

# What advice.py's rule for each cause begins its sentence with.
CAUSE_SENTENCE = {
    "uncoalesced": "Uncoalesced reads",
    "spills": "Registers ran out",
    "parallelism": "Too little parallelism",
    "bank_conflicts": "Shared-memory bank conflicts",
}
# The causes the static estimate can see without counters (ptxas's spills, the grid).
STATIC_CAUSES = ("spills", "parallelism")


def slow_file(path: Path) -> dict[str, str]:
    """A slow file's puzzle id, KERNEL and CAUSE, read without importing it."""
    constants = {
        node.targets[0].id: node.value.value
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
    }
    return {"puzzle": path.parent.name.removeprefix("p"), "kernel": constants["KERNEL"], "cause": constants["CAUSE"]}


SLOW_FILES = sorted(SLOW.glob("p*/*.py"))


def slow_param(path: Path) -> pytest.param:
    return pytest.param(path, id=f"{path.parent.name}/{path.stem}")


@functools.cache
def grader(*args: str) -> tuple[int, str, str]:
    """``python -m grader ARGS --json -`` in a fresh process: (exit status, stdout, stderr). Cached, so tests
    that read the same run (the cause and the bank-conflict figures, say) pay for it once per worker."""
    done = subprocess.run(
        [sys.executable, "-m", "grader", *args, "--json", "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    return done.returncode, done.stdout, done.stderr


def results(*args: str) -> list[dict]:
    code, out, err = grader(*args)
    assert out.strip(), f"exit {code}, no JSON on stdout:\n{err[-3000:]}"
    found = json.loads(out)["results"]
    assert found, f"exit {code}, no results:\n{err[-3000:]}"
    return found


def names_cause(profile: dict, cause: str) -> bool:
    return any(line.startswith(CAUSE_SENTENCE[cause]) for line in profile["advice"])


def test_every_slow_file_names_a_known_cause_and_a_kernel_of_its_puzzle():
    assert len(SLOW_FILES) >= 4
    causes = {slow_file(path)["cause"] for path in SLOW_FILES}
    assert causes == set(CAUSE_SENTENCE), causes
    for path in SLOW_FILES:
        about = slow_file(path)
        spec = next((ROOT / "solutions").glob(f"p{about['puzzle']}_*.py")).read_text()
        assert f"def {about['kernel']}(" in spec, path


# ------------------------------------------------------------------------------------ CPU: the CLI


def test_static_without_profile_is_a_usage_error():
    code, _, err = grader("02", "--solutions", "--static")
    assert code == 2
    assert "--static goes with --profile KERNEL" in err


def test_profile_of_an_unknown_kernel_lists_the_puzzles_kernels():
    code, _, err = grader("02", "--solutions", "--profile", "nosuch")
    assert code != 0
    assert "--profile nosuch: puzzle 02 has no such kernel (its kernels: add, mul_relu, add_fragments)" in err


@pytest.mark.parametrize("path", [slow_param(p) for p in SLOW_FILES if slow_file(p)["cause"] in STATIC_CAUSES])
def test_static_profile_names_the_cause_beside_the_course_kernel(path: Path):
    about = slow_file(path)
    profiled = results(about["puzzle"], "--file", str(path), "--profile", about["kernel"], "--static")
    assert profiled and all(r["kernel"] == about["kernel"] for r in profiled)
    for result in profiled:
        profile = result["profile"]
        assert profile["mode"] == "static"
        assert names_cause(profile, about["cause"]), (result["case"], profile["advice"], profile["yours"])
        # the course's kernel measured the same way, on the same case
        reference = profile["reference"]
        assert reference["grid"] >= 1 and reference["registers"] > 0 and reference["threads"] > 0
        # the JSON is a CaseResult, profile included
        again = CaseResult.from_dict(result)
        assert again.profile is not None and again.profile.advice == profile["advice"]
        assert again.to_dict() == result
    # profiling never changes a verdict: the same cases graded without --profile
    cases = ",".join(r["case"] for r in profiled)
    plain = results(about["puzzle"], "--file", str(path), "-k", about["kernel"], "--exact", "--case", cases)
    assert {r["case"]: r["status"] for r in plain} == {r["case"]: r["status"] for r in profiled}
    assert all(r.get("profile") is None for r in plain)


def test_static_figures_of_the_slow_kernels():
    """The evidence behind the static advice, as numbers: the one-block add launches 1 block where the
    course's launches 32768; the two-accumulator GEMM spills where the course's does not."""
    add = results("02", "--file", str(SLOW / "p02" / "add_one_block_loop.py"), "--profile", "add", "--static")
    assert add[0]["profile"]["yours"]["grid"] == 1
    assert add[0]["profile"]["reference"]["grid"] == 2**27 // 4096
    gemm = results(
        "08", "--file", str(SLOW / "p08" / "matmul_tuned_two_accumulators.py"), "--profile", "matmul_tuned", "--static"
    )
    for result in gemm:
        assert result["profile"]["yours"]["spill_bytes"] > 0
        assert result["profile"]["reference"]["spill_bytes"] == 0


# ------------------------------------------------------------------------ units: counters and advice

RAW_PAGE = """==PROF== Connected to process 4242 (/usr/bin/python3)
==PROF== Profiling "row_sum_kernel": 0%....50%....100% - 40 passes
"ID","Kernel Name","gpu__time_duration.sum","dram__bytes_read.sum","dram__bytes_write.sum",\
"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed","l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",\
"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum","l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",\
"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio","l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum",\
"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum","launch__grid_size","launch__block_size",\
"launch__registers_per_thread","device__attribute_multiprocessor_count",\
"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",\
"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",\
"smsp__average_warps_issue_stalled_selected_per_issue_active.ratio","launch__occupancy_limit_registers",\
"launch__occupancy_limit_shared_mem","launch__occupancy_limit_warps","launch__occupancy_limit_blocks"
"","","ns","byte","byte","%","","","sector","byte/sector","sector","sector","","","register/thread","","","","",\
"block","block","block","block"
"0","row_sum_kernel","181,728","268,435,456","131,072","90.37","7,000","8,000","1,048,576","2","64","32",\
"16384","256","40","132","3.5","0.5","1.0","2","32","8","32"
"1","row_sum_kernel","1,000","n/a","0","1.5","0","0","0","0","0","0","1","32","16","132","","","","8","32","64",\
"32"
==PROF== Disconnected from process 4242
"""


def test_parse_raw_csv_skips_the_log_and_the_units_row():
    rows = counters.parse_raw_csv(RAW_PAGE)
    assert [row["ID"] for row in rows] == ["0", "1"]
    assert rows[0]["Kernel Name"] == "row_sum_kernel"
    assert rows[0]["gpu__time_duration.sum"] == "181,728"
    assert counters.parse_raw_csv("==PROF== no kernels were profiled\n") == []


def test_figures_read_the_counters_into_named_figures():
    first, second = (counters.figures(row) for row in counters.parse_raw_csv(RAW_PAGE))
    assert first["duration_us"] == pytest.approx(181.73)  # "181,728" ns: thousands separators read
    assert first["dram_pct"] == pytest.approx(90.37)
    assert first["dram_bytes"] == 268_435_456 + 131_072
    assert first["bank_conflict_pct"] == pytest.approx(87.5) and first["bank_conflicts"] == 7000
    assert first["sector_use_pct"] == pytest.approx(100 * 2 / 32)
    assert first["local_bytes"] == (64 + 32) * 32
    assert first["stalls"] == [["long_scoreboard", 87.5], ["barrier", 12.5]]  # "selected" is no stall
    assert (first["grid"], first["threads"], first["registers"], first["sm_count"]) == (16384, 256, 40, 132)
    assert first["occupancy_limit"] == "registers" and first["blocks_per_sm"] == 2
    # "n/a" and zero counts leave a figure out rather than guess it
    assert "dram_bytes" not in second and "sector_use_pct" not in second and "bank_conflict_pct" not in second
    assert "stalls" not in second
    both = counters.combined(counters.parse_raw_csv(RAW_PAGE))
    assert both["launches"] == 2 and both["duration_us"] == pytest.approx(182.73)
    assert both["grid"] == 16384  # the longest launch describes the kernel


EVIDENCE = {
    "parallelism": ({"grid": 1, "sm_count": 132}, {"grid": 132, "sm_count": 132}),
    "spills": ({"spill_bytes": 768, "registers": 168}, {"spill_bytes": 0, "local_bytes": 0, "registers": 168}),
    "uncoalesced": ({"sector_use_pct": 6.25}, {"sector_use_pct": 100.0}),
    "bank_conflicts": ({"bank_conflict_pct": 87.5}, {"bank_conflict_pct": 3.0}),
}


@pytest.mark.parametrize("cause", sorted(EVIDENCE))
def test_each_rule_fires_on_its_evidence_and_not_without(cause: str):
    present, absent = EVIDENCE[cause]
    said = advice.advise(present, {})
    assert len(said) == 1 and said[0].startswith(CAUSE_SENTENCE[cause]), said
    assert not any(line.startswith(CAUSE_SENTENCE[cause]) for line in advice.advise(absent, {}))


def test_advice_details_and_order():
    assert len(nothing := advice.advise({}, {})) == 1 and nothing[0].startswith("No cause stands out"), nothing
    assert (
        "The course's kernel launches 4,096 blocks." in advice.advise({"grid": 1, "sm_count": 132}, {"grid": 4096})[0]
    )
    same = advice.advise({"grid": 1, "sm_count": 132}, {"grid": 1})[0]  # copy_serial: one block by design
    assert same.startswith("Too little parallelism: 1 block for") and "lesson's starting point" in same
    assert advice.advise({"grid": 60, "sm_count": 132}, {})  # under half the SMs
    assert advice.advise({"grid": 66, "sm_count": 132}, {})[0].startswith("No cause stands out")
    assert advice.advise({"grid": 1}, {})[0].startswith("No cause stands out")  # no SM count, no claim
    assert "6.0 KB of local-memory traffic" in advice.advise({"local_bytes": 6000, "registers": 40}, {})[0]
    # the most severe first, and at most two sentences
    everything = {name: value for present, _ in EVIDENCE.values() for name, value in present.items()}
    said = advice.advise(everything, {})
    assert len(said) == advice.MOST == 2
    assert said[0].startswith(CAUSE_SENTENCE["parallelism"]) and said[1].startswith(CAUSE_SENTENCE["spills"])
    assert advice.comparison({"duration_us": 200.0}, {"duration_us": 100.0}).endswith("(2.00x).")
    assert advice.comparison({"duration_us": 200.0}, {}) == ""


# ---------------------------------------------------------------------- GPU: Nsight Compute's counters


def gpu_profile(*args: str) -> list[dict]:
    profiled = results(*args)
    for result in profiled:
        profile = result["profile"]
        assert profile["mode"] == "gpu", profile
        assert not profile["problem"], profile["problem"]
    return profiled


@pytest.mark.gpu
@pytest.mark.xdist_group("nsight-compute")  # one profiling session at a time holds the counters
@pytest.mark.parametrize("path", [slow_param(p) for p in SLOW_FILES])
def test_counters_name_each_slow_kernels_cause(path: Path):
    about = slow_file(path)
    for result in gpu_profile(about["puzzle"], "--file", str(path), "--profile", about["kernel"]):
        assert result["status"] == "passed", (result["case"], result["message"])  # slow, not wrong
        profile = result["profile"]
        assert names_cause(profile, about["cause"]), (result["case"], profile["advice"], profile["yours"])
        assert profile["reference"].get("duration_us"), profile["reference"]
        assert profile["yours"]["duration_us"] > profile["reference"]["duration_us"]


@pytest.mark.gpu
@pytest.mark.xdist_group("nsight-compute")  # one profiling session at a time holds the counters
def test_course_copy_runs_near_the_dram_limit():
    (result,) = gpu_profile("01", "--solutions", "--profile", "copy_tiles")
    assert result["profile"]["yours"]["dram_pct"] >= 80, result["profile"]["yours"]


@pytest.mark.gpu
@pytest.mark.xdist_group("nsight-compute")  # one profiling session at a time holds the counters
def test_course_tuned_gemm_keeps_the_tensor_cores_busy():
    """Busy on the large squares; on last_wave the second, nearly empty wave of blocks idles them (about
    half, h200-profiles.md): the tail stream-K exists to fill, so it must show, not pass a 50% bar."""
    busy = {
        r["case"]: r["profile"]["yours"]["tensor_pct"]
        for r in gpu_profile("08", "--solutions", "--profile", "matmul_tuned")
    }
    tail = {case: pct for case, pct in busy.items() if case.startswith("last_wave")}
    full = {case: pct for case, pct in busy.items() if case not in tail}
    assert full and tail, busy
    assert min(full.values()) >= 80, busy
    assert max(tail.values()) < min(full.values()) - 20, busy


@pytest.mark.gpu
@pytest.mark.xdist_group("nsight-compute")  # one profiling session at a time holds the counters
def test_bank_conflicted_layout_reports_conflicts_above_the_course_kernel():
    paths = [p for p in SLOW_FILES if slow_file(p)["cause"] == "bank_conflicts"]
    assert paths
    for path in paths:
        about = slow_file(path)
        for result in gpu_profile(about["puzzle"], "--file", str(path), "--profile", about["kernel"]):
            yours, reference = result["profile"]["yours"], result["profile"]["reference"]
            assert yours.get("bank_conflict_pct", 0) > 0, yours
            assert yours["bank_conflict_pct"] > reference.get("bank_conflict_pct", 0), (yours, reference)


# ---------------------------------------------------------------------- the advice on the H200's own figures

# What scripts/profile/h200_profile.sh measured on the H200 (2026-12-02; puzzles 07 and 08 again on 2026-12-03): each
# solution kernel's bench case, kept in docs/results/data/h200-profiles/ and data/h200-2026-12-03/profiles/
# (docs/results/h200-profiles.md is written from them). results_page.figures
# leaves out the sector-use ratio the first run's parser kept as 0 for cp.async/TMA loads (see the test below).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts" / "profile"))
import results_page  # noqa: E402

H200 = {f"{r['puzzle']} {r['kernel']} {r['case']}": results_page.figures(r) for r in results_page.results()}
EXPECTED_FIRST = {
    "01 copy_tiles large_2p27": "At the memory limit: DRAM is 82% busy",
    "05 row_sum large_32768x4096": "At the memory limit: DRAM is 89% busy",
    "06 softmax large_16384x8192": "At the memory limit: DRAM is 83% busy",
    "08 gemv large_8192": "At the memory limit: DRAM is 80% busy",
    "08 matmul_tuned large_8192": "At the compute limit: the Tensor Cores are busy 92%",
    "08 matmul_pipelined large_4096": "The Tensor Cores are busy only 32% of the time",
    "07 flash_attention large_16384x4096": "The math runs on CUDA cores (FMA pipe 26% busy)",
    "07 attention_two_pass large_16384x4096": "The math runs on CUDA cores (FMA pipe 22% busy)",
    "08 flash_attention_tensor_cores heads_32x16384_d64": "The Tensor Cores are busy only 43% of the time",
    "08 matmul_cuda_cores large_4096": "The math runs on CUDA cores (FMA pipe 45% busy)",
    "09 conv1d_naive large_2e24_k31": "Instruction-bound",
    "10 dequant_matmul_decode decode_16x8192x8192_g128": "Shared-memory bank conflicts: 72%",
}


def h200_figures(key: str) -> dict:
    return dict(H200[key])


# Kernels whose bench case has no counters on the H200 yet, and why, as (puzzle, kernel) or (puzzle, kernel, case):
# bash scripts/profile/h200_profile.sh "NN" NAME profiles them. An entry must go once its profile is in the data
# (the test below fails on a stale entry). Every bench case of 2026-12-03 was profiled that day.
AWAITING_H200: dict[tuple[str, ...], str] = {
    ("10", "dequant_gemv"): "a rung since 2026-12-05, when no H200 was lent (h200_profile.sh 10 p10)",
    ("08", "flash_attention_causal"): "a rung since 2026-12-06, added after that session's device time was spent",
}


def test_every_solution_kernel_was_profiled_with_counters_on_the_h200():
    from grader.discover import load_module, load_puzzle

    profiled = {tuple(key.split()[:3]) for key in H200}
    for spec in sorted((Path(__file__).resolve().parents[1] / "solutions").glob("p*.py")):
        puzzle = load_puzzle(load_module(spec))
        for kernel in puzzle.kernels:
            for case in [c for c in kernel.cases if c.bench]:
                done = (puzzle.id, kernel.function, case.name) in profiled
                keys = {(puzzle.id, kernel.function), (puzzle.id, kernel.function, case.name)}
                waiting = bool(keys & AWAITING_H200.keys())
                assert done != waiting, (puzzle.id, kernel.function, case.name, "profiled" if done else "missing")
    for result in results_page.results():
        assert result["profile"]["mode"] == "gpu" and not result["profile"]["problem"], result["kernel"]
        assert result["profile"]["yours"]["dram_pct"] >= 0 and result["status"] == "passed"


def test_the_results_page_is_what_its_data_gives():
    assert results_page.PAGE.read_text() == results_page.page(), "run python scripts/profile/results_page.py"


@pytest.mark.parametrize("key", sorted(EXPECTED_FIRST))
def test_the_advice_on_h200_figures_names_what_they_show(key: str):
    said = advice.advise(h200_figures(key), h200_figures(key))
    assert said[0].startswith(EXPECTED_FIRST[key]), said
    assert not any(line.startswith("Uncoalesced") for line in said) or h200_figures(key).get("sector_use_pct", 100) < 50


def test_no_sector_figure_where_every_global_load_is_asynchronous():
    """cp.async and TMA loads do not count in ncu's bytes-per-sector ratio, which then reads 0: no figure, so no
    "Uncoalesced reads" for matmul_pipelined (the H200 run before this fix said so, wrongly)."""
    row = {
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "1,048,576",
        "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio": "0",
    }
    assert "sector_use_pct" not in counters.figures(row)
    row["smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio"] = "8"
    assert counters.figures(row)["sector_use_pct"] == 25.0
