"""Diagnostics: push for clients without pull, pull for the others, never both;
versions, debounce, stale results, clearing on close."""
from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from autograd_lsp.server.app import STATS

from tests.server.session import AG101_SOURCE, ALL_PROFILES, PUSH_PROFILES, codes, core_findings, \
    diagnostics, open_document, session

URI = "file:///tmp/autograd_lsp_test/train.py"


def change(client, version: int, text: str, range_: types.Range | None = None) -> None:
    event = (types.TextDocumentContentChangePartial(range=range_, text=text) if range_
             else types.TextDocumentContentChangeWholeDocument(text=text))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=version),
        content_changes=[event]))


@pytest.mark.parametrize("profile", ALL_PROFILES)
async def test_ag101_reported_with_code_severity_source_and_fix_data(profile):
    async with session(profile) as client:
        open_document(client, URI, AG101_SOURCE)
        items = await diagnostics(client, URI, until=lambda items: items)
        (d,) = items
        assert d.code == "AG101" and d.source == "autograd-lsp"
        assert d.severity == types.DiagnosticSeverity.Error
        assert "not a scalar" in d.message
        assert d.range == types.Range(types.Position(3, 0), types.Position(3, 12))
        assert d.data["name"] == "nonscalar-backward"
        assert d.data["version"] == 1
        (finding,) = core_findings(AG101_SOURCE)
        assert [fix["title"] for fix in d.data["fixes"]] == [fix.title for fix in finding.fixes]
        first = finding.fixes[0].edits[0]
        assert d.data["fixes"][0]["edits"][0] == {
            "range": {"start": {"line": first.line - 1, "character": first.column},
                      "end": {"line": first.end_line - 1, "character": first.end_column}},
            "newText": first.new_text}


@pytest.mark.parametrize("profile", ALL_PROFILES)
async def test_push_only_without_pull_capability(profile):
    async with session(profile) as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, until=lambda items: items)
        await asyncio.sleep(0.4)
        if client.pull:
            assert client.published == []
        else:
            assert [p.version for p in client.published] == [1]


@pytest.mark.parametrize("profile", PUSH_PROFILES[:1])
async def test_incremental_change_republishes_with_version(profile):
    async with session(profile) as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, version=1, until=lambda items: items)
        # "y.backward()" -> "y.sum().backward()"
        change(client, 2, ".sum()", types.Range(types.Position(3, 1), types.Position(3, 1)))
        assert await diagnostics(client, URI, version=2) == []
        change(client, 3, "", types.Range(types.Position(3, 1), types.Position(3, 7)))
        assert codes(await diagnostics(client, URI, version=3)) == ["AG101"]


async def test_pull_reports_unchanged_for_same_version():
    async with session("neovim-0.11") as client:
        open_document(client, URI, AG101_SOURCE)
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=URI))
        first = await client.text_document_diagnostic_async(params)
        assert codes(first.items) == ["AG101"] and first.result_id
        params.previous_result_id = first.result_id
        second = await client.text_document_diagnostic_async(params)
        assert second.kind == "unchanged" and second.result_id == first.result_id


async def test_fast_typing_publishes_only_the_newest_version():
    async with session("vscode") as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, version=1, until=lambda items: items)
        for version in range(2, 12):
            change(client, version, AG101_SOURCE + f"# typing {version}\n")
        items = await diagnostics(client, URI, version=11)
        assert codes(items) == ["AG101"]
        await asyncio.sleep(0.4)
        # No wait by default, yet coalesced: changes that arrive while an analysis
        # runs make one more run, for the newest version; versions only go up.
        versions = [p.version for p in client.published]
        assert versions == sorted(versions) and versions[-1] == 11
        assert len(versions) <= 3
        stats = await client.protocol.send_request_async(STATS, {})
        assert stats.debounceMs == 0
        (analyses,) = tuple(stats.analyses)  # one document (pygls gives a named tuple)
        assert analyses <= 3, "ten changes in a burst must not cost ten analyses"


@pytest.mark.parametrize("profile", PUSH_PROFILES[:1])
async def test_close_clears_diagnostics(profile):
    async with session(profile) as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, until=lambda items: items)
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=URI)))
        await diagnostics(client, URI, until=lambda items: items == [])
        assert client.published[-1].version is None


async def test_syntax_error_is_reported_and_the_rest_still_analysed():
    async with session("vscode") as client:
        open_document(client, URI, AG101_SOURCE + "def broken(:\n    pass\n")
        items = await diagnostics(client, URI, until=lambda items: len(items) >= 2)
        assert sorted(codes(items)) == ["AG001", "AG101"]


async def test_a_bad_setting_is_shown_and_ignored():
    async with session("vscode", initialization_options={"severity": {"AG101": "fatal"}}) as client:
        open_document(client, URI, AG101_SOURCE)
        items = await diagnostics(client, URI, until=lambda items: items)
        assert codes(items) == ["AG101"]
        assert any("severity.AG101" in m.message for m in client.messages)
