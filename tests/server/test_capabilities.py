"""What the server announces, per client profile."""
from __future__ import annotations

import pytest
from lsprotocol import types

from tests.server.session import ALL_PROFILES, session


@pytest.mark.parametrize("profile", ALL_PROFILES)
async def test_announces_features(profile):
    async with session(profile) as client:
        caps = client.initialize_result.capabilities
        assert client.initialize_result.server_info.name == "autograd-lsp"
        sync = caps.text_document_sync
        assert sync.change == types.TextDocumentSyncKind.Incremental and sync.open_close
        assert caps.hover_provider
        assert caps.code_action_provider.resolve_provider
        assert set(caps.code_action_provider.code_action_kinds) == {
            types.CodeActionKind.QuickFix, "source.fixAll.autograd-lsp"}
        assert caps.diagnostic_provider.identifier == "autograd-lsp"
        assert not caps.diagnostic_provider.inter_file_dependencies


@pytest.mark.parametrize("profile, encoding", [
    ("vscode", "utf-16"), ("neovim-0.7", "utf-16"), ("neovim-0.11", "utf-8"), ("emacs", "utf-32")])
async def test_negotiates_position_encoding(profile, encoding):
    async with session(profile) as client:
        assert client.initialize_result.capabilities.position_encoding == encoding
