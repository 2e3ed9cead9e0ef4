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
