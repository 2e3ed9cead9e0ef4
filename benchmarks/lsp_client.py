"""A minimal LSP client over a child process's stdio, for timing servers.

Deliberately small and synchronous: a reader thread parses messages into a
queue, the benchmark sends and waits. Requests from the server
(workspace/configuration, client/registerCapability, ...) get an empty
answer so that no server blocks on us.
"""
from __future__ import annotations

import itertools
import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path

PUSH_CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True},
    },
    "workspace": {"configuration": False},
}
PULL_CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True},
        "publishDiagnostics": {"versionSupport": True},
        "diagnostic": {"dynamicRegistration": False, "relatedDocumentSupport": False},
    },
    "workspace": {"configuration": False},
}


class Client:
    def __init__(self, command: list[str], env: dict | None = None, cwd: str | None = None):
        self.started = time.perf_counter()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self._ids = itertools.count(1)
        self.messages: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- wire ---------------------------------------------------------------------------

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    self.messages.put(None)
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            body = stream.read(length)
            message = json.loads(body)
            message["_received"] = time.perf_counter()
            if "method" in message and "id" in message:
                self._answer_server_request(message)
            self.messages.put(message)

    def _answer_server_request(self, message: dict) -> None:
        result = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        self._write({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def _write(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params) -> float:
        sent = time.perf_counter()
        self._write({"jsonrpc": "2.0", "method": method, "params": params})
        return sent

    def request(self, method: str, params) -> int:
        number = next(self._ids)
        self._write({"jsonrpc": "2.0", "id": number, "method": method, "params": params})
        return number

    def wait(self, predicate, timeout: float = 60.0) -> dict:
        deadline = time.perf_counter() + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                raise TimeoutError("no matching message from the server")
            message = self.messages.get(timeout=remaining)
            if message is None:
                raise EOFError("the server closed its output")
            if predicate(message):
                return message

    def call(self, method: str, params, timeout: float = 60.0) -> dict:
        number = self.request(method, params)
        return self.wait(lambda m: m.get("id") == number and "method" not in m, timeout)

    def drain(self) -> None:
        while not self.messages.empty():
            self.messages.get_nowait()

    # -- LSP ------------------------------------------------------------------------------

    def initialize(self, capabilities: dict, root: Path, options=None) -> dict:
        reply = self.call("initialize", {
            "processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": capabilities,
            "initializationOptions": options, "clientInfo": {"name": "benchmark"},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}]})
        self.notify("initialized", {})
        return reply

    def open(self, uri: str, text: str, version: int = 0) -> float:
        return self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": text}})

    def change(self, uri: str, version: int, line: int, character: int, end_character: int,
               text: str) -> float:
        return self.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": line, "character": character},
                                          "end": {"line": line, "character": end_character}},
                                "text": text}]})

    def diagnostics_for(self, uri: str, version: int | None = None, timeout: float = 60.0) -> dict:
        def matches(message):
            if message.get("method") != "textDocument/publishDiagnostics":
                return False
            params = message["params"]
            # A server that leaves out the version (optional in LSP) is taken at its word.
            return params["uri"] == uri and params.get("version", version) in (version, None)
        return self.wait(matches, timeout)

    def pull(self, uri: str, timeout: float = 60.0) -> dict:
        return self.call("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout)

    def rss_mb(self) -> float:
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            self.call("shutdown", None, timeout=10)
            self.notify("exit", None)
            self.process.wait(timeout=10)
        except Exception:
            self.process.kill()
            self.process.wait()
