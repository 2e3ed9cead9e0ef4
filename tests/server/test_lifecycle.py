"""shutdown/exit, and a server that survives a failing analysis."""
from __future__ import annotations

import asyncio
import sys

from lsprotocol import types

from tests.server.session import AG101_SOURCE, codes, diagnostics, open_document, session

URI = "file:///tmp/autograd_lsp_test/lifecycle.py"

# The server with a core that fails on any text containing "CRASH" (in analyze
# and in facts_at): what an unforeseen bug in the analysis looks like.
CRASHING_SERVER = [sys.executable, "-c", """
import autograd_lsp.analysis.engine as engine
analyze, facts_at = engine.Analyzer.analyze, engine.Analyzer.facts_at
def failing_analyze(self, source, settings=None, **options):
    if "CRASH" in source:
        raise RuntimeError("core failure")
    return analyze(self, source, settings, **options)
def failing_facts_at(self, line, column):
    raise RuntimeError("core failure in facts_at")
engine.Analyzer.analyze, engine.Analyzer.facts_at = failing_analyze, failing_facts_at
from autograd_lsp.server import run
run()
"""]


async def test_shutdown_then_exit_ends_with_code_0():
    async with session("vscode") as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, until=lambda items: items)
        server = client._server
    assert server.returncode == 0


async def test_exit_without_shutdown_ends_with_code_1():
    async with session("vscode", shutdown=False) as client:
        client.exit(None)
        await asyncio.wait_for(client._server.wait(), 10)
        assert client._server.returncode == 1


async def test_a_failing_analysis_is_logged_and_the_server_keeps_serving():
    async with session("vscode", server_command=CRASHING_SERVER) as client:
        crash_uri = URI.replace(".py", "_crash.py")
        open_document(client, crash_uri, AG101_SOURCE + "# CRASH\n")
        assert await diagnostics(client, crash_uri) == []
        assert any("core failure" in m.message and m.type == types.MessageType.Error
                   for m in client.log_messages)
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=crash_uri), position=types.Position(3, 0)))
        assert hover is None
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=crash_uri),
            range=types.Range(types.Position(0, 0), types.Position(5, 0)),
            context=types.CodeActionContext(diagnostics=[])))
        assert list(actions) == []
        # Another document, and hovers that fail inside the core, still get answers.
        open_document(client, URI, AG101_SOURCE)
        assert codes(await diagnostics(client, URI, until=lambda items: items)) == ["AG101"]
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(3, 0)))
        assert hover is None
        assert any("facts_at" in m.message for m in client.log_messages)


async def test_tcp_transport(unused_tcp_port):
    import json
    import os

    from tests.server.session import REPO
    env = dict(os.environ, PYTHONPATH=str(REPO))
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "autograd_lsp.server", "--tcp", f"127.0.0.1:{unused_tcp_port}", env=env)
    try:
        for _ in range(100):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", unused_tcp_port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("the server did not listen")

        async def send(message: dict) -> None:
            body = json.dumps({"jsonrpc": "2.0", **message}).encode()
            writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            await writer.drain()

        async def receive() -> dict:
            length = 0
            while (line := await reader.readline()) != b"\r\n":
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            return json.loads(await reader.readexactly(length))

        await send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        response = await asyncio.wait_for(receive(), 20)
        assert response["result"]["serverInfo"]["name"] == "autograd-lsp"
        await send({"id": 2, "method": "shutdown"})
        assert (await asyncio.wait_for(receive(), 10))["id"] == 2
        await send({"method": "exit"})
        assert await asyncio.wait_for(server.wait(), 10) == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
