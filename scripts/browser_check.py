"""Run All in a real browser: JupyterLab 4 in headless Chromium, driven over the DevTools protocol.

    python scripts/browser_check.py [NOTEBOOK] [--out DIR]

Copies the notebook (default: the p02 stub) to a temporary folder, starts JupyterLab there, opens it in
headless Chromium (Debian's `chromium` package), presses Run All, waits until the kernel is idle, and
then reads the notebook back from the page: every code cell's execution count, every check's last line
and how many pictures were drawn. It saves a screenshot of each check cell and each picture in DIR and
prints a JSON summary. Exit 1 when a code cell did not run or raised.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

READ_BACK = """(() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = [];
  panel.content.widgets.forEach((cell, index) => {
    const model = cell.model;
    if (model.type !== 'code') return;
    const outputs = model.outputs.toJSON();
    const text = outputs.map(o => (o.text || '') + (o.data && o.data['text/plain'] || '')).join('');
    cells.push({
      index,
      source: model.sharedModel.getSource().slice(0, 80),
      count: model.executionCount,
      errors: outputs.filter(o => o.output_type === 'error').map(o => o.ename + ': ' + o.evalue),
      images: outputs.filter(o => o.data && o.data['image/png']).length,
      last: text.trim().split('\\n').slice(-1)[0] || '',
    });
  });
  return JSON.stringify({busy: panel.sessionContext.session.kernel.status, cells});
})()"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevTools:
    """The smallest client of Chrome's DevTools protocol: send a command, wait for its answer."""

    def __init__(self, url: str):
        self.url, self.next_id = url, 0

    async def __aenter__(self) -> DevTools:
        from tornado.websocket import websocket_connect

        self.ws = await websocket_connect(self.url, max_message_size=1 << 28)
        return self

    async def __aexit__(self, *_: object) -> None:
        self.ws.close()

    async def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        await self.ws.write_message(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(await self.ws.read_message())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def evaluate(self, expression: str) -> object:
        result = await self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return result.get("result", {}).get("value")

    async def screenshot(self, path: Path) -> None:
        shot = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))


async def drive(url: str, out: Path, timeout: float) -> dict:
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
        await asyncio.sleep(5)
        state = json.loads(await page.evaluate(READ_BACK))
        while state["busy"] != "idle" or any(c["count"] is None for c in state["cells"]):
            assert time.monotonic() < deadline, f"Run All did not finish: {state}"
            await asyncio.sleep(3)
            state = json.loads(await page.evaluate(READ_BACK))
        shots = []
        for cell in state["cells"]:
            if cell["images"] or cell["source"].startswith("check("):
                await page.evaluate(f"jupyterapp.shell.currentWidget.content.scrollToItem({cell['index']}, 'start')")
                await asyncio.sleep(1.5)
                path = out / f"cell_{cell['index']:03d}.png"
                await page.screenshot(path)
                shots.append(str(path))
        state["screenshots"] = shots
        return state


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("notebook", nargs="?", type=Path, default=ROOT / "notebooks" / "p02_vector_add.ipynb")
    p.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "browser-check")
    p.add_argument("--timeout", type=float, default=900)
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        print("no Chromium: apt-get install chromium", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="browser-check-"))
    shutil.copy(args.notebook, work / args.notebook.name)
    lab_port, tools_port, token = free_port(), free_port(), secrets.token_hex(16)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    lab = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={lab_port}", f"--IdentityProvider.token={token}",
         "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={work}", "--allow-root"],
        env=env, stdout=subprocess.DEVNULL, stderr=(args.out / "jupyterlab.log").open("w"),
    )  # fmt: skip
    url = f"http://127.0.0.1:{lab_port}/lab/tree/{args.notebook.name}?token={token}"
    chrome = None
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{lab_port}/api?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(1)
        chrome = subprocess.Popen(
            [browser, "--headless=new", "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={tools_port}",
             "--window-size=1400,1000", f"--user-data-dir={work / 'chrome'}", url],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        for _ in range(60):
            try:
                pages = json.load(urllib.request.urlopen(f"http://127.0.0.1:{tools_port}/json", timeout=2))
                page = next(p for p in pages if p.get("type") == "page")
                break
            except (OSError, StopIteration, ValueError):
                time.sleep(1)
        state = asyncio.run(drive(page["webSocketDebuggerUrl"], args.out, args.timeout))
    finally:
        for process in (chrome, lab):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
    print(json.dumps(state, indent=1))
    bad = [c for c in state["cells"] if c["count"] is None or c["errors"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
