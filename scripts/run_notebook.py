"""Execute one puzzle's notebook top to bottom with nbclient, as a learner's JupyterLab would, and
keep what it produced: the executed notebook, its pictures as PNG files, and a short summary.

    python scripts/run_notebook.py 08 --solutions --out /tmp/nb     # the H200 run of issue 5
Exit 1 if a check cell failed or any check cell wrote to stderr.
"""

from __future__ import annotations

import argparse
import base64
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    import nbformat
    from nbclient import NotebookClient

    from grader.course.notebooks import puzzle_notebook
    from grader.discover import course_root, puzzle_files

    p = argparse.ArgumentParser()
    p.add_argument("puzzle_id")
    p.add_argument("--solutions", action="store_true")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--cell-timeout", type=int, default=900)
    args = p.parse_args(argv)

    root = course_root()
    source = puzzle_files(root / ("solutions" if args.solutions else "puzzles"))[args.puzzle_id]
    notebook = puzzle_notebook(source, args.puzzle_id)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    client = NotebookClient(
        notebook,
        timeout=args.cell_timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(root)}},
    )
    client.execute()
    seconds = time.perf_counter() - started
    executed = args.out / f"{source.stem}.executed.ipynb"
    nbformat.write(notebook, executed)

    failed, pictures = 0, 0
    for index, cell in enumerate(notebook.cells):
        role = cell.metadata.get("tilelang_course", {}).get("role", "")
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                pictures += 1
                (args.out / f"cell{index:03d}_{role}.png").write_bytes(base64.b64decode(png))
        if role not in ("check", "bench"):
            continue
        stdout = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
        stderr = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stderr")
        errors = [o for o in cell.outputs if o.get("output_type") == "error"]
        bad = bool(errors) or bool(stderr.strip())
        failed += bad and role == "check"
        print(f"--- cell {index} {role} {cell.source.splitlines()[0]}{'   <-- FAILED' if bad else ''}")
        print(stdout.rstrip())
        if stderr.strip():
            print("stderr:", stderr.strip()[:500])
        for error in errors:
            print("error:", error.get("ename"), error.get("evalue", "")[:300])
    print(f"executed {len(notebook.cells)} cells in {seconds:.0f} s; {pictures} picture(s); {failed} failed check(s)")
    print(f"saved {executed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
