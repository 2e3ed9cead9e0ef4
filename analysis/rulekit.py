"""Small helpers rules share: recognising calls, printing shapes and code."""
from __future__ import annotations

import libcst as cst

from analysis.events import CallEvent
from analysis.facts import TensorFacts

_EMPTY = cst.Module(body=[])

# Keywords torch's Tensor.backward takes; a `.backward(...)` with others is not torch's.
BACKWARD_KEYWORDS = {"gradient", "retain_graph", "create_graph", "inputs"}


def code_of(node: cst.CSTNode) -> str:
    return _EMPTY.code_for_node(node)


def is_tensor_backward(event: CallEvent) -> bool:
    """`t.backward(...)` on a value known to be a tensor."""
    return event.method == "backward" and isinstance(event.receiver, TensorFacts) \
        and set(event.kwargs) <= BACKWARD_KEYWORDS and len(event.args) <= 3


def shape_text(shape) -> str:
    if shape is None:
        return "unknown"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def torch_name(trace) -> str:
    """How this file spells `torch` (`import torch as T` -> "T")."""
    return trace.torch_name or "torch"


def backward_target(event: CallEvent):
    """The tensor a backward-like call differentiates: the receiver of
    `t.backward()`, or the `outputs` of `torch.autograd.grad`; else None."""
    if is_tensor_backward(event):
        return event.receiver
    if event.qualname == "torch.autograd.grad":
        outputs = event.args[0] if event.args else event.kwargs.get("outputs")
        return outputs if isinstance(outputs, TensorFacts) else None
    return None


def target_node(event: CallEvent):
    """The expression naming what is differentiated (for messages and fixes)."""
    if event.method == "backward":
        return event.node.func.value
    arg = event.arg_node("outputs", 0)
    return arg.value if arg is not None else event.node


def keyword_value(event: CallEvent, keyword: str):
    arg = event.arg_node(keyword)
    return arg.value if arg is not None else None


def has_true_keyword(event: CallEvent, keyword: str) -> bool:
    value = keyword_value(event, keyword)
    return isinstance(value, cst.Name) and value.value == "True"


def with_keyword(call: cst.Call, keyword: str, value: str) -> str:
    """The call's code with `keyword=value` added (or replaced)."""
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == keyword)]
    new_arg = cst.Arg(keyword=cst.Name(keyword), value=cst.parse_expression(value),
                      equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                            whitespace_after=cst.SimpleWhitespace("")))
    if args:
        last = args[-1]
        args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return code_of(call.with_changes(args=[*args, new_arg]))


def without_keyword(call: cst.Call, keyword: str) -> str:
    """The call's code with `keyword=...` removed."""
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == keyword)]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return code_of(call.with_changes(args=args))
