"""What the client can do, read once from `initialize`."""
from __future__ import annotations

from lsprotocol import types

from autograd_lsp.analysis.records import record


@record
class ClientCapabilities:
    # LSP 3.17 pull diagnostics; such clients are never pushed diagnostics too,
    # or they would show every diagnostic twice.
    pull_diagnostics: bool = False
    diagnostic_refresh: bool = False
    resolve_code_action_edits: bool = False
    workspace_configuration: bool = False
    watched_files_registration: bool = False
    configuration_registration: bool = False
    # Hover text as Markdown; False when the client lists only plaintext (eglot
    # without markdown-mode would show the raw markup).
    hover_markdown: bool = True

    @staticmethod
    def from_client(caps: types.ClientCapabilities | None) -> "ClientCapabilities":
        caps = caps or types.ClientCapabilities()
        text_document = caps.text_document
        workspace = caps.workspace
        code_action = text_document.code_action if text_document else None
        resolve = code_action.resolve_support if code_action else None
        hover = text_document.hover if text_document else None
        formats = list(hover.content_format or []) if hover else []
        return ClientCapabilities(
            pull_diagnostics=bool(text_document and text_document.diagnostic is not None),
            diagnostic_refresh=bool(workspace and workspace.diagnostics
                                    and workspace.diagnostics.refresh_support),
            resolve_code_action_edits=bool(code_action and code_action.data_support and resolve
                                           and "edit" in resolve.properties),
            workspace_configuration=bool(workspace and workspace.configuration),
            watched_files_registration=bool(workspace and workspace.did_change_watched_files
                                            and workspace.did_change_watched_files.dynamic_registration),
            configuration_registration=bool(workspace and workspace.did_change_configuration
                                            and workspace.did_change_configuration.dynamic_registration),
            hover_markdown=not formats or types.MarkupKind.Markdown in formats,
        )
