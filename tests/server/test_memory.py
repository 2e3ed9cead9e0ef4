"""The server keeps nothing per message it handled: a long session's memory
stays flat (benchmarks/soak.py measures it over 10,000 edits)."""
from __future__ import annotations

import asyncio
import json

from autograd_lsp.server import transport
from autograd_lsp.server.app import create_server


class _Sink:
    def __init__(self):
        self.sent = []

    def write(self, data):
        self.sent.append(data)

    def close(self):
        pass


def _notification(method: str, params: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()


def test_notifications_leave_no_future_behind():
    async def session():
        ls = create_server()
        ls.protocol.set_writer(_Sink())
        lifecycle, stop = transport.Lifecycle(), asyncio.Event()
        transport.handle_body(ls, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                              "params": {"capabilities": {}}}).encode(), lifecycle, stop)
        await asyncio.sleep(0.1)
        assert lifecycle.initialized
        uri = "file:///a.py"
        transport.handle_body(ls, _notification("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "python", "version": 0, "text": "x = 1\n"}}), lifecycle, stop)
        for version in range(1, 201):
            transport.handle_body(ls, _notification("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": 0, "character": 0},
                                              "end": {"line": 0, "character": 0}}, "text": ""}]}),
                lifecycle, stop)
        await asyncio.sleep(0)
        kept = len(ls.protocol._request_futures)
        ls.close()
        return kept

    # The last one is let go when the next message comes.
    assert asyncio.run(session()) <= 1
