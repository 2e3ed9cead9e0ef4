"""What the analysis knows about a value at one point of a program.

Every fact may be unknown (None). Rules fire only on known facts: a tensor
whose shape is unknown is never called non-scalar.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union

Tri = Optional[bool]          # True / False / None (unknown)
Shape = Optional[tuple]       # tuple of int-or-None per dimension; () is a scalar; None unknown

FLOAT_DTYPES = {"float16", "bfloat16", "float32", "float64"}
COMPLEX_DTYPES = {"complex64", "complex128"}
INT_DTYPES = {"uint8", "int8", "int16", "int32", "int64"}


def dtype_kind(dtype: str | None) -> str | None:
    """'float', 'complex', 'int', 'bool' or None."""
    if dtype is None:
        return None
    if dtype in FLOAT_DTYPES:
        return "float"
    if dtype in COMPLEX_DTYPES:
        return "complex"
    if dtype in INT_DTYPES:
        return "int"
    if dtype == "bool":
        return "bool"
    return None


@dataclass(frozen=True)
class TensorFacts:
    tid: int                         # identity: aliases share it, so in-place changes reach them all
    requires_grad: Tri = None
    is_leaf: Tri = None
    dtype: str | None = None         # "float32", "int64", "bool", ...
    shape: Shape = None
    grad_fn: str | None = None       # e.g. "PowBackward0"; None when unknown or when there is none
    # Graph nodes in this tensor's history that saved tensors for backward; a
    # backward without retain_graph frees them.
    saved_nodes: frozenset = frozenset()
    # Leaves (by tid) that require grad in this tensor's history.
    leaves: frozenset = frozenset()
    # True when part of the history is not known (a parameter, a model call...),
    # so `saved_nodes` and `leaves` may be incomplete.
    opaque: bool = True
    # Why it does not require grad, when it is known not to:
    # "no_grad", "inference_mode", "detach", "rewrap", "never", "grad_result".
    no_grad_reason: str | None = None
    # State of `.grad` for a leaf: "none" (still None), "set" (by a backward),
    # "graph" (by a backward with create_graph=True), or None (unknown).
    grad: str | None = None
    device: str | None = None
    # The loop node (by id) inside which this value was made, if any.
    made_in_loop: int | None = None
    # For an element taken from another tensor (`t[i]`, iteration): the parent's tid.
    element_of: int | None = None
    # A backward without retain_graph already freed (part of) this tensor's graph:
    # another backward through it raises.
    graph_freed: bool = False
    # Graph nodes that saved this very tensor for their backward: changing it in
    # place breaks a later backward through them.
    saved_by: frozenset = frozenset()
    # Modules whose forward changes in place a tensor an earlier layer saved (a
    # ReLU(inplace=True) after a Sigmoid): a backward through this tensor raises.
    corrupted_by: frozenset = frozenset()
    retains_grad: bool = False
    # The call that made it (for fixes that rewrite the creation).
    origin: object = field(default=None, repr=False)
    # For drawing the backward graph: the tensors that require grad it was computed
    # from, and the name a leaf was first bound to. Not part of the facts' identity.
    parents: tuple = field(default=(), repr=False, compare=False)
    label: str | None = field(default=None, repr=False, compare=False)

    def numel_is_not_one(self) -> bool:
        """True only when the shape proves numel != 1 (so backward() needs a gradient)."""
        if self.shape is None:
            return False
        return any(d is not None and d != 1 for d in self.shape)

    def is_scalar(self) -> bool:
        return self.shape == () or (self.shape is not None and all(d == 1 for d in self.shape))


@dataclass(frozen=True)
class ModuleValue:
    """An `nn.Module` made here from a known torch.nn class."""
    mid: int
    cls: str                         # qualified class name, e.g. "torch.nn.Linear"
    has_params: Tri = None
    params_require_grad: Tri = True
    # Whether calling it saves tensors for backward (Linear, Conv, ...).
    saves: Tri = None
    # The loss's default reduction gives a scalar.
    loss_reduces: Tri = None
    # In training mode (after `.train()`, the default) or evaluation mode (`.eval()`).
    training: Tri = True
    # Made with `inplace=True` (an activation that overwrites its input).
    inplace: bool = False
    # A container whose forward overwrites in place what an earlier layer saved.
    corrupts_saved: bool = False


@dataclass(frozen=True)
class OptimizerValue:
    oid: int
    # What it optimises: module ids whose parameters() it was given, tensor tids.
    modules: frozenset = frozenset()
    tensors: frozenset = frozenset()
    # True when its parameters came from somewhere not understood.
    opaque: bool = True


@dataclass(frozen=True)
class NumberValue:
    """A Python number (or bool); `value` when it is a literal."""
    kind: str                        # "int", "float", "bool", "complex"
    value: object = None


@dataclass(frozen=True)
class SequenceValue:
    """A tuple or list whose items are known (for unpacking and indexing).
    A list (`mutable`) is forgotten as soon as something may change it."""
    items: tuple
    mutable: bool = False


@dataclass(frozen=True)
class Unknown:
    pass


UNKNOWN = Unknown()

Value = Union[TensorFacts, ModuleValue, OptimizerValue, NumberValue, SequenceValue, Unknown]


def join(a: Value, b: Value) -> Value:
    """What is known about a value that is `a` on one path and `b` on another."""
    if a == b:
        return a
    if isinstance(a, TensorFacts) and isinstance(b, TensorFacts):
        return TensorFacts(
            # Deterministic, so that analysing the same text twice gives equal facts
            # (the engine's caches compare them).
            tid=a.tid if a.tid == b.tid else ("join", a.tid, b.tid),
            requires_grad=_same(a.requires_grad, b.requires_grad),
            is_leaf=_same(a.is_leaf, b.is_leaf),
            dtype=_same(a.dtype, b.dtype),
            shape=_same(a.shape, b.shape),
            grad_fn=_same(a.grad_fn, b.grad_fn),
            saved_nodes=a.saved_nodes | b.saved_nodes,
            leaves=a.leaves | b.leaves,
            opaque=True,
            no_grad_reason=_same(a.no_grad_reason, b.no_grad_reason),
            grad=_same(a.grad, b.grad),
            device=_same(a.device, b.device),
            made_in_loop=_same(a.made_in_loop, b.made_in_loop),
            element_of=_same(a.element_of, b.element_of),
            graph_freed=a.graph_freed and b.graph_freed,
            saved_by=a.saved_by | b.saved_by,
            corrupted_by=a.corrupted_by & b.corrupted_by,
            retains_grad=a.retains_grad and b.retains_grad,
            origin=_same(a.origin, b.origin),
        )
    if isinstance(a, NumberValue) and isinstance(b, NumberValue) and a.kind == b.kind:
        return NumberValue(a.kind)
    if type(a) is type(b) and isinstance(a, (ModuleValue, OptimizerValue)):
        return a if a == b else UNKNOWN
    return UNKNOWN


def _same(x, y):
    return x if x == y else None
