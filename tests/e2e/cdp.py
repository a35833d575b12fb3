"""A minimal Chrome DevTools Protocol client over `--remote-debugging-pipe` (fds 3 and 4, JSON messages ended by a
NUL byte): enough to load a page of the Dagster UI, click a tab, read the page's text and take a screenshot, with
Debian's headless chromium and nothing else (no websocket library, no browser driver)."""

import base64
import contextlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any


class Browser:
    def __init__(self, chromium: str, profile: Path, width: int = 1400, height: int = 900) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # The child sees its ends as fds 3 (commands in) and 4 (answers out), as --remote-debugging-pipe expects.
        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", f"--window-size={width},{height}",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(to_child_r, 3), os.dup2(from_child_w, 4)),
            start_new_session=True,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self._buf = b""
        self._next_id = 0
        self.width, self.height = width, height
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        self.call("Page.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method: str, session: bool = False, timeout: float = 60, **params: Any) -> Any:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self._buf:
                raw, self._buf = self._buf.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self._next_id:
                    if "error" in answer:
                        raise RuntimeError(f"{method}: {answer['error']}")
                    return answer.get("result", {})
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise TimeoutError(f"chromium did not answer {method} within {timeout} s")
            chunk = os.read(self._from_child, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed its debugging pipe")
            self._buf += chunk

    def js(self, expression: str) -> Any:
        out = self.call("Runtime.evaluate", session=True, expression=expression, returnByValue=True,
                        awaitPromise=True)
        return out.get("result", {}).get("value")

    def goto(self, url: str) -> None:
        self.call("Page.navigate", session=True, url=url)

    def text(self) -> str:
        return str(self.js("document.body ? document.body.innerText : ''") or "")

    def wait_for_text(self, *needles: str, timeout: float = 60) -> str:
        """The page's text once every needle is in it (the UI renders after its GraphQL queries answer)."""
        deadline = time.monotonic() + timeout
        while True:
            page = self.text()
            if all(n in page for n in needles):
                return page
            if time.monotonic() > deadline:
                missing = [n for n in needles if n not in page]
                raise AssertionError(f"not on the page after {timeout} s: {missing}; the page says: {page[:1500]}")
            time.sleep(0.5)

    def click_text(self, text: str, selector: str = "button, [role=tab], a, span, div", last: bool = False) -> bool:
        """Click the innermost element whose own text is exactly `text` (the first such, or the last one)."""
        pick = "inner[inner.length - 1]" if last else "inner[0]"
        return bool(self.js(
            f"(() => {{ const els = [...document.querySelectorAll({json.dumps(selector)})]"
            f".filter(e => e.innerText && e.innerText.trim() === {json.dumps(text)});"
            " const inner = els.filter(e => !els.some(o => o !== e && e.contains(o)));"
            f" if (!inner.length) return false; {pick}.click(); return true; }})()"))

    def scroll_to_text(self, text: str) -> bool:
        """Scroll the innermost element containing `text` into the middle of the view."""
        return bool(self.js(
            "(() => { const els = [...document.querySelectorAll('div, p, li, td')]"
            f".filter(e => e.innerText && e.innerText.includes({json.dumps(text)}));"
            " const inner = els.filter(e => !els.some(o => o !== e && e.contains(o)));"
            " if (!inner.length) return false; inner[0].scrollIntoView({block: 'center'}); return true; })()"))

    def screenshot(self, out: Path, full_height: bool = False) -> Path:
        params: dict[str, Any] = {"format": "png"}
        if full_height:
            h = int(self.js("Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)") or 0)
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": self.width, "height": max(h, self.height), "scale": 1})
        data = self.call("Page.captureScreenshot", session=True, **params)["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out

    def close(self) -> None:
        with contextlib.suppress(RuntimeError, TimeoutError, OSError):
            self.call("Browser.close", timeout=10)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(10)
        for fd in (self._to_child, self._from_child):
            with contextlib.suppress(OSError):
                os.close(fd)
