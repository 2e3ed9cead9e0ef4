"""What the server answers when an analysis cannot be completed, and for
documents it must not analyse: never an empty list that reads as "no problems",
never a worker kept busy for nothing, and the user told once, in words."""
from __future__ import annotations

import os
import time

from tests.server.raw_client import PULL, PUSH, RawClient

BUG = "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n"
CLEAN = "import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).sum().backward()\n"
# Each chunk is a long sum: a few seconds of parsing in all, an analysis that
# outlives a budget of half a second.
# About 20 s of analysis on this machine (0.13 s a line): long enough that an answer
# within seconds proves a stopped or cancelled run let go of its worker.
SLOW = "import torch\nw = torch.ones(3, requires_grad=True)\n" + \
    ("z = " + " + ".join(["w"] * 1_000) + "\n") * 160


def _client(capabilities, timeout_ms=None) -> RawClient:
    env = dict(os.environ)
    if timeout_ms is not None:
        env["AUTOGRAD_LSP_ANALYSIS_TIMEOUT_MS"] = str(timeout_ms)
    client = RawClient(env=env)
    client.initialize(capabilities)
    return client


def _shown(client) -> list[str]:
    return [m["params"]["message"] for m in client.log if m.get("method") == "window/showMessage"]


def test_an_old_version_number_with_new_text_is_analysed_again():
    client = _client(PULL)
    try:
        client.open("file:///a.py", BUG, version=1)
        assert [d["code"] for d in client.pull("file:///a.py")] == ["AG101"]
        client.open("file:///a.py", CLEAN, version=1)        # again, without didClose
        assert client.pull("file:///a.py") == []
        client.notify("textDocument/didChange", {"textDocument": {"uri": "file:///a.py", "version": 1},
                                                 "contentChanges": [{"text": BUG}]})
        assert [d["code"] for d in client.pull("file:///a.py")] == ["AG101"]
    finally:
        client.close()


def test_a_stopped_analysis_is_an_error_not_an_empty_report_and_frees_the_worker():
    client = _client(PULL, timeout_ms=500)
    try:
        client.open("file:///slow.py", SLOW)
        reply = client.call("textDocument/diagnostic", {"textDocument": {"uri": "file:///slow.py"}}, 60)
        assert reply.get("error", {}).get("code") == -32802, reply
        # The stopped analysis does not hold a worker: a small file is answered, right.
        client.open("file:///small.py", BUG)
        started = time.monotonic()
        assert [d["code"] for d in client.pull("file:///small.py")] == ["AG101"]
        assert time.monotonic() - started < 6
        client.call("textDocument/diagnostic", {"textDocument": {"uri": "file:///slow.py"}}, 60)
        messages = [m for m in _shown(client) if "slow.py" in m]
        assert len(messages) == 1 and "not checked" in messages[0]
    finally:
        client.close()


def test_a_stopped_analysis_publishes_nothing():
    client = _client(PUSH, timeout_ms=500)
    try:
        client.open("file:///slow.py", SLOW)
        time.sleep(4)
        published = [m for m in client.log if m.get("method") == "textDocument/publishDiagnostics"]
        assert published == []
    finally:
        client.close()


def test_a_huge_document_is_not_analysed_and_the_user_is_told():
    client = _client(PULL)
    try:
        huge = BUG + "# padding\n" * 250_000
        client.open("file:///huge.py", huge)
        started = time.monotonic()
        client.pull("file:///huge.py", 30)
        assert time.monotonic() - started < 10
        assert client.alive()
        assert any("huge.py is not checked" in m for m in _shown(client))
    finally:
        client.close()


def test_errors_are_logged_short():
    from autograd_lsp.server.guard import report_exception

    class Recorder:
        def __init__(self):
            self.logged = []

        def window_log_message(self, params):
            self.logged.append(params.message)

    class Huge(Exception):
        def __str__(self):
            return "node " * 2_000_000          # the repr of a node holding a long chain

    ls = Recorder()
    try:
        raise KeyError("outer") from Huge()
    except KeyError:
        try:
            raise Huge()
        except Huge:
            report_exception(ls, "analysis of a.py")
    [message] = ls.logged
    assert len(message) < 1_000 and message.startswith("autograd-lsp: analysis of a.py failed: Huge")


def test_an_internal_error_in_part_of_a_document_is_logged_once():
    from types import SimpleNamespace

    from autograd_lsp.server.linting import log_internal_errors

    class Recorder:
        def __init__(self):
            self.logged = []

        def window_log_message(self, params):
            self.logged.append((params.type, params.message))

    ls, state = Recorder(), SimpleNamespace(uri="file:///w/train.py", told=set())
    for _ in range(3):                      # three keystrokes, the same bug of ours
        log_internal_errors(ls, state, ["AttributeError: 'X' object has no attribute 'oid'"])
    [(level, message)] = ls.logged
    assert level == 2                       # a warning in the log, not a popup
    assert message.startswith("autograd-lsp: part of train.py was not analysed after an internal error "
                              "(AttributeError: 'X' object has no attribute 'oid')")


def test_cancelled_pulls_stop_their_analyses():
    client = _client(PULL, timeout_ms=120_000)
    try:
        numbers = []
        for name in ("slow1.py", "slow2.py"):           # one for each worker thread
            client.open(f"file:///{name}", SLOW.replace("z = ", f"z_{name[4]} = "))
            numbers.append(client.request("textDocument/diagnostic",
                                          {"textDocument": {"uri": f"file:///{name}"}}))
        time.sleep(1)
        for number in numbers:
            client.notify("$/cancelRequest", {"id": number})
        for number in numbers:
            client.response(number, 60)
        # The workers are free again long before the slow analyses would have ended.
        client.open("file:///a.py", BUG)
        started = time.monotonic()
        assert [d["code"] for d in client.pull("file:///a.py")] == ["AG101"]
        assert time.monotonic() - started < 10
    finally:
        client.close()
