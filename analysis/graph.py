"""The backward graph of a tensor as far as the analysis sees it, drawn as text.

    y: AddBackward0
    ├─ PowBackward0
    │  └─ x (leaf)
    └─ MulBackward0
       └─ x (leaf)

Node names are the `grad_fn` classes torch would create (from the tables measured
with torch); a leaf is shown by the name it was bound to. A part of the history
the analysis does not know (a model call, a function parameter) is drawn as "…".
"""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts

UNKNOWN_PART = "…"


def backward_graph(value, name: str | None = None, max_nodes: int = 24) -> list[str]:
    """Lines drawing `value`'s graph from the tensor back to its leaves; [] when it
    has none (does not require grad) or nothing about it is known."""
    if not isinstance(value, TensorFacts) or value.requires_grad is not True:
        return []
    budget = [max_nodes]
    head = _label(value)
    if name and not value.is_leaf:
        head = f"{name}: {head}"
    lines = [head]
    _children(value, "", lines, budget)
    return lines


def _label(t: TensorFacts) -> str:
    if t.is_leaf:
        return f"{t.label} (leaf)" if t.label else "(leaf)"
    return t.grad_fn or "?"


def _children(t: TensorFacts, prefix: str, lines: list[str], budget: list[int]) -> None:
    if t.is_leaf:
        return
    parents = list(t.parents)
    # An op whose inputs are only partly known: show that the drawing stops there.
    unknown = t.opaque and not parents
    items = parents + ([None] if unknown else [])
    for index, parent in enumerate(items):
        last = index == len(items) - 1
        branch, extend = ("└─ ", "   ") if last else ("├─ ", "│  ")
        if budget[0] <= 0:
            lines.append(f"{prefix}{branch}{UNKNOWN_PART}")
            return
        budget[0] -= 1
        if parent is None:
            lines.append(f"{prefix}{branch}{UNKNOWN_PART}")
            continue
        lines.append(f"{prefix}{branch}{_label(parent)}")
        _children(parent, prefix + extend, lines, budget)
