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
import analysis.engine as engine
analyze, facts_at = engine.Analyzer.analyze, engine.Analyzer.facts_at
def failing_analyze(self, source, settings=None):
    if "CRASH" in source:
        raise RuntimeError("core failure")
    return analyze(self, source, settings)
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
