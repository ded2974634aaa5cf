"""The --explain view in a real browser: headless Chromium (Debian's `chromium`) takes screenshots of pages, and
JupyterLab shows the notebook fragment, whose script must run there.

    python scripts/explain_browser_check.py pages PAGE.html... --out DIR [--step N]
    python scripts/explain_browser_check.py grader PUZZLE KERNEL FILE [--case NAME] [--block B] [--lang zh_CN] --out DIR
    python scripts/explain_browser_check.py notebook RECORD.json [--out DIR]
    python scripts/explain_browser_check.py live PUZZLE KERNEL FILE [--case NAME] [--block B] [--lang zh_CN] --out DIR

``pages``: a PNG of each page as it opens (or at step N: the page reads ``#step=N``). ``grader``: grades FILE
with ``python -m grader PUZZLE --explain KERNEL`` on the CPU, writes the first recorded case's view as a page
and takes its PNG. ``notebook``: a notebook that displays the fragment of a record (an Explanation's JSON, or a
grader JSON whose first case has one) runs in JupyterLab (``live``: one whose %%puzzle cell holds FILE and whose
last cell calls explain(KERNEL), as a learner's would); it reads back whether the view's script ran (one step
shown, the slider's label), presses "next", reads again and saves a screenshot. Prints a JSON summary; exit 1
when something did not render.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from browser_check import DevTools, free_port  # noqa: E402

from grader.frontends import explain_view  # noqa: E402
from grader.outcome import Explanation  # noqa: E402

WINDOW = "1200,1000"


def browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        raise SystemExit("no Chromium: apt-get install chromium")
    return found


def screenshot(page: Path, png: Path, step: int | None = None, window: str = WINDOW) -> bool:
    url = page.resolve().as_uri() + (f"#step={step}" if step is not None else "")
    with tempfile.TemporaryDirectory(prefix="explain-shot-") as profile:
        subprocess.run(
            [browser(), "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             f"--window-size={window}", f"--user-data-dir={profile}", f"--screenshot={png}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False,
        )  # fmt: skip
    return png.is_file() and png.stat().st_size > 0


def record_of(path: Path) -> tuple[Explanation, dict]:
    """An Explanation from its own JSON or from a grader JSON (the first case that carries one)."""
    data = json.loads(path.read_text())
    if "results" in data:
        case = next((r for r in data["results"] if r.get("explanation")), None)
        if case is None:
            raise SystemExit(f"{path}: no case carries an explanation")
        explanation = Explanation.from_dict(case["explanation"])
        # the judge puts the record on the kernel's last result; the verdict is that of the case it names
        shown = next((r for r in data["results"] if r.get("case") == explanation.case), case)
        return explanation, shown
    return Explanation.from_dict(data), {}


def run_pages(args: argparse.Namespace) -> dict:
    shots = {}
    for page in args.pages:
        png = args.out / (page.stem + (f"_step{args.step}" if args.step is not None else "") + ".png")
        shots[str(page)] = str(png) if screenshot(page, png, args.step) else None
    return {"screenshots": shots, "ok": all(shots.values())}


def run_grader(args: argparse.Namespace) -> dict:
    report = args.out / f"{args.name}.json"
    command = [sys.executable, "-m", "grader", args.puzzle, "--file", str(args.file), "-k", args.kernel, "--exact"]
    command += ["--explain", args.kernel, "--device", "cpu", "--json", str(report)]
    command += [*(["--case", args.case] if args.case else []), *(["--block", args.block] if args.block else [])]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if args.lang:
        env["TILELANG_COURSE_LANG"] = args.lang
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False)
    (args.out / f"{args.name}.txt").write_text(done.stdout + done.stderr)
    explanation, case = record_of(report)
    page = args.out / f"{args.name}.html"
    page.write_text(explain_view.html_page(explanation, lang=args.lang or "en"))
    png = args.out / f"{args.name}.png"
    shot = screenshot(page, png, args.step)
    return {
        "command": " ".join(command[1:]),
        "status": case.get("status"),
        "case": case.get("case"),
        "steps": len(explanation.steps),
        "marked": explanation.marked,
        "why": explanation.why,
        "page": str(page),
        "screenshot": str(png) if shot else None,
        "ok": shot and bool(explanation.steps),
    }


READ_VIEW = """(() => {
  const view = document.querySelector('.jp-OutputArea .tl-explain');
  if (!view) return JSON.stringify({found: false});
  const shown = [...view.querySelectorAll('section.step')].filter(s => !s.hidden);
  const visible = shown.map(s => s.dataset.step);
  const tiles = shown.flatMap(s => [...s.querySelectorAll('svg.tile')]);
  const tile_cells = tiles.map(t => t.querySelectorAll('rect').length);
  const tile_titles = tiles.map(t => (t.querySelector('title') || {}).textContent || '');
  return JSON.stringify({found: true, script_ran: view.classList.contains('js'), visible, tile_cells, tile_titles,
                         label: (view.querySelector('.where') || {}).textContent || ''});
})()"""


async def drive_notebook(url: str, out: Path, timeout: float) -> dict:
    async with DevTools(url) as page:
        await page.call("Page.enable")
        await page.call("Runtime.enable")
        deadline = time.monotonic() + timeout
        ready = "window.jupyterapp && jupyterapp.shell.currentWidget && jupyterapp.shell.currentWidget.sessionContext"
        ready += " && jupyterapp.shell.currentWidget.sessionContext.session"
        ready += " && jupyterapp.shell.currentWidget.sessionContext.session.kernel"
        ready += " && jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'"
        while not await page.evaluate(f"!!({ready})"):
            assert time.monotonic() < deadline, "JupyterLab never showed the notebook with an idle kernel"
            await asyncio.sleep(1)
        await page.evaluate("jupyterapp.commands.execute('notebook:run-all-cells')")
        state = {"found": False}
        while not state.get("found"):
            assert time.monotonic() < deadline, "the view never appeared in the output area"
            await asyncio.sleep(2)
            state = json.loads(await page.evaluate(READ_VIEW))
        await asyncio.sleep(1)
        opened = json.loads(await page.evaluate(READ_VIEW))
        await page.evaluate("document.querySelector('.jp-OutputArea .tl-explain').scrollIntoView()")
        await asyncio.sleep(1)
        await page.screenshot(out / "notebook_opened.png")
        await page.evaluate("document.querySelector('.jp-OutputArea .tl-explain button.prev').click()")
        await asyncio.sleep(1)
        after = json.loads(await page.evaluate(READ_VIEW))
        await page.screenshot(out / "notebook_previous.png")
        return {"opened": opened, "after_previous": after}


def run_notebook(args: argparse.Namespace) -> dict:
    """A notebook that shows a record's fragment (``notebook``) or calls explain() on a %%puzzle cell (``live``)."""
    import nbformat

    work = Path(tempfile.mkdtemp(prefix="explain-notebook-"))
    lang = f" --lang {args.lang}" if args.lang else ""
    if args.mode == "live":
        case = f", case={args.case!r}" if args.case else ""
        block = f", block={args.block!r}" if args.block else ""
        cells = [
            f"%load_ext grader.nb\n%puzzle {args.puzzle}{lang}\nfrom grader.nb import explain",
            f"%%puzzle {args.kernel}\n" + args.file.read_text(),
            f"explain({args.kernel!r}{case}{block})",
        ]
    else:
        shutil.copy(args.record, work / "record.json")
        cells = [
            "import json\nfrom IPython.display import HTML, display\n"
            "from grader.frontends import explain_view\nfrom grader.outcome import Explanation\n"
            "data = json.load(open('record.json'))\n"
            "if 'results' in data:\n"
            "    data = next(r['explanation'] for r in data['results'] if r.get('explanation'))\n"
            f"display(HTML(explain_view.html_fragment(Explanation.from_dict(data), lang={args.lang or 'en'!r})))"
        ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, work / "explain.ipynb")
    lab_port, tools_port, token = free_port(), free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={lab_port}", f"--IdentityProvider.token={token}",
         "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={work}", "--allow-root"],
        env=env, stdout=subprocess.DEVNULL, stderr=(args.out / "jupyterlab.log").open("w"),
    )  # fmt: skip
    chrome = None
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{lab_port}/api?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(1)
        url = f"http://127.0.0.1:{lab_port}/lab/tree/explain.ipynb?token={token}"
        chrome = subprocess.Popen(
            [browser(), "--headless=new", "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={tools_port}",
             f"--window-size={WINDOW}", f"--user-data-dir={work / 'chrome'}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(60):
            try:
                pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{tools_port}/json", timeout=2))
                page = next(p for p in pages if p.get("type") == "page")
                break
            except (OSError, StopIteration, ValueError):
                time.sleep(1)
        state = asyncio.run(drive_notebook(page["webSocketDebuggerUrl"], args.out, args.timeout))
    finally:
        for process in (chrome, lab):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
    opened, after = state["opened"], state["after_previous"]
    state["ok"] = (
        opened.get("script_ran")
        and len(opened.get("visible", [])) == 1
        and len(after.get("visible", [])) == 1
        and after["visible"] != opened["visible"]
        and all(after.get("tile_cells", []))
        and all(opened.get("tile_cells", []))  # every tile drawn
    )
    return state


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="mode", required=True)
    pages = sub.add_parser("pages")
    pages.add_argument("pages", nargs="+", type=Path)
    graded = sub.add_parser("grader")
    graded.add_argument("puzzle")
    graded.add_argument("kernel")
    graded.add_argument("file", type=Path)
    graded.add_argument("--case", default="")
    graded.add_argument("--block", default="")
    graded.add_argument("--name", default="", help="the files' stem (default: KERNEL_FILESTEM)")
    notebook = sub.add_parser("notebook")
    notebook.add_argument("record", type=Path)
    notebook.add_argument("--timeout", type=float, default=300)
    live = sub.add_parser("live")
    live.add_argument("puzzle")
    live.add_argument("kernel")
    live.add_argument("file", type=Path)
    live.add_argument("--case", default="")
    live.add_argument("--block", default="")
    live.add_argument("--timeout", type=float, default=900)
    for sub_parser in (pages, graded, notebook, live):
        sub_parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "explain-check")
        sub_parser.add_argument("--lang", default="")
        sub_parser.add_argument("--step", type=int, default=None)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.mode == "grader":
        args.file = args.file.resolve()
        args.name = args.name or f"{args.kernel}_{args.file.stem}"
    modes = {"pages": run_pages, "grader": run_grader, "notebook": run_notebook, "live": run_notebook}
    summary = modes[args.mode](args)
    print(json.dumps(summary, indent=1, ensure_ascii=False))
    return 0 if summary.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
