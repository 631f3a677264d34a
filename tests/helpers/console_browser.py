"""Debian's chromium, headless, driven line by line through tests/browser/console_driver.mjs
(puppeteer-core from tests/browser/package-lock.json), for the web console's tests."""

import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

BROWSER_DIR = Path(__file__).resolve().parent.parent / "browser"


def npm_project():
    """tests/browser/node_modules as package-lock.json says: `npm ci` when the lock changed."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not installed (scripts/bootstrap installs them)")
    lock = (BROWSER_DIR / "package-lock.json").read_bytes()
    stamp = BROWSER_DIR / "node_modules" / ".carrier-installed-lock"
    if not stamp.exists() or stamp.read_bytes() != lock:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=BROWSER_DIR, check=True,
                       capture_output=True, timeout=300)
        stamp.write_bytes(lock)
    return BROWSER_DIR


class ConsoleBrowser:
    """One chromium page. Each call sends a command and waits (bounded) for its answer."""

    def __init__(self, timeout=60.0):
        npm_project()
        if not Path("/usr/bin/chromium").exists():
            pytest.skip("/usr/bin/chromium is not installed (scripts/bootstrap installs it)")
        self.proc = subprocess.Popen(["node", "console_driver.mjs"], cwd=BROWSER_DIR, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        first = self._answer(timeout)
        if not first.get("ok"):
            self.close()
            if first.get("launch"):
                pytest.skip(f"chromium cannot run here: {first.get('error')}")
            raise AssertionError(first)

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.lines.put(json.loads(line))
        self.lines.put(None)

    def _answer(self, timeout):
        try:
            answer = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"the browser driver gave no answer within {timeout}s") from None
        if answer is None:
            raise AssertionError(f"the browser driver exited: {self.proc.stderr.read()[-2000:]}")
        return answer

    def command(self, op, timeout=60.0, **args):
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        answer = self._answer(timeout)
        assert answer.get("ok"), f"{op} {args}: {answer.get('error')}"
        return answer.get("value")

    def goto(self, url):
        return self.command("goto", url=url)

    def click(self, selector):
        self.command("click", selector=selector)

    def type(self, selector, text):
        self.command("type", selector=selector, text=text)

    def select(self, selector, value):
        self.command("select", selector=selector, value=value)

    def eval(self, js):
        return self.command("eval", js=js)

    def wait(self, js, timeout=15.0):
        """Waits in the page until the expression `js` is truthy; returns its value."""
        self.proc.stdin.write(json.dumps({"op": "wait", "js": js, "timeout": int(timeout * 1000)}) + "\n")
        self.proc.stdin.flush()
        answer = self._answer(timeout + 15)
        assert answer.get("ok"), f"waiting for {js}: {answer.get('error')}\npage: {self.text('body')[:2000]}"
        return answer.get("value")

    def text(self, selector):
        return self.eval(f"(document.querySelector({json.dumps(selector)}) || {{}}).textContent || ''")

    def value(self, key):
        """The raw figure a tile shows (data-value of [data-k=key])."""
        return self.eval(f"(document.querySelector('[data-k={json.dumps(key)}]') || {{dataset: {{}}}}).dataset.value")

    def screenshot(self, path, full_page=False):
        self.command("screenshot", path=str(path), fullPage=full_page)

    def events(self):
        return self.command("events")

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=15)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def save_screenshot(browser, tmp_path, name, full_page=False):
    """`name`.png of the page into tmp_path, and into $CARRIER_CONSOLE_SCREENSHOTS when set
    (docs/console/ keeps the ones docs/console.md shows)."""
    path = tmp_path / f"{name}.png"
    browser.screenshot(path, full_page)
    assert path.stat().st_size > 1000
    target = os.environ.get("CARRIER_CONSOLE_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / path.name)
    return path
