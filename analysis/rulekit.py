"""Small helpers rules share: printing code, shapes and statements, and edits
that change a call's arguments (built with libcst, so the user's formatting of
everything else in the call is kept)."""
from __future__ import annotations

import ast
import copy
import tokenize

from autograd_lsp.analysis.facts import Sym
from autograd_lsp.analysis.rule import Edit
from autograd_lsp.analysis.source import SourceText
from autograd_lsp.analysis.trace import (BACKWARD_KEYWORDS, backward_target, is_backward, is_module,  # noqa: F401
                            is_optimizer, target_node)
from autograd_lsp.analysis.tree import nodes


def code_of(node) -> str:
    """The code of an ast node, as Python writes it back."""
    try:
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return "…"


def source_of(node, at) -> str:
    """The user's own text of a node, as it stands in the chunk `at` was seen in."""
    text = _segment(node, at)
    return text if text is not None else code_of(node)


def _segment(node, at) -> str | None:
    source = getattr(getattr(at, "ctx", None), "source", None)
    if source is None:
        return None
    segment = getattr(source, "segment", None)
    return segment(node) if segment is not None else ast.get_source_segment(source.text, node)


# -- code that calls a method on an expression: `(a + b).item()`, never `a + b.item()` ----

# What `.name` can follow as it is written; anything else binds looser than `.`
# (`a + b`, `-a`, `a if c else b`, `lambda: a`, `await a`, `a := b`) and needs parentheses.
_PRIMARIES = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.List, ast.ListComp,
              ast.Dict, ast.DictComp, ast.Set, ast.SetComp, ast.JoinedStr)


def _binds_looser(node, text: str) -> bool:
    """Whether `text`, the code of `node` without the parentheses around it, needs
    parentheses before `.name` may follow it."""
    if isinstance(node, _PRIMARIES):
        return False
    if isinstance(node, ast.Constant):
        # `2.item()` reads as the float `2.` followed by a name.
        return isinstance(node.value, (int, float, complex)) and not isinstance(node.value, bool)
    # A tuple's or a generator's own parentheses are part of its code when it has
    # them; Python prints `a := b` in parentheses.
    return not _enclosed(text)


def operand_text(node, at) -> str:
    """The code of `node` (a value standing on its own: an argument, an operand) that
    `.name` can follow: its own text, in parentheses when it binds looser than `.`."""
    text = source_of(node, at)
    return f"({text})" if _binds_looser(node, text) else text


def receiver_text(outer, at) -> str:
    """The receiver `r` of `outer` (`r.name`, `r[i]` or `r(...)`) as code that
    `.name` can follow: `r`'s own text with the parentheses it stands in (`(a + b)`
    of `(a + b).data[0]`), or put in parentheses when it binds looser than `.` and
    has none (code printed from the tree)."""
    return _split_receiver(outer, at)[0]


def after_receiver(outer, text: str, at) -> Edit:
    """The edit that puts `text` (".detach()") right after the receiver of `outer`:
    `w.numpy()` -> `w.detach().numpy()`, `(w * 2).numpy()` -> `(w * 2).detach().numpy()`."""
    receiver, rest = _split_receiver(outer, at)
    inner = _receiver_of(outer)
    if receiver == source_of(inner, at):
        return Edit("insert_after", inner, text, at)
    # The receiver's parentheses lie outside its node: rewrite the whole of `outer`.
    return Edit("replace", outer, receiver + text + rest, at)


def after_operand(node, text: str, at) -> tuple[Edit, ...]:
    """The edits that put `text` (".double()") right after the value `node`, in
    parentheses when it binds looser than `.`: `w * 2` -> `(w * 2).double()`."""
    if not _binds_looser(node, source_of(node, at)):
        return (Edit("insert_after", node, text, at),)
    return (Edit("insert_before", node, "(", at), Edit("insert_after", node, ")" + text, at))


def _receiver_of(outer):
    return outer.func if isinstance(outer, ast.Call) else outer.value


def _split_receiver(outer, at) -> tuple[str, str]:
    """(the receiver of `outer` as `receiver_text` gives it, the rest of `outer`'s
    code after it)."""
    inner = _receiver_of(outer)
    whole = _segment(outer, at)
    cut = _receiver_end(whole, outer) if whole is not None else None
    if cut is not None:
        receiver, rest = whole[:cut], whole[cut:]
        own = source_of(inner, at)
        if receiver == own and _binds_looser(inner, own):
            receiver = f"({own})"
        return receiver, rest
    # No source to read: the code as Python prints it, the receiver standing for "_".
    own = code_of(inner)
    receiver = f"({own})" if _binds_looser(inner, own) else own
    stand_in = copy.copy(outer)
    if isinstance(outer, ast.Call):
        stand_in.func = ast.Name("_")
    else:
        stand_in.value = ast.Name("_")
    return receiver, code_of(stand_in)[1:]


_TRAILERS = {ast.Attribute: ".", ast.Subscript: "[", ast.Call: "("}
_OPENING, _CLOSING = frozenset("([{"), frozenset(")]}")


def _receiver_end(whole: str, outer) -> int | None:
    """Where the receiver of `outer` ends in `whole`, `outer`'s code, with the
    parentheses around it: just before the last `.`, `[` or `(` (whichever `outer`
    is made with) that no bracket encloses, and the comments and line breaks before
    it. `outer`'s code starts at its receiver's first parenthesis."""
    trailer = _TRAILERS.get(type(outer))
    tokens = _code_tokens(whole)
    if trailer is None or tokens is None:
        return None
    depth, end = 0, None
    for previous, token, change in zip([None, *tokens], tokens, _depth_changes(tokens)):
        if depth == 0 and token.string == trailer and token.type == tokenize.OP and previous is not None:
            end = previous.end
        depth += change
    if end is None:
        return None
    try:
        return SourceText(whole).offset(*end)
    except ValueError:
        return None


def _enclosed(text: str) -> bool:
    """Whether the whole of `text` is in one pair of parentheses: `(a, b)`, not `(a), (b)`."""
    tokens = _code_tokens(text)
    if not tokens or tokens[0].string != "(" or tokens[-1].string != ")":
        return False
    depth = 0
    for index, change in enumerate(_depth_changes(tokens)):
        depth += change
        if depth == 0:
            return index == len(tokens) - 1
    return False


def _depth_changes(tokens) -> list[int]:
    return [(1 if t.string in _OPENING else -1 if t.string in _CLOSING else 0) if t.type == tokenize.OP else 0
            for t in tokens]


def _code_tokens(text: str) -> list | None:
    """The tokens of `text` that are code (no comments, line breaks or end marker);
    None when it does not tokenize."""
    lines = SourceText(text).lines_with_ends()
    try:
        return [t for t in tokenize.generate_tokens(iter(lines + [""]).__next__)
                if t.type not in _NOT_CODE]
    except (tokenize.TokenError, SyntaxError):
        return None


_NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
             tokenize.ENDMARKER}


def short(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def dim_text(d) -> str:
    if isinstance(d, Sym):
        # (A label may carry what tells it apart after a `#`: the mask of `x[mask]`.)
        return str(d.first) if d.first is not None else d.label.split("#")[0]
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
    for node in nodes(root):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return None


def names_read(node: ast.AST) -> set[str]:
    return {n.id for n in nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def names_bound(node: ast.AST) -> set[str]:
    """The names a statement (and the blocks inside it) assigns."""
    return {n.id for n in nodes(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
