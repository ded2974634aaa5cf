"""`python -m grader fit`: does every case's block fit every GPU profile's shared memory?

For each profile (grader.devices) every reference kernel is traced with that profile's block parameters
(``Case.for_gpus``) and its shared memory counted as TileLang allocates it (grader.pipeline.simulate.interp's
``shared_memory_plan``, which tests pin to TileLang's own allocation). A maintainer runs it after changing
a case's parameters; CI runs it for every profile. Exit 1 when some case that should fit does not.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from grader.devices import PROFILES, Profile, profile_named


@dataclass(frozen=True)
class Fit:
    profile: str
    puzzle: str
    kernel: str
    case: str
    params: dict
    shared: int  # bytes one block asks for; -1 when the case is declared unfit for the profile
    limit: int
    unfit: str = ""

    @property
    def fits(self) -> bool:
        return bool(self.unfit) or self.shared <= self.limit


def fits(profiles: list[Profile], spec_dir: Path, puzzle_ids: list[str] | None = None) -> list[Fit]:
    """Every (profile, case) of the spec modules in ``spec_dir``; tracing is shared between profiles
    that give a case the same parameters."""
    from grader.discover import load_module, load_puzzle, puzzle_files
    from grader.pipeline.shared_memory import shared_memory_plan
    from grader.pipeline.trace import kernel_function, trace_tir

    rows: list[Fit] = []
    known: dict[tuple, int] = {}
    for puzzle_id, path in sorted(puzzle_files(spec_dir).items()):
        if puzzle_ids and puzzle_id not in puzzle_ids:
            continue
        module = load_module(path)
        puzzle = load_puzzle(module)
        for profile in profiles:
            for kernel in puzzle.on(profile.name).kernels:
                for case in kernel.cases:
                    if case.unfit:
                        shared = -1
                    else:
                        key = (kernel.function, tuple(sorted(case.sizes.items())), tuple(sorted(case.params.items())))
                        if key not in known:
                            tir = trace_tir(kernel_function(module, kernel), kernel, case, path)
                            known[key] = shared_memory_plan(tir).total
                        shared = known[key]
                    rows.append(
                        Fit(
                            profile.name,
                            puzzle_id,
                            kernel.function,
                            case.name,
                            dict(case.params),
                            shared,
                            profile.shared_per_block,
                            case.unfit,
                        )
                    )
    return rows


def lines(rows: list[Fit], everything: bool) -> list[str]:
    out = []
    for row in rows:
        if not everything and row.fits and row.shared <= 48 * 1024:
            continue
        verdict = f"not applicable: {row.unfit}" if row.unfit else ("fits" if row.fits else "DOES NOT FIT")
        kib = "-" if row.shared < 0 else f"{row.shared / 1024:.1f}"
        params = " ".join(f"{k}={v}" for k, v in row.params.items())
        out.append(
            f"{row.profile:6} p{row.puzzle} {row.kernel:18} {row.case:26} {kib:>7} of {row.limit // 1024:3} KiB  "
            f"{verdict}  [{params}]"
        )
    return out


def main(argv: list[str]) -> int:
    from grader.discover import course_root

    p = argparse.ArgumentParser(prog="python -m grader fit", description=__doc__.splitlines()[0])
    p.add_argument("ids", nargs="*", metavar="ID", help="puzzle ids (default: all)")
    p.add_argument("--arch", action="append", default=[], metavar="SM", help="a profile (repeatable; default: all)")
    p.add_argument("--spec-dir", type=Path, default=None, help="folder of spec modules (default: solutions/)")
    p.add_argument("--all", action="store_true", help="list every case, not only those over 48 KiB")
    args = p.parse_args(argv)
    profiles = [profile_named(a) for a in args.arch] or list(PROFILES.values())
    rows = fits(profiles, args.spec_dir or course_root() / "solutions", [i.zfill(2) for i in args.ids] or None)
    for line in lines(rows, args.all):
        print(line)
    bad = [r for r in rows if not r.fits]
    print(f"{len(rows) - len(bad)} of {len(rows)} (profile, case) pairs fit; {len(bad)} do not", file=sys.stderr)
    return 1 if bad else 0
