"""A hostile client over raw pipes: the server answers what JSON-RPC and LSP say,
stays alive after every step, and exits cleanly."""
from __future__ import annotations

import json
import time

import pytest

from tests.server.raw_client import PULL, RawClient, frame, message

HOVER = {"textDocument": {"uri": "file:///nowhere.py"}, "position": {"line": 0, "character": 0}}


def _hover(number: int) -> bytes:
    return message({"jsonrpc": "2.0", "id": number, "method": "textDocument/hover", "params": HOVER})


def _error_code(reply: dict):
    return reply.get("error", {}).get("code")


@pytest.fixture
def client():
    client = RawClient()
    client.initialize(PULL)
    yield client
    if client.process.poll() is None:
        client.process.kill()


def test_abuse_run(client):
    def step(data: bytes, code=None, answered=None):
        client.send(data)
        if code is not None:
            reply = client.wait(lambda m: "error" in m and "method" not in m)
            assert _error_code(reply) == code, reply
        if answered is not None:
            assert "result" in client.response(answered)
        assert client.process.poll() is None and client.alive()

    step(frame('{"jsonrpc": "2.0", "id": 5, "method": '), code=-32700)
    for not_a_request in ("[1, 2, 3]", "42", '{"foo": 1}', '"text"', "null", "[]"):
        step(frame(not_a_request), code=-32600)
    step(frame('{"jsonrpc": "2.0", "id": 7}'), code=-32600)
    step(frame("[" * 100_000 + "]" * 100_000), code=-32700)
    # A length no reader can allocate, then valid traffic.
    step(b"Content-Length: 9223372036854775808\r\n\r\n" + _hover(900), code=-32700)
    step(b"Content-Length: 99999999999999999999999\r\n\r\n{}", code=-32700)
    # Lengths that lie: the message and every later one are still read.
    body = _hover(901)
    step(b"Content-Length: %d\r\n\r\n" % (len(body) + 10) + body, answered=901)
    body = _hover(902)
    step(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body, answered=902)
    # Header spellings editors and scripts get wrong.
    body = _hover(903)
    step(b"content-length: %d\r\n\r\n" % len(body) + body, answered=903)
    body = _hover(904)
    step(b"Content-Length: %d\n\n" % len(body) + body, answered=904)
    body = _hover(905)
    step(b"garbage before the header" + b"Content-Length: %d\r\n\r\n" % len(body) + body,
         answered=905)
    # Params that fail validation are an error response, not silence.
    number = client.request("textDocument/hover", {"textDocument": {"uri": "file:///a.py"},
                                                   "position": {"line": -1, "character": 0}})
    assert _error_code(client.response(number)) == -32602
    assert client.alive()
    # Cancelling a request that was already answered is no error.
    client.open("file:///a.py", "import torch\n")
    number = client.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///a.py"}})
    client.response(number)
    client.notify("$/cancelRequest", {"id": number})
    assert client.alive()
    time.sleep(0.3)
    logged = [m for m in client.log if m.get("method") == "window/logMessage"
              and m["params"]["type"] == 1]
    assert logged == []
    assert client.close() == 0
    assert b"Traceback" not in client.stderr


def test_requests_before_initialize_are_refused_until_it_comes():
    client = RawClient()
    try:
        assert _error_code(client.call("textDocument/hover", HOVER)) == -32002
        assert _error_code(client.call("shutdown")) == -32002
        client.notify("textDocument/didOpen", {"textDocument": {
            "uri": "file:///a.py", "languageId": "python", "version": 1, "text": "x = 1\n"}})
        reply = client.initialize(PULL)
        assert "capabilities" in reply["result"]
        assert _error_code(client.call("initialize", {"capabilities": {}})) == -32600
        assert client.close() == 0
    finally:
        client.process.kill()


def test_requests_after_shutdown_are_invalid_and_exit_ends_the_process(client):
    assert "result" in client.call("shutdown")
    assert _error_code(client.call("textDocument/hover", HOVER)) == -32600
    client.notify("exit")
    assert client.process.wait(10) == 0


def test_exit_ends_the_process_while_an_analysis_runs(client):
    chunk = "z = " + " + ".join(["w"] * 1_100) + "\n"
    source = "import torch\nw = torch.ones(3, requires_grad=True)\n" + chunk * 6
    client.open("file:///slow.py", source)
    client.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///slow.py"}})
    time.sleep(0.5)
    started = time.monotonic()
    client.call("shutdown")
    client.notify("exit")
    assert client.process.wait(30) == 0
    assert time.monotonic() - started < 8
