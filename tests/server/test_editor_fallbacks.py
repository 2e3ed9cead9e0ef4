"""What the server does for clients that say little: no UI language (Neovim,
eglot), hovers in plaintext only (eglot without markdown-mode), no file
watching (Neovim on Linux, eglot in Emacs 28)."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.server.session import (AG101_SOURCE, PROFILES, codes, diagnostics, open_document,
                                  session)

CHINESE = "不是标量"


def project(tmp_path: Path, table: str = "") -> str:
    (tmp_path / "pyproject.toml").write_text(f"[tool.autograd-lsp]\n{table}", encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(AG101_SOURCE, encoding="utf-8")
    return path.as_uri()


@pytest.mark.parametrize("variables, chinese", [
    ({"LANG": "zh_CN.UTF-8"}, True),
    ({"LC_MESSAGES": "zh_CN.UTF-8", "LANG": "en_US.UTF-8"}, True),
    ({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, False),
    ({"LANG": "en_US.UTF-8"}, False),
])
async def test_without_a_client_locale_the_environment_decides(tmp_path, variables, chinese):
    uri = project(tmp_path)
    async with session("neovim-0.7", env=variables) as client:
        open_document(client, uri, AG101_SOURCE)
        [found] = await diagnostics(client, uri)
        assert (CHINESE in found.message) == chinese


async def test_the_projects_locale_comes_before_the_environment(tmp_path):
    uri = project(tmp_path, 'locale = "en"\n')
    async with session("neovim-0.7", env={"LANG": "zh_CN.UTF-8"}) as client:
        open_document(client, uri, AG101_SOURCE)
        [found] = await diagnostics(client, uri)
        assert CHINESE not in found.message


async def test_the_clients_locale_comes_before_the_environment(tmp_path):
    uri = project(tmp_path)
    async with session("vscode", locale="en", env={"LANG": "zh_CN.UTF-8"}) as client:
        open_document(client, uri, AG101_SOURCE)
        [found] = await diagnostics(client, uri)
        assert CHINESE not in found.message


async def test_hover_in_plaintext_for_a_client_that_takes_no_markdown(tmp_path):
    uri = project(tmp_path)
    capabilities = client_capabilities(PROFILES["emacs"])
    capabilities.text_document.hover = types.HoverClientCapabilities(
        content_format=[types.MarkupKind.PlainText])
    async with session("emacs", capabilities=capabilities) as client:
        open_document(client, uri, AG101_SOURCE)
        await diagnostics(client, uri)
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(3, 0)))
        assert hover.contents.kind == types.MarkupKind.PlainText
        assert "y: what autograd-lsp knows at this point" in hover.contents.value
        assert "`" not in hover.contents.value and "**" not in hover.contents.value


async def test_a_changed_pyproject_is_noticed_without_file_watching(tmp_path):
    uri = project(tmp_path)
    async with session("neovim-0.7", initialization_options={"debounceMs": 0}) as client:
        assert not any(r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES for r in client.registrations)
        open_document(client, uri, AG101_SOURCE)
        assert codes(await diagnostics(client, uri, version=1)) == ["AG101"]
        (tmp_path / "pyproject.toml").write_text('[tool.autograd-lsp]\nignore = ["AG101"]\n')
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=AG101_SOURCE + "\n")]))
        assert await diagnostics(client, uri, version=2) == []
