"""The server over TCP: one client at a time, each with a fresh state; a client
that vanishes can come back; exit ends the process without a traceback."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

from tests.server.raw_client import PULL, REPO, frame


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class TcpClient:
    def __init__(self, port: int):
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.buffer = b""
        self.number = 0

    def send(self, payload: dict) -> None:
        self.sock.sendall(frame(json.dumps(payload)))

    def receive(self) -> dict | None:
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            self.buffer += chunk
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(header.lower().split(b"content-length:")[1].split(b"\r\n")[0])
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                return None
            rest += chunk
        self.buffer = rest[length:]
        return json.loads(rest[:length])

    def call(self, method: str, params=None) -> dict:
        self.number += 1
        self.send({"jsonrpc": "2.0", "id": self.number, "method": method, "params": params})
        while True:
            message = self.receive()
            assert message is not None, "connection closed"
            if message.get("id") == self.number and "method" not in message:
                return message

    def notify(self, method: str, params=None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})


def test_one_client_at_a_time_and_reconnects():
    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    server = subprocess.Popen([sys.executable, "-m", "autograd_lsp.server", "--tcp", f"127.0.0.1:{port}"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = TcpClient(port)
        first.call("initialize", {"processId": None, "capabilities": PULL})
        first.notify("initialized", {})
        first.notify("textDocument/didOpen", {"textDocument": {
            "uri": "file:///secret.py", "languageId": "python", "version": 1,
            "text": "import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).backward()\n"}})
        assert first.call("textDocument/diagnostic",
                          {"textDocument": {"uri": "file:///secret.py"}})["result"]["items"]

        second = TcpClient(port)
        second.sock.settimeout(10)
        try:
            second.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"processId": None, "capabilities": PULL}})
            answer = second.receive()
        except ConnectionError:
            answer = None
        assert answer is None                      # refused: the first client is connected

        first.sock.close()                         # vanishes without shutdown
        time.sleep(0.5)
        third = TcpClient(port)
        third.call("initialize", {"processId": None, "capabilities": PULL})
        reply = third.call("textDocument/diagnostic", {"textDocument": {"uri": "file:///secret.py"}})
        assert reply["result"]["items"] == []      # the first client's document is not there
        assert "result" in third.call("shutdown")
        third.notify("exit")
        assert server.wait(20) == 0
        assert b"Traceback" not in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
