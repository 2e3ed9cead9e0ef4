"""Small helpers rules share: printing code, shapes and statements, and edits
that change a call's arguments (built with libcst, so the user's formatting of
everything else in the call is kept)."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import Sym
from autograd_lsp.analysis.trace import (BACKWARD_KEYWORDS, backward_target, is_backward, is_module,  # noqa: F401
                            is_optimizer, target_node)


def code_of(node) -> str:
    """The code of an ast node, as Python writes it back."""
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "…"


def source_of(node, at) -> str:
    """The user's own text of a node, as it stands in the chunk `at` was seen in."""
    source = getattr(getattr(at, "ctx", None), "source", None)
    if source is not None:
        segment = getattr(source, "segment", None)
        text = segment(node) if segment is not None else ast.get_source_segment(source.text, node)
        if text is not None:
            return text
    return code_of(node)


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dim_text(d) -> str:
    if isinstance(d, Sym):
        return str(d.first) if d.first is not None else d.label
    return "?" if d is None else str(d)


def shape_text(shape) -> str:
    if shape is None:
        return "unknown"
    return "(" + ", ".join(dim_text(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def torch_size(shape) -> str:
    return "torch.Size([" + ", ".join(dim_text(d) for d in shape) + "])"


def torch_name(trace) -> str:
    """How this file spells `torch` (`import torch as T` -> "T")."""
    return trace.torch_name or "torch"


def is_tensor_backward(event) -> bool:
    """`t.backward(...)` of torch on a value known to be a tensor."""
    from autograd_lsp.analysis.facts import TensorFacts
    return is_backward(event) and event.method == "backward" and isinstance(event.receiver, TensorFacts)


def sole_statement(event) -> ast.stmt | None:
    """The statement of `event` when the event's call is all that statement does
    (`x.grad.zero_()` on a line of its own): fixes may wrap or replace it."""
    stmt = event.ctx.stmt
    if isinstance(stmt, ast.Expr) and stmt.value is event.node:
        return stmt
    return None


def keyword_node(event, keyword: str):
    for kw in event.node.keywords:
        if kw.arg == keyword:
            return kw.value
    return None


def has_true_keyword(event, keyword: str) -> bool:
    value = keyword_node(event, keyword)
    return isinstance(value, ast.Constant) and value.value is True


def with_keyword(call: ast.Call, keyword: str, value: str, at=None) -> str:
    """The call's code with `keyword=value` added (or replaced)."""
    import libcst as cst  # only to build a fix: libcst costs 0.1 s to import
    tree = _cst_call(call, at)
    if tree is None:
        return _unparsed_with_keyword(call, keyword, value)
    args = [a for a in tree.args if not (a.keyword is not None and a.keyword.value == keyword)]
    new_arg = cst.Arg(keyword=cst.Name(keyword), value=cst.parse_expression(value),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return cst.Module(body=[]).code_for_node(tree.with_changes(args=[*args, new_arg]))


def without_keyword(call: ast.Call, keyword: str, at=None) -> str:
    """The call's code with `keyword=...` removed."""
    import libcst as cst  # only to build a fix: libcst costs 0.1 s to import
    tree = _cst_call(call, at)
    if tree is None:
        node = ast.Call(call.func, call.args, [k for k in call.keywords if k.arg != keyword])
        return code_of(node)
    args = [a for a in tree.args if not (a.keyword is not None and a.keyword.value == keyword)]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return cst.Module(body=[]).code_for_node(tree.with_changes(args=args))


def renamed_keyword(call: ast.Call, old: str, new: str, at=None) -> str:
    """The call's code with the keyword `old=` spelt `new=`."""
    import libcst as cst  # only to build a fix: libcst costs 0.1 s to import
    tree = _cst_call(call, at)
    if tree is None:
        keywords = [ast.keyword(new if k.arg == old else k.arg, k.value) for k in call.keywords]
        return code_of(ast.Call(call.func, call.args, keywords))
    args = [a.with_changes(keyword=cst.Name(new)) if a.keyword is not None and a.keyword.value == old
            else a for a in tree.args]
    return cst.Module(body=[]).code_for_node(tree.with_changes(args=args))


def _cst_call(call: ast.Call, at):
    import libcst as cst  # only to build a fix: libcst costs 0.1 s to import
    text = source_of(call, at) if at is not None else None
    if text is None:
        return None
    try:
        tree = cst.parse_expression(text)
    except (cst.ParserSyntaxError, SyntaxError, ValueError, RecursionError):
        return None
    return tree if isinstance(tree, cst.Call) else None


def _unparsed_with_keyword(call: ast.Call, keyword: str, value: str) -> str:
    keywords = [k for k in call.keywords if k.arg != keyword]
    keywords.append(ast.keyword(keyword, ast.parse(value, mode="eval").body))
    return code_of(ast.Call(call.func, call.args, keywords))


def made_in_iteration(t, loop, ctx) -> bool:
    """Whether tensor `t` was made during the current iteration of `loop` (in the loop's
    body or in a loop inside it), not before the loop."""
    if t.made_in_loop is None or loop not in ctx.loops:
        return False
    return t.made_in_loop not in ctx.loops[:ctx.loops.index(loop)]


def enclosing_block(root: ast.AST, stmt: ast.stmt) -> list | None:
    """The statement list (a module's, a function's or a branch's body) holding
    `stmt`, or None."""
    for node in ast.walk(root):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return None


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_bound(node: ast.AST) -> set[str]:
    """The names a statement (and the blocks inside it) assigns."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
