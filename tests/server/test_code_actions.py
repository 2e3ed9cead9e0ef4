"""Code actions: a quick fix per fix, suppress with `# noqa`, fix-all, lazy resolve."""
from __future__ import annotations

from collections import Counter

import pytest
import pytest_asyncio
from lsprotocol import types

from autograd_lsp.analysis import Settings, all_rules
from autograd_lsp.analysis.edits import apply_edits
from autograd_lsp.fixing import fix_text
from tests.server.session import AG101_SOURCE, ALL_PROFILES, apply_lsp_edits, codes, core_findings, \
    diagnostics, edits_of, open_document, session

URI = "file:///tmp/autograd_lsp_test/actions.py"
WHOLE = types.Range(types.Position(0, 0), types.Position(10_000, 0))


async def actions_for(client, uri: str, diagnostic: types.Diagnostic | None = None, only=None):
    range_ = diagnostic.range if diagnostic else WHOLE
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=range_,
        context=types.CodeActionContext(diagnostics=[diagnostic] if diagnostic else [], only=only)))
    return list(result or [])


async def resolved(client, action: types.CodeAction) -> types.CodeAction:
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    return action


def encoding_of(client) -> str:
    return client.initialize_result.capabilities.position_encoding


@pytest.mark.parametrize("profile", ALL_PROFILES)
async def test_ag101_quick_fixes_remove_the_diagnostic(profile):
    async with session(profile) as client:
        open_document(client, URI, AG101_SOURCE)
        (d,) = await diagnostics(client, URI, until=lambda items: items)
        actions = await actions_for(client, URI, d)
        fix_all = actions.pop()
        assert fix_all.kind == "source.fixAll.autograd-lsp"
        (finding,) = core_findings(AG101_SOURCE)
        assert [a.title for a in actions] == [f"{fix.title} (AG101)" for fix in finding.fixes] + [
            "Suppress AG101 on this line (# noqa: AG101)"]
        first_safe = next(n for n, fix in enumerate(finding.fixes) if fix.safe)
        assert [a.is_preferred for a in actions[:-1]] == [
            n == first_safe for n in range(len(finding.fixes))]
        assert all(a.kind == types.CodeActionKind.QuickFix and list(a.diagnostics) == [d] for a in actions)
        lazy = profile != "emacs"
        assert all((a.edit is None) == lazy for a in actions)
        expected = [apply_edits(AG101_SOURCE, fix.edits) for fix in finding.fixes] + [
            AG101_SOURCE.replace("y.backward()", "y.backward()  # noqa: AG101")]
        for number, (action, want) in enumerate(zip(actions, expected)):
            action = await resolved(client, action)
            fixed = apply_lsp_edits(AG101_SOURCE, edits_of(action, URI), encoding_of(client))
            assert fixed == want
            uri = URI.replace(".py", f"_{number}.py")
            open_document(client, uri, fixed)
            assert await diagnostics(client, uri, until=lambda items: True) == []


async def test_suppress_merges_into_an_existing_noqa_comment():
    source = AG101_SOURCE.replace("y.backward()", "y.backward()  # 反向 😀  # noqa: AG2")
    async with session("vscode") as client:
        open_document(client, URI, source)
        (d,) = await diagnostics(client, URI, until=lambda items: items)
        (suppress,) = [a for a in await actions_for(client, URI, d) if a.title.startswith("Suppress")]
        fixed = apply_lsp_edits(source, edits_of(await resolved(client, suppress), URI))
        assert fixed.splitlines()[3] == "y.backward()  # 反向 😀  # noqa: AG2, AG101"


async def test_fix_all_applies_every_safe_fix():
    source = AG101_SOURCE + "z = x * 3\nz.backward()\n"
    async with session("vscode") as client:
        open_document(client, URI, source)
        await diagnostics(client, URI, until=lambda items: len(items) == 2)
        actions = await actions_for(client, URI, only=[types.CodeActionKind.SourceFixAll])
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.autograd-lsp"
        fixed = apply_lsp_edits(source, edits_of(await resolved(client, fix_all), URI))
        assert fixed == fix_text(source, Settings()).text != source
        compile(fixed, "fixed.py", "exec")
        # Quick fixes are not offered when only source actions are asked for.
        assert all(a.kind.startswith("source.") for a in actions)


async def test_resolve_of_an_outdated_action_gives_no_edit():
    async with session("vscode") as client:
        open_document(client, URI, AG101_SOURCE)
        (d,) = await diagnostics(client, URI, until=lambda items: items)
        action = (await actions_for(client, URI, d))[0]
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n" + AG101_SOURCE)]))
        assert (await client.code_action_resolve_async(action)).edit is None


def bad_example_params():
    for rule in all_rules():
        for number, example in enumerate(rule.bad):
            yield pytest.param(rule, number, example, id=f"{rule.name}-{number}")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_client():
    # One server for all examples: the documents have distinct URIs.
    async with session("vscode") as client:
        yield client


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("rule, number, example", bad_example_params())
async def test_every_quick_fix_of_every_bad_example(shared_client, rule, number, example):
    """Through the server, as an editor would: each fix (safe or not) removes a
    finding of its rule and leaves code that compiles; so does the suppress action."""
    client = shared_client
    problems = []
    uri = f"file:///tmp/autograd_lsp_test/{rule.name}_{number}.py"
    open_document(client, uri, example.code)
    items = await diagnostics(client, uri, until=lambda items: rule.code in codes(items))
    before = Counter(codes(items))
    checked = 0
    for d in (d for d in items if d.code == rule.code):
        for action in await actions_for(client, uri, d, only=[types.CodeActionKind.QuickFix]):
            if action.diagnostics[0].code != rule.code:
                continue  # another finding under the same range
            action = await resolved(client, action)
            fixed = apply_lsp_edits(example.code, edits_of(action, uri))
            try:
                compile(fixed, uri, "exec")
            except SyntaxError as exc:
                problems.append(f"{action.title}: does not compile: {exc}")
                continue
            fixed_uri = uri.replace(".py", f"_fixed_{checked}.py")
            checked += 1
            open_document(client, fixed_uri, fixed)
            after = Counter(codes(await diagnostics(client, fixed_uri, until=lambda items: True)))
            if after[rule.code] >= before[rule.code]:
                problems.append(f"{action.title}: {rule.code} still reported in\n{fixed}")
            client.text_document_did_close(types.DidCloseTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=fixed_uri)))
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert checked >= 1   # at least the suppress action
    assert not problems, "\n".join(problems)
