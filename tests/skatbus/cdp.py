"""A headless chromium driven over the DevTools protocol, for the tests of ``skat web``.

No driver library: chromium listens on a free loopback port (``--remote-debugging-port=0``,
the port it chose is in ``DevToolsActivePort``), and the protocol is JSON over one WebSocket
(aiohttp's client). Clicks are real mouse events at an element's centre, and every message
the page's event streams receive is recorded from the browser's own network events
(``Network.eventSourceMessageReceived``), not from the page's script.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from itertools import count
from pathlib import Path
from typing import Any

import aiohttp


def chromium() -> str | None:
    return (
        shutil.which("chromium")
        or shutil.which("chromium-browser")
        or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    )


class Browser:
    """One headless chromium with one page; ``async with Browser() as b``."""

    def __init__(self, width: int = 1280, height: int = 860) -> None:
        self.size = (width, height)
        self.received: list[tuple[float, str]] = []
        """(time, data) of every event-stream message the page received, in order."""
        self.proc: subprocess.Popen[bytes] | None = None
        self._profile = tempfile.TemporaryDirectory(
            prefix="skat-cdp-", ignore_cleanup_errors=True
        )  # chromium helpers may still write
        self._http: aiohttp.ClientSession | None = None
        self._ws: Any = None
        self._ids = count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._events: dict[str, list[asyncio.Future[Any]]] = {}
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Browser:
        exe = chromium()
        assert exe is not None
        self.proc = subprocess.Popen(
            [
                exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--no-first-run", "--no-default-browser-check", "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0", f"--user-data-dir={self._profile.name}",
                f"--window-size={self.size[0]},{self.size[1]}", "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        active = Path(self._profile.name) / "DevToolsActivePort"
        for _ in range(300):
            if active.exists() and active.read_text().count("\n") >= 1:
                break
            await asyncio.sleep(0.05)
        port = int(active.read_text().splitlines()[0])
        self._http = aiohttp.ClientSession()
        for _ in range(100):
            async with self._http.get(f"http://127.0.0.1:{port}/json/list") as r:
                pages = [t for t in await r.json() if t.get("type") == "page"]
            if pages:
                break
            await asyncio.sleep(0.05)
        self._ws = await self._http.ws_connect(pages[0]["webSocketDebuggerUrl"], max_msg_size=0)
        self._reader = asyncio.ensure_future(self._read())
        await self.send("Page.enable")
        await self.send("Runtime.enable")
        await self.send("Network.enable")
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": self.size[0], "height": self.size[1], "deviceScaleFactor": 1, "mobile": False},
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        with contextlib.suppress(Exception):
            if self._ws is not None:
                await self._ws.close()
        if self._http is not None:
            await self._http.close()
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._profile.cleanup()

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        async for msg in self._ws:
            data = json.loads(msg.data)
            if "id" in data:
                future = self._waiting.pop(data["id"], None)
                if future is not None and not future.done():
                    if "error" in data:
                        future.set_exception(RuntimeError(f"{data['error']}"))
                    else:
                        future.set_result(data.get("result", {}))
                continue
            method = data.get("method", "")
            if method == "Network.eventSourceMessageReceived":
                self.received.append((loop.time(), data["params"]["data"]))
            for future in self._events.pop(method, []):
                if not future.done():
                    future.set_result(data.get("params", {}))

    async def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> Any:
        n = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[n] = future
        await self._ws.send_str(json.dumps({"id": n, "method": method, "params": params or {}}))
        return await asyncio.wait_for(future, timeout)

    def _next(self, method: str) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._events.setdefault(method, []).append(future)
        return future

    async def goto(self, url: str) -> None:
        loaded = self._next("Page.loadEventFired")
        await self.send("Page.navigate", {"url": url})
        await asyncio.wait_for(loaded, 30)

    async def reload(self) -> None:
        loaded = self._next("Page.loadEventFired")
        await self.send("Page.reload", {"ignoreCache": True})
        await asyncio.wait_for(loaded, 30)

    async def js(self, expression: str) -> Any:
        result = await self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:80]}: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 20.0, every: float = 0.05) -> Any:
        """Until ``expression`` is true in the JavaScript sense (an element found: true); its value."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            try:
                value = await self.js(expression)
            except RuntimeError:  # the page is being replaced (a click that navigates, a reload)
                value = None
            if value is not None and value is not False and value != 0 and value != "":  # a DOM node comes as {}
                return value
            if loop.time() > end:
                raise TimeoutError(f"not true within {timeout} s: {expression}")
            await asyncio.sleep(every)

    async def click(self, selector: str) -> None:
        """A real left click (pressed and released) at the centre of the element."""
        where = await self.js(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
            " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
            " return [r.x + r.width / 2, r.y + r.height / 2]; })()"
        )
        if where is None:
            raise LookupError(f"nothing matches {selector}")
        x, y = where
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params = {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}
            await self.send("Input.dispatchMouseEvent", params)

    async def screenshot(self, path: Path) -> None:
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        path.write_bytes(base64.b64decode(shot["data"]))
