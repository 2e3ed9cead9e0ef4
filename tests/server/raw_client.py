"""A client that speaks raw JSON-RPC over the server's pipes, written apart from
the server's code (no pygls, no lsprotocol): it sends exactly the bytes a test
gives it, well-formed or not, and reads whatever comes back."""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "autograd_lsp.server"]
PUSH = {"general": {"positionEncodings": ["utf-16"]},
        "textDocument": {"publishDiagnostics": {"versionSupport": True}}}
PULL = {"general": {"positionEncodings": ["utf-16"]},
        "textDocument": {"publishDiagnostics": {"versionSupport": True},
                         "diagnostic": {"dynamicRegistration": False}}}


def frame(body: bytes | str) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def message(payload: dict) -> bytes:
    return json.dumps(payload).encode()


class RawClient:
    def __init__(self, cwd: Path | None = None, env: dict | None = None, command=None):
        environment = dict(os.environ if env is None else env)
        environment.setdefault("PYTHONPATH", str(REPO))
        self.process = subprocess.Popen(command or SERVER, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        cwd=cwd, env=environment)
        self.inbox: queue.Queue = queue.Queue()
        self.log: list[dict] = []          # every message received, in order
        self.stderr = bytearray()
        self._ids = iter(range(1, 10 ** 9))
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    # -- wire ----------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if not line.strip():
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = stream.read(length)
            data = json.loads(body)
            if "method" in data and "id" in data:      # a request from the server
                result = [None] * len(data.get("params", {}).get("items", [])) \
                    if data["method"] == "workspace/configuration" else None
                self.send(frame(message({"jsonrpc": "2.0", "id": data["id"], "result": result})))
            self.log.append(data)
            self.inbox.put(data)

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr += line

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, method: str, params=None) -> int:
        number = next(self._ids)
        self.send(frame(message({"jsonrpc": "2.0", "id": number, "method": method, "params": params})))
        return number

    def notify(self, method: str, params=None) -> None:
        self.send(frame(message({"jsonrpc": "2.0", "method": method, "params": params})))

    def wait(self, predicate, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no matching message")
            item = self.inbox.get(timeout=remaining)
            if item is None:
                raise EOFError(f"the server closed its output; stderr: {bytes(self.stderr[-2000:])!r}")
            if predicate(item):
                return item

    def response(self, number, timeout: float = 30.0) -> dict:
        return self.wait(lambda m: m.get("id") == number and "method" not in m, timeout)

    def call(self, method: str, params=None, timeout: float = 30.0) -> dict:
        return self.response(self.request(method, params), timeout)

    def messages_now(self) -> list[dict]:
        items = []
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                return items
            if item is not None:
                items.append(item)

    # -- LSP -----------------------------------------------------------------------

    def initialize(self, capabilities=PUSH, root: Path | None = None, options=None) -> dict:
        reply = self.call("initialize", {"processId": None, "capabilities": capabilities,
                                         "rootUri": root.as_uri() if root else None,
                                         "initializationOptions": options})
        self.notify("initialized", {})
        return reply

    def open(self, uri: str, text: str, version: int = 1) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})

    def alive(self) -> bool:
        """Whether the server still answers (a request it must answer, right now)."""
        reply = self.call("textDocument/hover", {"textDocument": {"uri": "file:///nowhere.py"},
                                                 "position": {"line": 0, "character": 0}}, 20)
        return "result" in reply or "error" in reply

    def pull(self, uri: str, timeout: float = 60.0) -> list[dict]:
        reply = self.call("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout)
        return reply["result"]["items"]

    def close(self, timeout: float = 20.0) -> int:
        """shutdown + exit; the exit code."""
        if self.process.poll() is None:
            try:
                self.call("shutdown", None, timeout)
                self.notify("exit")
            except (EOFError, BrokenPipeError, TimeoutError):
                pass
        try:
            return self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
