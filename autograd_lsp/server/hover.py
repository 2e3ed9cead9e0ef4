"""`textDocument/hover`: three kinds of answer, tried in this order.

1. On a code inside a `# noqa:` comment: that rule's explanation.
2. On a variable the analysis followed: what it knows about it at that point.
3. On an autograd API name used as torch uses it: what it does to the graph.
"""
from __future__ import annotations

import re

from lsprotocol import types

from autograd_lsp.analysis import all_rules, rule_by_key
from autograd_lsp.analysis.facts import NumberValue, ObjectRef, TensorFacts
from autograd_lsp.analysis.graph import backward_graph
from autograd_lsp.analysis.suppression import NOQA
from autograd_lsp.server.hover_docs import HOW_USED, api_doc
from autograd_lsp.server.linting import analyse_now
from autograd_lsp.server.texts import text

_WORD = re.compile(r"\w+")
_CODE = re.compile(r"[A-Za-z]+[0-9]*")
_TORCH_IMPORT = re.compile(r"from\s+torch[\w.]*\s+import\s+(\([^)]*\)|[^\n]*)")


async def hover(ls, params: types.HoverParams):
    analysis = await analyse_now(ls, params.text_document.uri, with_facts=True)
    if analysis is None or not analysis.settings.enabled:
        return None
    state = ls.documents.find(params.text_document.uri)
    locale = analysis.settings.settings.locale
    index = analysis.index
    line, column = index.from_client(params.position)
    line_text = index.line_text(line)

    found = noqa_hover(line_text, column, locale)
    if found is not None:
        start, end, markdown = found
    else:
        word = _word_at(line_text, column)
        if word is None or _in_comment_or_string(line_text, word.start()):
            return None
        start, end = word.span()
        markdown = None
        if analysis.notebook is not None and not analysis.settings.excluded:
            from autograd_lsp.server.notebook_sync import facts_at
            facts = await facts_at(ls, analysis, line, column)
            if facts is not None:
                markdown = facts_markdown(facts[0], facts[1], locale)
        elif state is not None and not analysis.settings.excluded:
            async with state.lock:
                # The analyzer remembers its last run only: it must be this one.
                analyzer = state.analyzer
                facts = (analyzer.facts_at(line, column)
                         if analyzer is not None and state.latest is analysis else None)
            if facts is not None:
                markdown = facts_markdown(facts[0], facts[1], locale)
        if markdown is None:
            key = api_key(line_text, word, analysis.text)
            markdown = api_doc(key, locale) if key else None
        if markdown is None:
            return None
    if ls.capabilities.hover_markdown:
        contents = types.MarkupContent(kind=types.MarkupKind.Markdown, value=markdown)
    else:
        contents = types.MarkupContent(kind=types.MarkupKind.PlainText, value=plain_text(markdown))
    return types.Hover(contents=contents, range=index.range_to_client(line, start, line, end))


def plain_text(markdown: str) -> str:
    """The hover's Markdown as a reader wants it in a plain text popup: no
    backticks, emphasis markers or code fences (code blocks keep their lines)."""
    lines = []
    for line in markdown.split("\n"):
        if line.startswith("```"):
            continue
        line = re.sub(r"\*\*(.+?)\*\*", r"\1", line)
        line = re.sub(r"`([^`]*)`", r"\1", line)
        lines.append(line)
    return "\n".join(lines)


# -- noqa codes -------------------------------------------------------------------------

def noqa_hover(line_text: str, column: int, locale: str):
    match = NOQA.search(line_text)
    if match is None or not match.group("codes"):
        return None
    offset = match.start("codes")
    for code in _CODE.finditer(match.group("codes")):
        start, end = offset + code.start(), offset + code.end()
        if start <= column <= end:
            return start, end, rule_markdown(code.group(), locale)
    return None


def rule_markdown(key: str, locale: str) -> str:
    rule = rule_by_key(key)
    if rule is not None:
        summary, explanation = rule.describe(locale)
        return f"**{rule.code} {rule.name}**: {summary}\n\n{explanation}"
    # A prefix ("AG1") suppresses every rule whose code starts with it.
    matching = [r for r in all_rules() if r.code.startswith(key.upper())]
    if not matching:
        return f"`{key}`: no such rule"
    lines = [text("noqa_prefix", locale, prefix=key.upper())]
    lines += [f"- **{r.code} {r.name}**: {r.describe(locale)[0]}" for r in matching]
    return "\n".join(lines)


# -- facts of a variable ----------------------------------------------------------------

def facts_markdown(name: str, value, locale: str) -> str | None:
    t = lambda key, **args: text(key, locale, **args)  # noqa: E731
    if isinstance(value, TensorFacts):
        rows = [
            f"{t('requires_grad')}: {_tri(value.requires_grad, locale)}",
            f"{t('is_leaf')}: {_tri(value.is_leaf, locale)}"
            + (f" · {t('grad_fn')}: `{value.grad_fn}`" if value.grad_fn else ""),
            f"{t('dtype')}: {value.dtype or t('unknown')} · {t('shape')}: {_shape(value.shape, locale)}",
        ]
        if value.grad is not None:
            key = {"none": "grad_none", "zero": "grad_zero", "summed": "grad_summed"}.get(value.grad, "grad_set")
            rows.append(f"{t('grad')}: {t(key)}")
        if value.graph_freed:
            rows.append(f"{t('graph_freed')}: {t('graph_freed_yes')}")
        if value.no_grad_reason:
            reason = TEXT_KEYS_OF_REASON.get(value.no_grad_reason)
            rows.append(f"{t('no_grad_reason')}: {t(reason) if reason else value.no_grad_reason}")
        kind = t("tensor")
        body = "\n".join(f"- {row}" for row in rows)
        graph = backward_graph(value, name)
        if len(graph) > 1:
            body += f"\n\n{t('backward_graph')}\n```text\n" + "\n".join(graph) + "\n```"
        footer = f"\n\n{t('history_opaque')}" if value.opaque and value.requires_grad is not False else ""
        return f"{t('facts_title', name=name)} ({kind})\n\n{body}{footer}"
    if isinstance(value, ObjectRef) and value.kind == "module":
        return f"{t('facts_title', name=name)}\n\n- {t('module', cls=value.class_name)}"
    if isinstance(value, ObjectRef) and value.kind == "optimizer":
        return f"{t('facts_title', name=name)}\n\n- {t('optimizer')} `{value.class_name}`"
    if isinstance(value, ObjectRef) and value.kind == "loader":
        return f"{t('facts_title', name=name)}\n\n- {t('data_loader')}"
    if isinstance(value, ObjectRef) and value.kind == "instance":
        return f"{t('facts_title', name=name)}\n\n- {t('object', cls=value.class_name)}"
    if isinstance(value, NumberValue):
        return f"{t('facts_title', name=name)}\n\n- {t('number', kind=value.kind)}"
    return None


TEXT_KEYS_OF_REASON = {
    "no_grad": "reason_no_grad", "inference_mode": "reason_inference_mode",
    "detach": "reason_detach", "rewrap": "reason_rewrap", "never": "reason_never",
    "grad_result": "reason_grad_result", "data": "reason_data",
}


def _tri(value, locale: str) -> str:
    return text("unknown" if value is None else ("yes" if value else "no"), locale)


def _shape(shape, locale: str) -> str:
    if shape is None:
        return text("unknown", locale)
    from autograd_lsp.analysis.rulekit import dim_text
    dims = ", ".join(dim_text(d) for d in shape)
    if not shape:
        return f"{text('scalar', locale)} `()`"
    return f"`({dims}{',' if len(shape) == 1 else ''})`"


# -- autograd API names -------------------------------------------------------------------

def api_key(line_text: str, word: re.Match, source: str) -> str | None:
    """The `hover_docs` key of the name under the cursor, if torch code uses it here."""
    name = word.group()
    before, after = line_text[:word.start()], line_text[word.end():]
    is_attr = before.rstrip().endswith(".")
    if name == "grad" and re.search(r"\bautograd\s*\.\s*$", before):
        return "torch.autograd.grad"
    if name == "Variable" and re.search(r"\bautograd\s*\.\s*$", before):
        return "Variable"
    if name == "grad" and not is_attr and re.match(r"\s*\(", after) and _imported(name, source):
        return "torch.autograd.grad"
    uses = HOW_USED.get(name)
    if not uses:
        return None
    if "attr" in uses and is_attr:
        return name
    if "kwarg" in uses and re.match(r"\s*=(?!=)", after) and _inside_call(before, after):
        return name
    if "call" in uses and not is_attr and _imported(name, source):
        return name
    return None


def _imported(name: str, source: str) -> bool:
    """`from torch... import name` somewhere in the module."""
    return any(re.search(rf"\b{re.escape(name)}\b(?!\s+as\b)", names)
               for names in _TORCH_IMPORT.findall(source))


def _inside_call(before: str, after: str) -> bool:
    # On one line: an open parenthesis before. Split over lines: keyword arguments
    # are written without spaces around "=", assignments with them (PEP 8).
    return before.count("(") > before.count(")") or not after.startswith(" ")


def _word_at(line_text: str, column: int) -> re.Match | None:
    for match in _WORD.finditer(line_text):
        if match.start() <= column <= match.end():
            return match
    return None


def _in_comment_or_string(line_text: str, column: int) -> bool:
    """Whether `column` is in a comment or a string literal opened on this line."""
    quote = None
    index = 0
    while index < column:
        ch = line_text[index]
        if quote:
            if ch == "\\":
                index += 1
            elif line_text.startswith(quote, index):
                index += len(quote) - 1
                quote = None
        elif ch == "#":
            return True
        elif ch in "'\"":
            quote = ch * 3 if line_text.startswith(ch * 3, index) else ch
            index += len(quote) - 1
        index += 1
    return quote is not None
