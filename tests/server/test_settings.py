"""Settings from initializationOptions, workspace/configuration, didChangeConfiguration
and pyproject.toml; the locale, and that every text exists in every locale."""
from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from autograd_lsp.analysis import all_rules
from autograd_lsp.server.hover_docs import DOCS
from autograd_lsp.server.settings import parse_editor_settings
from autograd_lsp.server.texts import LOCALES, TEXTS, normalize_locale
from tests.server.session import AG101_SOURCE, codes, core_findings, diagnostics, open_document, session

URI = "file:///tmp/autograd_lsp_test/settings.py"
ZH_MESSAGE = "不是标量"


# -- catalogues -----------------------------------------------------------------------

@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_every_rule_has_every_text_in_every_locale(rule):
    for locale in LOCALES:
        assert rule.summary.get(locale), (rule.code, locale, "summary")
        assert rule.explanation.get(locale), (rule.code, locale, "explanation")
        assert set(rule.messages.get(locale, {})) == set(rule.messages["en"]), (rule.code, locale)


def test_every_hover_doc_and_server_text_in_every_locale():
    for locale in LOCALES:
        assert set(DOCS[locale]) == set(DOCS["en"]) and all(DOCS[locale].values()), locale
        assert set(TEXTS[locale]) == set(TEXTS["en"]) and all(TEXTS[locale].values()), locale


@pytest.mark.parametrize("tag, locale", [
    ("zh", "zh"), ("zh-CN", "zh"), ("zh-Hans", "zh"), ("zh_CN", "zh"), ("zh-Hans-CN", "zh"),
    ("en-US", "en"), ("en", "en"), ("fr", None), (None, None), ("", None)])
def test_normalize_locale(tag, locale):
    assert normalize_locale(tag) == locale


def test_bad_settings_are_dropped_and_reported():
    settings, problems = parse_editor_settings(
        {"autograd-lsp": {"enable": "yes", "select": 3, "severity": {"AG101": "fatal"}, "locale": "fr"}})
    assert settings.enable is None and settings.select is None and settings.severities == ()
    assert len(problems) == 4


# -- through the server ------------------------------------------------------------------

async def only_diagnostic(client, uri=URI):
    (d,) = await diagnostics(client, uri, until=lambda items: len(items) == 1)
    return d


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.11"])
async def test_locale_from_initialize(profile):
    async with session(profile, locale="zh-CN") as client:
        open_document(client, URI, AG101_SOURCE)
        d = await only_diagnostic(client)
        assert ZH_MESSAGE in d.message
        (finding,) = core_findings(AG101_SOURCE, "zh")
        assert d.data["fixes"][0]["title"] == finding.fixes[0].title
        assert finding.fixes[0].title != core_findings(AG101_SOURCE)[0].fixes[0].title


async def test_locale_setting_wins_over_the_client_language():
    async with session("emacs", locale="en-US", initialization_options={"locale": "zh"}) as client:
        open_document(client, URI, AG101_SOURCE)
        assert ZH_MESSAGE in (await only_diagnostic(client)).message


async def test_workspace_configuration_and_did_change_configuration():
    async with session("vscode", configuration={"": {"locale": "zh-CN"}}) as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, until=lambda items: items and ZH_MESSAGE in items[0].message)
        client.set_configuration({"locale": "en", "severity": {"nonscalar-backward": "info"}},
                                 section="autograd-lsp")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        d = await diagnostics(client, URI, until=lambda items: items and "not a scalar" in items[0].message)
        assert d[0].severity == types.DiagnosticSeverity.Information
        client.set_configuration({"ignore": ["AG1"]}, section="autograd-lsp")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await diagnostics(client, URI, until=lambda items: items == [])
        client.set_configuration({"enable": False}, section="autograd-lsp")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        client.set_configuration({}, section="autograd-lsp")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await diagnostics(client, URI, until=lambda items: codes(items) == ["AG101"])


async def test_push_model_settings_in_did_change_configuration():
    # Neovim 0.7 has no workspace/configuration: settings arrive in the notification.
    async with session("neovim-0.7", initialization_options={"select": ["AG2"]}) as client:
        open_document(client, URI, AG101_SOURCE)
        await diagnostics(client, URI, until=lambda items: items == [])
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
            settings={"autograd-lsp": {"select": ["AG1"], "locale": "zh"}}))
        d = await only_diagnostic(client)
        assert d.code == "AG101" and ZH_MESSAGE in d.message


async def test_pull_client_gets_a_refresh_after_a_settings_change():
    capabilities = client_capabilities("neovim@v0.11.0")
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    async with session("neovim-0.11", capabilities=capabilities) as client:
        open_document(client, URI, AG101_SOURCE)
        await only_diagnostic(client)
        refreshes = client.diagnostic_refresh_count
        client.set_configuration({"ignore": ["nonscalar-backward"]}, section="autograd-lsp")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await diagnostics(client, URI, until=lambda items: items == [])
        assert client.diagnostic_refresh_count > refreshes
        assert client.published == []


async def test_pyproject_per_workspace_folder_and_reload_on_change(tmp_path):
    project_a, project_b = tmp_path / "a", tmp_path / "b"
    for project in (project_a, project_b):
        project.mkdir()
        (project / "train.py").write_text(AG101_SOURCE)
    (project_a / "pyproject.toml").write_text('[tool.autograd-lsp]\nignore = ["AG101"]\n')
    (project_b / "pyproject.toml").write_text('[tool.autograd-lsp]\nlocale = "zh"\n')
    folders = [types.WorkspaceFolder(uri=p.as_uri(), name=p.name) for p in (project_a, project_b)]
    uri_a, uri_b = (project_a / "train.py").as_uri(), (project_b / "train.py").as_uri()
    async with session("vscode", workspace_folders=folders) as client:
        open_document(client, uri_a, AG101_SOURCE)
        open_document(client, uri_b, AG101_SOURCE)
        assert await diagnostics(client, uri_a) == []
        assert ZH_MESSAGE in (await only_diagnostic(client, uri_b)).message
        (project_a / "pyproject.toml").write_text('[tool.autograd-lsp]\nseverity = { AG101 = "warning" }\n')
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=(project_a / "pyproject.toml").as_uri(), type=types.FileChangeType.Changed)]))
        d = await only_diagnostic(client, uri_a)
        assert d.severity == types.DiagnosticSeverity.Warning
        assert [r.method for r in client.registrations] == [
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES, types.WORKSPACE_DID_CHANGE_CONFIGURATION]


async def test_broken_pyproject_is_reported_and_defaults_apply(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.autograd-lsp]\nselect = ["no-such-rule"]\n')
    uri = (tmp_path / "train.py").as_uri()
    async with session("vscode") as client:
        open_document(client, uri, AG101_SOURCE)
        assert codes(await diagnostics(client, uri, until=lambda items: items)) == ["AG101"]
        assert any("no-such-rule" in m.message for m in client.messages)


# -- one validator for every source of settings ----------------------------------------

def test_a_typo_in_an_editor_setting_is_reported_and_disables_nothing():
    settings, problems = parse_editor_settings({"select": ["nonscalar-bakward"],
                                                "severity": {"nonscalar-bakward": "info"}})
    assert settings.select is None and settings.severities == ()
    assert len(problems) == 2 and all("unknown rule 'nonscalar-bakward'" in p for p in problems)


def test_editor_settings_and_pyproject_share_one_validator(tmp_path):
    from autograd_lsp.config import ConfigError, load_pyproject
    bad = {"select": ["AG9x"], "ignore": 3, "severity": {"AG101": "fatal"}, "locale": "fr"}
    _, problems = parse_editor_settings(bad)
    for key, value in bad.items():
        pyproject = tmp_path / f"{key}.toml"
        rendered = {"select": '["AG9x"]', "ignore": "3", "severity": '{ AG101 = "fatal" }',
                    "locale": '"fr"'}[key]
        pyproject.write_text(f"[tool.autograd-lsp]\n{key} = {rendered}\n")
        with pytest.raises(ConfigError) as raised:
            load_pyproject(pyproject)
        # The same words, wherever the setting came from.
        assert any(problem in str(raised.value) for problem in problems), (key, problems)


async def test_a_typo_in_initialization_options_is_shown_and_rules_stay_on():
    async with session("vscode", initialization_options={"select": ["nonscalar-bakward"]}) as client:
        open_document(client, URI, AG101_SOURCE)
        assert codes(await diagnostics(client, URI, until=lambda items: items)) == ["AG101"]
        assert any("nonscalar-bakward" in shown.message for shown in client.messages)
