"""An error raised inside a helper, also reported where the helper is called
with what makes it raise.

`def derivative(y, x): return torch.autograd.grad(y, x, ...)[0]` is correct;
`derivative(derivative(u, x), x)` raises inside it, because the gradient it is
given has no graph. The report at the helper's line names its parameter (`y`);
the caller, reading their own code, needs it at the call that passed the value:
that call gets the same finding, saying which helper raises.

Only for errors torch raises (the call surely fails) and only when the reported
expression reads one of the helper's parameters (other than `self`/`cls`): a
helper that makes its own bad tensor is wrong whoever calls it.
"""
from __future__ import annotations

import ast

from autograd_lsp.analysis.rule import Report
from autograd_lsp.analysis.trace import CallSite
from autograd_lsp.analysis.tree import nodes

_CALLED_HERE = {
    "en": "in `{name}`, called here: {message}",
    "zh": "在此处调用的 `{name}` 中：{message}",
}


def reported_at_call(rule, report: Report, locale: str) -> Report | None:
    """The report again at the call that passed the value it is about, or None."""
    if rule.severity != "error":
        return None
    at = report.at
    if at is None or isinstance(at, CallSite) or not at.ctx.calls:
        return None
    site = at.ctx.calls[-1]
    function = at.ctx.function
    if not isinstance(site, CallSite) or function is None or getattr(site.function, "node", None) is not function.node \
            or not isinstance(function.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    if not _parameters(function.node) & _names(report.node):
        return None
    return said_at_call(site, report.message, locale)


def call_toward(event, beside) -> CallSite | None:
    """The followed call, written in the function run that `beside` happens in,
    through which `event` happened (a helper called beside a backward that changes
    what it saved, clears its gradients, or backwards for its step); None when
    `event` happens in that run itself or not inside it."""
    calls, outer = event.ctx.calls, beside.ctx.calls
    if len(calls) <= len(outer) or calls[:len(outer)] != outer:
        return None
    site = calls[len(outer)]
    if not isinstance(site, CallSite) or not isinstance(getattr(site.function, "node", None),
                                                         (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return site


def said_at_call(site: CallSite, message: str, locale: str) -> Report:
    """`message`, about code inside the function `site` calls, said at that call."""
    return Report(site.node, called_here(site.function.node.name, message, locale), (), at=site)


def called_here(name: str, message: str, locale: str) -> str:
    """`message`, about code inside the function `name`, said at a call of it."""
    template = _CALLED_HERE.get(locale) or _CALLED_HERE["en"]
    return template.format(name=name, message=message)


def _parameters(node) -> set:
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return set(names) - {"self", "cls"}


def _names(node) -> set:
    if not isinstance(node, ast.AST):
        return set()
    return {n.id for n in nodes(node) if isinstance(n, ast.Name)}
