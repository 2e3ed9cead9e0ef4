"""Tensors: factories, operators, methods and torch functions, from the tables
measured with torch (analysis/torch_api.py).

Every result says what torch would make: whether it requires grad, is a leaf,
its dtype, shape and grad_fn, which graph nodes it saved for backward (so a
backward that frees them makes a second one fail), and which leaves it depends
on (so a backward knows whose `.grad` it fills). An op the tables do not know
gives a tensor whose unknown facts stay unknown.
"""
from __future__ import annotations

import ast
import math

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import (FLOAT_DTYPES, INT_DTYPES, NONE, UNKNOWN, GradAttr, MethodOf, NoneValue,
                            NumberValue, ObjectRef, StrValue, Sym, TensorFacts, TorchName, TupleValue, Unknown,
                            dtype_kind, replace, tids_of)
from autograd_lsp.analysis.semantics import Call, function, method, shapes
from autograd_lsp.analysis.trace import AttrReadEvent, InplaceEvent


# -- building tensors --------------------------------------------------------------------------

def new_tensor(call: Call, requires_grad, is_leaf, dtype=None, shape=None, reason=None,
               device=None, ignore_no_grad=False, part: int | None = 0, is_param=False) -> TensorFacts:
    if not ignore_no_grad and call.state.no_grad is True:
        requires_grad, is_leaf, reason = False, True, "no_grad"
    tid = call.new_id(part)
    return call.state.created(TensorFacts(
        tid=tid, requires_grad=requires_grad, is_leaf=is_leaf, dtype=dtype, shape=shape,
        leaves=frozenset({tid}) if requires_grad and is_leaf else frozenset(),
        opaque=requires_grad is None or is_leaf is None,
        unseen_history=requires_grad is None or is_leaf is None,
        no_grad_reason=reason if requires_grad is False else None,
        # A tensor just made has no `.grad`; one that does not require grad never gets
        # one from a backward.
        grad="none" if is_leaf and requires_grad is not None else None,
        device=device, made_in_loop=call.ctx.loop, is_param=is_param))


def graph_node(call: Call, part: int = 0):
    """A new node of the backward graph made at this call (a new one on every
    pass: a loop's next iteration builds a new graph)."""
    return call.walker.graph_node(call.frame, call.node, part)


def derived(call: Call, op: str, inputs: list, shape, dtype, saves=None,
            grad_fn: str | None = None, part: int = 0, saved: list | None = None):
    """The result of an op on `inputs` (tensors, numbers or unknowns). `saves`:
    whether the op keeps tensors for backward (None: look `op` up in the tables
    measured from torch; an op they do not know is not claimed to save). `saved`:
    which inputs it keeps, when the caller knows better than the tables."""
    state = call.state
    tensors = [state.fresh(v) for v in inputs if isinstance(v, TensorFacts)]
    unknown = [v for v in inputs if not isinstance(v, (TensorFacts, NumberValue))]
    if not tensors:
        return UNKNOWN
    no_grad = state.no_grad
    if no_grad is True:
        return new_tensor(call, False, True, dtype, shape, "no_grad", part=part,
                          device=_same([t.device for t in tensors]))
    flags = [t.requires_grad for t in tensors]
    if any(f is True for f in flags):
        requires = True if no_grad is False else None
    elif all(f is False for f in flags) and not unknown:
        requires = False
    else:
        requires = None
    if requires is False:
        reason = _main_reason({t.no_grad_reason for t in tensors})
        out = new_tensor(call, False, True, dtype, shape, reason, part=part,
                         device=_same([t.device for t in tensors]))
        if reason == "grad_result":
            grad_call = next((t.grad_call for t in tensors if t.grad_call is not None), None)
            out = state.created(replace(out, grad_call=grad_call))
        return out
    other_is_tensor = len(tensors) > 1 if len(inputs) > 1 else None
    if saves is None:
        saves = _measured_saves(op, other_is_tensor)
    nodes = frozenset().union(*(t.saved_nodes for t in tensors))
    node = None
    if saves and requires:
        node = graph_node(call, part)
        nodes = nodes | {node}
        # Which of the inputs this op keeps for its backward: changing one in
        # place afterwards breaks the backward through `node`.
        if saved is None and api.saves_input(op, bool(other_is_tensor)):
            saved = _saved_operands(op, tensors)
        for t in saved or ():
            _mark_saved(state, state.fresh(t), node)
    opaque = any(t.opaque for t in tensors) or bool(unknown) or requires is None
    # Grad mode unknown: a node this op may save is not recorded.
    unseen = any(t.unseen_history for t in tensors) or bool(unknown) or bool(saves and requires is None)
    tid = call.new_id(part)
    return state.created(TensorFacts(
        tid=tid, requires_grad=requires,
        is_leaf=False if requires else None,
        dtype=dtype, shape=shape,
        grad_fn=(grad_fn or api.grad_fn_name(op)) if requires else None,
        saved_nodes=nodes,
        leaves=frozenset().union(*(t.leaves for t in tensors)),
        opaque=opaque, unseen_history=unseen, grad=None,
        device=_same([t.device for t in tensors]),
        made_in_loop=call.ctx.loop,
        saved_by=frozenset({node}) if node is not None and api.saves_output(op, other_is_tensor)
        else frozenset(),
        parents=tuple(t for t in tensors if t.requires_grad is not False) if requires else (),
        corrupted_by=frozenset().union(*(t.corrupted_by for t in tensors)),
        ungraded=frozenset().union(*(t.ungraded for t in tensors)),
        element_nodes=frozenset().union(*(t.element_nodes for t in tensors))))


def binary(call: Call, op: str, left, right):
    state = call.state
    left, right = state.fresh(left), state.fresh(right)
    if not isinstance(left, TensorFacts) and not isinstance(right, TensorFacts):
        if isinstance(left, NumberValue) and isinstance(right, NumberValue):
            return _number_op(op, left, right)
        return UNKNOWN
    if op == "matmul":
        shape = shapes.matmul(_shape_of(left), _shape_of(right))
    else:
        shape = shapes.broadcast(_shape_of(left), _shape_of(right))
    dtype = _promote(left, right, op)
    grad_fn = None
    operand_shapes = [v.shape if isinstance(v, TensorFacts) else None for v in (left, right)]
    # The name depends on the operands (MvBackward0, PowBackward1, RsubBackward1...),
    # known only when every tensor operand's rank is.
    if all(s is not None or not isinstance(v, TensorFacts) for s, v in zip(operand_shapes, (left, right))):
        grad_fn = api.grad_fn_name(op, arity_shapes=tuple(operand_shapes))
    out = derived(call, op, [left, right], shape=shape, dtype=dtype, grad_fn=grad_fn)
    if op == "matmul" and isinstance(out, TensorFacts) and grad_fn is None:
        out = replace(out, grad_fn=None)
    if op in ("add", "sub") and isinstance(out, TensorFacts) and out.requires_grad is True:
        # A penalty built from a gradient taken without create_graph, added to a loss:
        # it counts in the value and gives no gradient.
        # A scalar term added to a scalar (a penalty to a loss), or a term added to
        # anything but what the gradient was taken for: a gradient step on weights
        # (`w - lr * g`, first-order meta-learning) is meant to have no graph.
        scalars = all(isinstance(v, NumberValue) or (isinstance(v, TensorFacts) and v.is_scalar())
                      for v in (left, right))
        dead = {v.grad_call for v, other in ((left, right), (right, left))
                if isinstance(v, TensorFacts) and v.requires_grad is False and v.grad_call is not None
                and (scalars or _not_differentiated(call, v.grad_call, other))}
        if dead:
            out = call.state.created(replace(out, ungraded=out.ungraded | dead))
    return out


def _not_differentiated(call: Call, grad_call, value) -> bool:
    """`value` is a tensor with a graph that the `torch.autograd.grad` call at
    `grad_call` surely did not differentiate for (its inputs are known and `value`
    is none of them): a per-sample penalty term, not a weight being stepped."""
    if not isinstance(value, TensorFacts) or value.requires_grad is not True:
        return False
    for event in reversed(call.walker.trace.events):
        if getattr(event, "node", None) is grad_call and "wrt" in getattr(event, "extra", {}):
            return value.tid not in event.extra["wrt"]
    return False


def _number_op(op, left: NumberValue, right: NumberValue):
    kind = "float" if "float" in (left.kind, right.kind) or op == "div" else left.kind
    if kind == "bool":
        kind = "int"
    a, b = left.value, right.value
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, Sym) \
            and not isinstance(b, Sym):
        try:
            value = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
                     "div": lambda: a / b, "floor_divide": lambda: a // b,
                     "remainder": lambda: a % b,
                     "pow": lambda: a ** b if abs(b) < 64 else None}.get(op, lambda: None)()
        except (ZeroDivisionError, OverflowError, ValueError, TypeError):
            value = None
        if isinstance(value, complex):
            return NumberValue("complex")
        return NumberValue(kind, value)
    if op == "remainder" and kind == "int" and b in (1, -1) and not isinstance(b, Sym):
        # Any integer modulo 1 is 0: `step % accumulation == 0` with accumulation 1
        # holds on every step, and `== 1` on none.
        return NumberValue("int", 0)
    return NumberValue(kind)


def comparison(call: Call, values: list):
    shape = shapes.broadcast(*[_shape_of(v) for v in values])
    device = _same([v.device for v in values if isinstance(v, TensorFacts)])
    return new_tensor(call, requires_grad=False, is_leaf=True, dtype="bool", shape=shape,
                      reason="never", device=device, ignore_no_grad=True)


def reduction(call: Call, op: str, t: TensorFacts, args: list, kwargs: dict):
    """`t.sum()`, `t.max(1)`, `t.argmax()`...: a 0-dim tensor without a dim; with
    one, the dim dropped (or kept), and a (values, indices) pair for max/min/median."""
    dim_value = args[0] if args else kwargs.get("dim")
    other = kwargs.get("other", dim_value)
    if op in ("max", "min") and isinstance(other, TensorFacts):
        # `torch.min(a, b)`: the elementwise minimum of two tensors, not a reduction
        return derived(call, f"{op}imum", [t, other], shape=shapes.broadcast(t.shape, other.shape),
                       dtype=t.dtype, grad_fn=f"{op.capitalize()}imumBackward0")
    has_dim = dim_value is not None and not (isinstance(dim_value, type(NONE)))
    if not has_dim and op not in api.REDUCTIONS:
        return UNKNOWN        # a reduction that needs a dim (logsumexp) raises without one
    if op == "norm":
        # norm(p, dim): the first argument is the order
        dim_value = args[1] if len(args) > 1 else kwargs.get("dim")
        has_dim = dim_value is not None and dim_value is not NONE
    keepdim = _flag(kwargs.get("keepdim"), args[1] if len(args) > 1 and op != "norm" else None)
    dims = _dims_of(dim_value)
    shape = () if not has_dim else shapes.reduce(t.shape, dims, bool(keepdim)) if keepdim is not None else None
    int_dtype = api.REDUCTION_DTYPES.get(op)
    if int_dtype is not None:
        # argmax, count_nonzero, all...: integer or bool results, no gradient
        return new_tensor(call, requires_grad=False, is_leaf=True, dtype=int_dtype, shape=shape,
                          reason="never", device=t.device, ignore_no_grad=True)
    key = f"{op}_dim" if has_dim else op
    values = derived(call, key if key in api.NON_SAVING_OPS or api.saves_input(key) is not None
                     else op, [t], shape=shape, dtype=t.dtype, grad_fn=api.grad_fn_name(key))
    if has_dim and op in api.REDUCTIONS_DIM_RETURNS_PAIR:
        indices = new_tensor(call, requires_grad=False, is_leaf=True, dtype="int64", shape=shape,
                             reason="never", device=t.device, part=1, ignore_no_grad=True)
        return TupleValue((values, indices), ("values", "indices"))
    return values


def _flag(*values):
    for v in values:
        if isinstance(v, NumberValue) and v.kind == "bool":
            return v.value
    if all(v is None for v in values):
        return False
    return None


def _dims_of(value):
    if isinstance(value, NumberValue) and isinstance(value.value, int):
        return [value.value]
    if isinstance(value, TupleValue) and all(isinstance(v, NumberValue) and isinstance(v.value, int)
                                             for v in value.items):
        return [v.value for v in value.items]
    return None


def converted(call: Call, t: TensorFacts, dtype, device, op, understood: bool = True):
    """`.double()`, `.to(...)`, `.cuda()`. `dtype`/`device`: the target, None for
    "unchanged". torch returns the very same tensor when nothing changes (a
    leaf stays a leaf); a real change gives a new, non-leaf tensor."""
    changes = []
    if dtype is not None:
        changes.append(None if t.dtype is None else dtype != t.dtype)
    if device is not None:
        changes.append(None if t.device is None or device is UNKNOWN_DEVICE else device != t.device)
    new_dtype = dtype or t.dtype
    if understood and all(c is False for c in changes):
        return t
    out = derived(call, op, [t], shape=t.shape, dtype=new_dtype if understood else None)
    if not isinstance(out, TensorFacts):
        return out
    if not understood or (any(c is None for c in changes) and True not in changes):
        # It may or may not be the same tensor. (A change of dtype alone makes a new
        # one, whatever the device: `.to(device, torch.float64)` of a float32 leaf.)
        out = replace(out, is_leaf=None if t.requires_grad is not False else True,
                      dtype=None if not understood else out.dtype)
    if not understood or device is UNKNOWN_DEVICE:
        return replace(out, device=None)
    return replace(out, device=device or t.device)


# A device argument whose value is not known (`torch.device("cuda" if ... else "cpu")`).
UNKNOWN_DEVICE = "<unknown device>"


def element(call: Call, base: TensorFacts):
    """An item of iterating over `base` (torch unbinds it)."""
    shape = base.shape[1:] if base.shape else None
    requires = base.requires_grad
    if call.state.no_grad is True:
        requires = False
    tid = call.new_id(7)
    return call.state.created(TensorFacts(
        tid=tid, requires_grad=requires,
        is_leaf=(not requires) if requires is not None else None,
        dtype=base.dtype, shape=shape,
        grad_fn="UnbindBackward0" if requires else None, parents=(base,) if requires else (),
        saved_nodes=base.saved_nodes, leaves=base.leaves, opaque=base.opaque,
        unseen_history=base.unseen_history,
        no_grad_reason=base.no_grad_reason if requires is False else None,
        device=base.device, made_in_loop=call.ctx.loop, element_of=base.tid,
        base_made_in=base.made_in_loop, element_nodes=base.saved_nodes | base.element_nodes))


def row(state, base: TensorFacts):
    """An item of unpacking `base` (`a, b = t`)."""
    return replace(base, tid=("row", base.tid), shape=base.shape[1:] if base.shape else None,
                   is_leaf=False if base.requires_grad else base.is_leaf,
                   grad_fn="UnbindBackward0" if base.requires_grad else None,
                   element_of=base.tid, base_made_in=base.made_in_loop, is_param=False, grad=None,
                   label=None, element_nodes=base.saved_nodes | base.element_nodes)


def _mark_saved(state, t: TensorFacts, node) -> None:
    """`node` keeps `t` for its backward. A view shares its base's version counter:
    an in-place change of the base (or of another view of it, `buf[t + 1] = ...`
    after `buf[t]` was saved) breaks `node` too, so the bases are marked as well."""
    seen = set()
    while True:
        state.update_tensor(replace(t, saved_by=t.saved_by | {node}))
        base = state.tensor(t.element_of) if t.element_of is not None else None
        if base is None or base.tid in seen or not _shares_version_with_base(t, base):
            return
        seen.add(base.tid)
        t = base


def _shares_version_with_base(view: TensorFacts, base: TensorFacts) -> bool:
    """Whether changing `view` in place changes `base`'s version (what autograd
    checks): true of views, not of `x.data`, whose version counter is its own."""
    return not (view.no_grad_reason == "data" and base.no_grad_reason != "data")


def view_of(call: Call, base: TensorFacts, shape, grad_fn: str | None, part: int = 0):
    """A view (indexing, slicing, `view`...): it shares `base`'s data, so an in-place
    change of it changes `base`."""
    out = derived(call, "getitem", [base], shape=shape, dtype=base.dtype, grad_fn=grad_fn, part=part)
    if isinstance(out, TensorFacts):
        out = replace(out, element_of=base.tid, base_made_in=base.made_in_loop,
                      view_of_leaf=base.is_leaf is True and base.requires_grad is True or base.view_of_leaf)
    return out


# -- indexing ---------------------------------------------------------------------------------

def getitem(call: Call, base: TensorFacts, slice_node, index):
    shape = _index_shape(call, base.shape, slice_node, index)
    requires = base.requires_grad
    grad_fn = None
    if requires:
        simple_int = isinstance(index, NumberValue) and index.kind == "int"
        grad_fn = "SelectBackward0" if simple_int else None
    if isinstance(index, TensorFacts) and index.dtype not in (None, "bool", "int64", "int32", "uint8"):
        return UNKNOWN
    out = view_of(call, base, shape, grad_fn)
    picks = index.items if isinstance(index, TupleValue) else (index,)
    if isinstance(out, TensorFacts) and any(isinstance(v, NumberValue) and v.kind == "int" for v in picks):
        # An element (`losses[i]`, `out[:, i]`), not a slice: what a per-element
        # backward goes through.
        out = replace(out, element_nodes=out.element_nodes | base.saved_nodes)
    return out


def _index_shape(call: Call, shape, slice_node, index):
    if shape is None:
        return None
    parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
    values = index.items if isinstance(index, TupleValue) else (index,)
    if len(values) != len(parts):
        values = [UNKNOWN] * len(parts)
    # Several index tensors broadcast together into one block of dims (`x[rows, cols]`
    # picks one element per pair); side by side, the block stands where they do.
    # Apart (`x[i, :, j]`), the block moves to the front: not followed.
    picks = [i for i, v in enumerate(values) if isinstance(v, TensorFacts) and v.dtype != "bool"]
    block = None
    if len(picks) > 1:
        if picks != list(range(picks[0], picks[0] + len(picks))):
            return None
        block = shapes.broadcast(*(values[i].shape for i in picks))
        if block is None:
            return None
    out = []
    dim = 0
    for index, (part, value) in enumerate(zip(parts, values)):
        if block is not None and index in picks:
            if index == picks[0]:
                out.extend(block)
            dim += 1
            continue
        if isinstance(part, ast.Constant) and part.value is Ellipsis:
            keep = len(shape) - dim - sum(1 for p in parts[parts.index(part) + 1:]
                                          if not (isinstance(p, ast.Constant) and p.value is None))
            if keep < 0:
                return None
            out.extend(shape[dim:dim + keep])
            dim += keep
            continue
        if isinstance(part, ast.Constant) and part.value is None:
            out.append(1)
            continue
        if dim >= len(shape):
            return None
        if isinstance(part, ast.Slice):
            if part.lower is None and part.upper is None and part.step is None:
                out.append(shape[dim])
            else:
                out.append(_slice_length(shape[dim], value))
            dim += 1
            continue
        if isinstance(value, NumberValue) and value.kind in ("int", "bool"):
            dim += 1
            continue
        if isinstance(value, TensorFacts):
            if value.dtype == "bool":
                # `x[mask]`: the mask's dimensions become one, of as many as it holds
                # True (one count per mask: two selections by it are alike).
                k = len(value.shape) if value.shape is not None else None
                if k is None or k == 0 or dim + k > len(shape) or any(
                        isinstance(a, int) and isinstance(b, int) and a != b
                        for a, b in zip(value.shape, shape[dim:dim + k])):
                    return None
                out.append(Sym(f"N#{hash(value.tid) & 0xFFFFFFFFFFFF:x}"))
                dim += k
                continue
            if value.shape is None:
                return None
            out.extend(value.shape)
            dim += 1
            continue
        return None
    out.extend(shape[dim:])
    return tuple(out)


def _slice_length(size, value):
    """How many a slice with known bounds (`x[2:-1]`, `x[start:start + k]` with
    `start` known) picks from a dimension of known size."""
    from autograd_lsp.analysis.semantics.builtins import SliceValue
    if not isinstance(size, int) or not isinstance(value, SliceValue):
        return None
    picked = value.indices(size)
    return None if picked is None else len(picked)


def setitem(call: Call, base: TensorFacts, target_node, value) -> None:
    inplace(call, base, target_node.value, "setitem", value, target_node)


# -- in place -----------------------------------------------------------------------------------

def inplace(call: Call, target: TensorFacts, target_node, op: str, operand, node,
            hidden: bool = False, layer=None) -> None:
    """An in-place change of `target`: the event; the graph nodes that had saved it
    (grad mode on), whose backward it breaks; and what it becomes."""
    state = call.state
    target = state.fresh(target)
    call.walker.emit(InplaceEvent(node, call.ctx, target, target_node, op, hidden, layer))
    # Under `no_grad` too: the change still bumps the version that autograd checks
    # (a queue enqueued in a `@torch.no_grad()` helper after `mm` saved it).
    if target.saved_by:
        state.clobber(target.saved_by, node)
    operand = state.fresh(operand)
    result = inplace_result(call, target, operand)
    if isinstance(operand, TensorFacts) and target.saved_by & operand.saved_nodes and state.no_grad is not True:
        # `x /= x.pow(2).sum().sqrt()`: the operand was computed from `x` by ops that
        # saved it, and the backward of `x` now runs through them.
        result = replace(result, saved_nodes=result.saved_nodes | (target.saved_by & operand.saved_nodes))
    if result is not target:
        state.update_tensor(result)
    if target.element_of is not None:
        # A view (`out[i] = ...`, `out[i][j] = ...`, `s[:2].mul_(...)`, `s[mask] *= ...`):
        # the change reaches its base.
        _reach_base(call, target, state.fresh(operand), node, set())


def _reach_base(call: Call, view: TensorFacts, operand, node, seen: set) -> None:
    state = call.state
    base_tid = view.element_of
    if base_tid in seen:
        return
    seen.add(base_tid)
    base = state.tensor(base_tid)
    if base is None:
        return
    # A view shares its base's version counter: a graph node that saved the base
    # sees the change too (but `x.data` has a counter of its own).
    if base.saved_by and _shares_version_with_base(view, base):
        state.clobber(base.saved_by, node)
    new = inplace_result(call, base, operand)
    if new is not base:
        state.update_tensor(new)
    if base.element_of is not None:
        _reach_base(call, base, operand, node, seen)


def inplace_result(call: Call, target: TensorFacts, operand) -> TensorFacts:
    if call.state.no_grad is True:
        return target
    if isinstance(operand, TensorFacts) and operand.requires_grad and target.requires_grad is False:
        return replace(target, requires_grad=True, is_leaf=False, opaque=True, no_grad_reason=None,
                       leaves=target.leaves | operand.leaves,
                       saved_nodes=target.saved_nodes | operand.saved_nodes,
                       unseen_history=target.unseen_history or operand.unseen_history)
    if isinstance(operand, TensorFacts) and operand.requires_grad is None \
            and target.requires_grad is False:
        return replace(target, requires_grad=None, is_leaf=None, no_grad_reason=None, unseen_history=True)
    if not isinstance(operand, (TensorFacts, NumberValue)) and operand is not None \
            and target.requires_grad is False:
        return replace(target, requires_grad=None, is_leaf=None, no_grad_reason=None, unseen_history=True)
    if target.requires_grad is not False and not target.unseen_history:
        if isinstance(operand, TensorFacts) and operand.requires_grad is not False:
            if operand.unseen_history:
                # `loss += other`: its graph joins this one's, and what it holds is not known.
                return replace(target, unseen_history=True)
            if not (operand.saved_nodes <= target.saved_nodes and operand.leaves <= target.leaves):
                # `loss += other` (a seq2seq loss summed over the decoder's steps),
                # `x += self.pos_embed`: the other's graph and leaves join this one's.
                return replace(target, saved_nodes=target.saved_nodes | operand.saved_nodes,
                               leaves=target.leaves | operand.leaves, grad_fn=None,
                               opaque=target.opaque or operand.opaque)
        elif not isinstance(operand, (TensorFacts, NumberValue)) and operand is not None:
            return replace(target, unseen_history=True)
    return target


# -- attributes -----------------------------------------------------------------------------------

def attribute(walker, t: TensorFacts, name: str, state, node, frame, ctx):
    if name == "grad":
        if node is not None:
            walker.emit(AttrReadEvent(node, ctx, t, name))
        return GradAttr(t)
    call = walker.call_for(node, state, frame, ctx)
    if name == "data":
        # Shares `t`'s data outside autograd's view of it.
        return state.created(TensorFacts(
            tid=call.new_id(3), requires_grad=False, is_leaf=True, dtype=t.dtype, shape=t.shape,
            no_grad_reason="data", device=t.device, element_of=t.tid, opaque=t.opaque,
            unseen_history=t.unseen_history,
            made_in_loop=t.made_in_loop))
    if name in ("T", "mT", "H", "mH"):
        return derived(call, "t", [t], shape=tuple(reversed(t.shape)) if t.shape is not None and len(t.shape) <= 2
                       else None, dtype=t.dtype)
    if name == "shape":
        return _shape_value(t.shape)
    if name == "requires_grad":
        return NumberValue("bool", t.requires_grad)
    if name == "is_leaf":
        return NumberValue("bool", t.is_leaf)
    if name == "ndim":
        return NumberValue("int", len(t.shape) if t.shape is not None else None)
    if name == "dtype":
        return TorchName(f"torch.{t.dtype}") if t.dtype else UNKNOWN
    if name == "device":
        return StrValue(t.device)
    if name == "grad_fn":
        if t.requires_grad is False or t.is_leaf is True:
            return NONE
        return UNKNOWN
    if name in ("real", "imag"):
        return UNKNOWN
    return MethodOf(t, name)


def _shape_value(shape):
    if shape is None:
        return UNKNOWN
    return TupleValue(tuple(NumberValue("int", d) for d in shape))


def _dim_value(shape, index):
    if shape is None:
        return NumberValue("int")
    n = shapes.normalize_dim(index, len(shape))
    return NumberValue("int", shape[n] if n is not None else None)


# -- factories --------------------------------------------------------------------------------------

def _dtype_of(value) -> str | None:
    if isinstance(value, TorchName):
        return api.DTYPES.get(value.qualname)
    if isinstance(value, StrValue) and value.value:
        return api.DTYPES.get(f"torch.{value.value}")
    return None


def _device_of(value, default: str | None = None) -> str | None:
    """"cpu", "cuda", "cuda:1"... from a string or `torch.device("...")`; None when
    the value does not say."""
    if isinstance(value, StrValue):
        if value.value is None:
            return None
        return "cuda" if value.value == "cuda:0" else value.value
    if isinstance(value, NumberValue) and isinstance(value.value, int):
        return "cuda" if value.value == 0 else f"cuda:{value.value}"
    if isinstance(value, _Device):
        return value.name
    return default if value is None else None


class _Device(StrValue):
    @property
    def name(self):
        return self.value


@function("torch.device")
def _torch_device(call: Call):
    value = call.arg(0, "type")
    if isinstance(value, StrValue) and value.value:
        index = call.number(1, "index")
        name = value.value if index is None else f"{value.value}:{index}"
        return StrValue("cuda" if name == "cuda:0" else name)
    return StrValue()


def size_from(values: list, node=None):
    """Dims from factory size arguments: ints, a tuple/list of ints, Syms."""
    if len(values) == 1 and isinstance(values[0], TupleValue):
        values = list(values[0].items)
    dims = []
    for v in values:
        if isinstance(v, NumberValue) and v.kind == "int" and v.value is not None:
            dims.append(v.value)
        elif isinstance(v, NumberValue) and v.kind == "int":
            dims.append(None)
        else:
            return None
    return tuple(dims)


def _size_arguments(call: Call, skip: int = 0):
    size = call.kwargs.get("size")
    if size is not None:
        values = [size]
    else:
        values = call.args[skip:]
    if call.starred:
        return None
    if len(values) == 1 and isinstance(values[0], ObjectRef) and values[0].kind == "list":
        from autograd_lsp.analysis.semantics import containers
        items = containers.known_items(call.state, values[0])
        if items is None:
            return None
        values = items
    return size_from(values)


def factory(call: Call):
    qualname = call.qualname
    requires = call.flag(None, "requires_grad", False)
    dtype_value = call.kwargs.get("dtype")
    dtype = _dtype_of(dtype_value) if dtype_value is not None else None
    shape = None
    if qualname in api.LIKE_FACTORIES:
        base = call.arg(0, "input")
        if isinstance(base, TensorFacts):
            shape = base.shape
            dtype = dtype or base.dtype
        elif dtype_value is None:
            dtype = None
    elif qualname in api.DATA_FACTORIES:
        data = call.arg(0, "data")
        call.extra["data_tensors"] = data_tensors(call)
        if isinstance(data, TensorFacts) and qualname not in api.DATA_FACTORIES_CUTTING_GRAPH:
            # torch.as_tensor(t) / asarray(t) return `t` itself (converted when asked)
            return converted(call, data, dtype, None, "to")
        shape, data_dtype = _data_shape_dtype(call, data)
        if data_dtype == "float32" and call.walker.changes_default_dtype:
            data_dtype = None
        if isinstance(data, TensorFacts):
            shape, data_dtype = data.shape, data.dtype
        dtype = dtype or (data_dtype if dtype_value is None else None)
    else:
        default = api.FACTORIES[qualname]
        if qualname == "torch.arange":
            default = _arange_dtype(call.args)
        elif qualname == "torch.full" and len(call.args) > 1 and isinstance(call.args[1], NumberValue):
            default = {"int": "int64", "bool": "bool", "float": "float32"}.get(call.args[1].kind)
        if default in FLOAT_DTYPES and call.walker.changes_default_dtype:
            default = None
        if dtype_value is None:
            dtype = default
        shape = _factory_shape(call)
    device_value = call.kwargs.get("device")
    device = _device_of(device_value) if device_value is not None else None
    if device_value is None:
        base = call.arg(0) if qualname in api.LIKE_FACTORIES else None
        device = base.device if isinstance(base, TensorFacts) else (
            "cpu" if qualname not in api.LIKE_FACTORIES else None)
    reason = None if requires else ("rewrap" if qualname in api.DATA_FACTORIES else "never")
    return new_tensor(call, requires_grad=bool(requires) if requires is not None else None,
                      is_leaf=True, dtype=dtype, shape=shape, reason=reason, device=device,
                      ignore_no_grad=True)


def _factory_shape(call: Call):
    qualname = call.qualname
    if qualname in ("torch.linspace", "torch.logspace"):
        steps = call.number(2, "steps")
        return (steps,) if isinstance(steps, int) else None
    if qualname == "torch.arange":
        values = [call.number(i) for i in range(len(call.args))]
        if call.args and all(v is not None for v in values) and not call.starred:
            if len(values) == 1:
                values = [0, values[0]]
            if len(values) in (2, 3):
                step = values[2] if len(values) == 3 else 1
                if step:
                    # torch: size = ceil((end - start) / step), computed in double
                    return (max(0, math.ceil((values[1] - values[0]) / step)),)
        if len(call.args) == 1 and not call.kwargs and not call.starred:
            # `torch.arange(x.size(0))`: as many as the dim, a batch's Sym too; an
            # integer of unknown value, one dim of unknown size.
            return size_from(call.args)
        return None
    if qualname == "torch.randint":
        size = call.kwargs.get("size", call.args[-1] if call.args else None)
        return size_from([size]) if size is not None else None
    if qualname == "torch.full":
        return size_from(call.args[:1]) if call.args else None
    if qualname == "torch.eye":
        n = call.number(0, "n")
        m = call.number(1, "m", n)
        return (n, m) if isinstance(n, int) and isinstance(m, int) else None
    if qualname in ("torch.normal", "torch.randperm"):
        if qualname == "torch.randperm":
            return size_from([call.arg(0, "n")])
        # normal(mean, std, size) of two numbers (tensors of them go to `_normal`)
        size = call.kwargs.get("size", call.args[2] if len(call.args) > 2 else None)
        return size_from([size]) if size is not None else None
    return _size_arguments(call)


def _arange_dtype(args: list) -> str | None:
    if args and all(isinstance(a, NumberValue) for a in args):
        return "float32" if any(a.kind == "float" for a in args) else "int64"
    return None


def _data_shape_dtype(call: Call, data):
    """Shape and dtype of the data given to `torch.tensor`."""
    from autograd_lsp.analysis.semantics import containers
    if isinstance(data, NumberValue):
        return (), {"int": "int64", "float": "float32", "bool": "bool", "complex": "complex64"}.get(data.kind)
    if isinstance(data, TensorFacts):
        return data.shape, data.dtype
    from autograd_lsp.analysis.semantics.external import NdArray
    if isinstance(data, NdArray):
        return None, data.dtype
    items = None
    if isinstance(data, TupleValue):
        items = list(data.items)
    elif isinstance(data, ObjectRef) and data.kind == "list":
        items = containers.known_items(call.state, data)
        if items is None:
            # How many is not known (a list appended to in a loop); what each item
            # is may be: one more dimension, of unknown size, before the item's.
            inner, dtype = _data_shape_dtype(call, call.state.fresh(containers.item_of(call.state, data)))
            return (None,) + inner if inner is not None else None, dtype
    if items is None:
        return None, None
    if not items:
        return (0,), "float32"
    parts = [_data_shape_dtype(call, call.state.fresh(item)) for item in items]
    inner = {p[0] for p in parts}
    dtypes = {p[1] for p in parts}
    shape = (len(parts),) + inner.pop() if len(inner) == 1 and None not in inner else None
    if None in dtypes:
        dtype = None
    elif "float32" in dtypes or "float64" in dtypes:
        dtype = "float32" if "float64" not in dtypes else None
    elif "int64" in dtypes:
        dtype = "int64"
    else:
        dtype = "bool"
    return shape, dtype


def data_tensors(call: Call):
    """`torch.tensor([t1, t2])`: the tensors given inside the data, if any."""
    from autograd_lsp.analysis.semantics import containers
    data = call.arg(0, "data")
    items = None
    if isinstance(data, TupleValue):
        items = data.items
    elif isinstance(data, ObjectRef) and data.kind == "list":
        items = containers.known_items(call.state, data)
        if items is None:
            item = containers.item_of(call.state, data)
            items = [item] if isinstance(item, TensorFacts) else []
    return [call.state.fresh(i) for i in (items or []) if isinstance(call.state.fresh(i), TensorFacts)]


for _name in (*api.FACTORIES, *api.DATA_FACTORIES, *api.LIKE_FACTORIES):
    function(_name)(factory)


# The legacy tensor types and the dtype each stands for (`torch.cuda.<name>` too).
LEGACY_TENSOR_DTYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "LongTensor": "int64",
                        "IntTensor": "int32", "BoolTensor": "bool", "HalfTensor": "float16",
                        "ByteTensor": "uint8"}


def is_legacy_type(t: TensorFacts, qualname: str):
    """`isinstance(t, torch.LongTensor)` (or `torch.cuda.FloatTensor`...): true when
    the dtype and the device match; None when one is not known or the name is no
    legacy type."""
    prefix, _, name = qualname.rpartition(".")
    if name not in LEGACY_TENSOR_DTYPES or prefix not in ("torch", "torch.cuda"):
        return None
    if t.dtype is not None and t.dtype != LEGACY_TENSOR_DTYPES[name]:
        return False
    if t.device is not None and (t.device == "cpu") != (prefix == "torch"):
        return False
    if t.dtype is None or t.device is None:
        return None
    return True


@function("torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor",
          "torch.IntTensor", "torch.BoolTensor", "torch.HalfTensor", "torch.ByteTensor",
          "torch.cuda.FloatTensor", "torch.cuda.LongTensor")
def legacy_constructor(call: Call):
    """`torch.Tensor(t)` returns an alias of `t` (graph kept); `torch.FloatTensor(list)`
    copies numbers out of the list's items: tensors inside it are read as numbers
    and their graph is cut."""
    name = call.qualname.rsplit(".", 1)[-1]
    dtype = "float32" if name == "Tensor" else LEGACY_TENSOR_DTYPES[name]
    data = call.arg(0)
    call.extra["data_tensors"] = data_tensors(call)
    if isinstance(data, TensorFacts) and len(call.args) == 1:
        if name == "Tensor":
            return data
        return converted(call, data, dtype, None, "to")
    if isinstance(data, (TupleValue, ObjectRef)):
        shape, _ = _data_shape_dtype(call, data)
        return new_tensor(call, False, True, dtype=dtype, shape=shape, reason="rewrap",
                          device="cpu", ignore_no_grad=True)
    shape = size_from(call.args) if call.args and not call.starred else None
    return new_tensor(call, False, True, dtype=dtype, shape=shape, reason="never",
                      device="cpu", ignore_no_grad=True)


@function("torch.from_numpy")
def _from_numpy(call: Call):
    from autograd_lsp.analysis.semantics.external import NdArray
    array = call.arg(0)
    dtype = array.dtype if isinstance(array, NdArray) else None
    shape = array.shape if isinstance(array, NdArray) else None
    return new_tensor(call, False, True, dtype=dtype, shape=shape, reason="never", device="cpu",
                      ignore_no_grad=True)


# -- torch functions ----------------------------------------------------------------------------------

def _first_tensor(call: Call):
    for v in call.args:
        if isinstance(v, TensorFacts):
            return v
    v = call.kwargs.get("input")
    return v if isinstance(v, TensorFacts) else None


def elementwise_function(call: Call):
    name = call.qualname.rsplit(".", 1)[-1]
    first = call.arg(0, "input")
    if not isinstance(first, TensorFacts):
        return UNKNOWN if not call.tensors() else _generic(call, name)
    if name in ("mul", "div", "add", "sub", "pow") and len(call.args) > 1:
        return binary(call, name, first, call.args[1])
    out = derived(call, name, [first], shape=first.shape, dtype=first.dtype)
    if name in ("softmax", "log_softmax") and isinstance(out, TensorFacts):
        pass
    return out


def reduction_function(call: Call):
    name = call.qualname.rsplit(".", 1)[-1]
    first = call.arg(0, "input")
    if not isinstance(first, TensorFacts):
        return UNKNOWN
    return reduction(call, name, first, list(call.args[1:]),
                     {k: v for k, v in call.kwargs.items() if k != "input"})


@function("torch.matmul", "torch.mm", "torch.mv", "torch.bmm")
def _matmul(call: Call):
    if len(call.args) > 1:
        return binary(call, "matmul", call.args[0], call.args[1])
    return _generic(call, "matmul")


@function("torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack",
          "torch.vstack")
def _cat(call: Call):
    from autograd_lsp.analysis.semantics.builtins import iterate
    name = call.qualname.rsplit(".", 1)[-1]
    from autograd_lsp.analysis.semantics import containers
    inner = iterate(call, call.arg(0, "tensors"))
    items = inner.elements if inner.elements is not None else [inner.element]
    items = [call.state.fresh(i) for i in items]
    # One item is known to require grad, so the result does.
    witness = containers.grad_item(call.state, call.arg(0, "tensors")) if inner.elements is None else None
    tensors = [i for i in items if isinstance(i, TensorFacts)]
    if not tensors:
        return UNKNOWN
    dim = call.number(1, "dim", 0)
    if inner.elements is not None and len(tensors) == len(items):
        shape_list = [t.shape for t in tensors]
        if name == "stack":
            shape = shapes.stack(shape_list, dim)
        elif name in ("cat", "concat", "concatenate"):
            shape = shapes.concatenate(shape_list, dim)
        else:
            shape = None
    else:
        shape = _shape_of_unknown_count(name, tensors, dim) if inner.elements is None else None
    dtype = _float_of(tensors)
    grad_fn = "StackBackward0" if name == "stack" else "CatBackward0"
    return derived(call, name, items + ([witness] if witness is not None else []), shape=shape, dtype=dtype,
                   grad_fn=grad_fn, saves=False)


def _shape_of_unknown_count(name: str, tensors: list, dim) -> tuple | None:
    """Stacking or concatenating a list of unknown length whose items all have one
    known shape: every dimension but the joined one is known."""
    if len(tensors) != 1 or tensors[0].shape is None or not isinstance(dim, int):
        return None
    shape = tensors[0].shape
    if name == "stack" and -len(shape) - 1 <= dim <= len(shape):
        at = dim % (len(shape) + 1)
        return shape[:at] + (None,) + shape[at:]
    if name in ("cat", "concat", "concatenate") and shape and -len(shape) <= dim < len(shape):
        at = dim % len(shape)
        return shape[:at] + (None,) + shape[at + 1:]
    return None


@function("torch.einsum")
def _einsum(call: Call):
    tensors = [call.state.fresh(a) for a in call.args[1:]]
    if len(tensors) == 1 and isinstance(tensors[0], TupleValue):
        tensors = list(tensors[0].items)
    return derived(call, "einsum", tensors, shape=None, dtype=_float_of(
        [t for t in tensors if isinstance(t, TensorFacts)]), grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(
        "torch.einsum"))


@function("torch.where")
def _where(call: Call):
    if len(call.args) < 3:
        return UNKNOWN
    values = [call.args[1], call.args[2]]
    tensors = [v for v in values if isinstance(v, TensorFacts)]
    shape = shapes.broadcast(*[_shape_of(v) for v in call.args[:3]])
    if not tensors and all(isinstance(v, NumberValue) and v.kind in ("int", "float") for v in values) \
            and isinstance(call.args[0], TensorFacts):
        # `torch.where(y > 0, 2.0, 1.0)`: a new tensor of the numbers (sample
        # weights, labels), with no graph.
        dtype = "int64" if all(v.kind == "int" for v in values) else call.walker.float_dtype()
        return new_tensor(call, False, True, dtype, shape, "never", device=call.args[0].device)
    return derived(call, "where", values, shape=shape, dtype=_float_of(tensors),
                   grad_fn="WhereBackward0")


@function("torch.normal")
def _normal(call: Call):
    tensors = call.tensors()
    if tensors:
        # normal(mean_tensor, std) is an op, differentiable in `mean`
        return derived(call, "normal", list(call.args), shape=tensors[0].shape, dtype=tensors[0].dtype)
    return factory(call)


def _multinomial(call: Call, probs, count_at: int):
    """Indices drawn from `probs`: int64, never requiring grad (nothing flows back
    through a draw); one row of `num_samples` per row of `probs`."""
    count = call.number(count_at, "num_samples")
    shape = None
    if isinstance(probs, TensorFacts) and probs.shape is not None and len(probs.shape) in (1, 2) \
            and isinstance(count, int):
        shape = probs.shape[:-1] + (count,)
    return new_tensor(call, False, True, "int64", shape, "sample")


@function("torch.multinomial")
def _torch_multinomial(call: Call):
    return _multinomial(call, call.arg(0, "input"), 1)


@function("torch.clone")
def _clone(call: Call):
    t = call.arg(0)
    if isinstance(t, TensorFacts):
        return derived(call, "clone", [t], shape=t.shape, dtype=t.dtype)
    return UNKNOWN


@function("torch.squeeze", "torch.unsqueeze", "torch.flatten", "torch.reshape", "torch.transpose",
          "torch.permute", "torch.t", "torch.swapaxes", "torch.movedim", "torch.chunk",
          "torch.split", "torch.unbind", "torch.narrow", "torch.gather", "torch.index_select",
          "torch.masked_select", "torch.diagonal", "torch.diag", "torch.tile", "torch.flip", "torch.roll",
          "torch.maximum", "torch.minimum", "torch.atan2")
def _shape_function(call: Call):
    t = call.arg(0, "input")
    if not isinstance(t, TensorFacts):
        return UNKNOWN
    name = call.qualname.rsplit(".", 1)[-1]
    inner = Call(call.node, list(call.args[1:]), {k: v for k, v in call.kwargs.items() if k != "input"},
                 call.state, call.ctx, call.walker, call.frame, receiver=t, method=name,
                 starred=call.starred)
    fn = TENSOR_METHODS.get(name)
    return fn(inner) if fn is not None else _generic(call, name)


@function("torch.numel")
def _numel(call: Call):
    t = call.arg(0)
    total = shapes.numel(t.shape) if isinstance(t, TensorFacts) else None
    return NumberValue("int", total)


@function("torch.is_tensor")
def _is_tensor(call: Call):
    value = call.arg(0)
    if isinstance(value, TensorFacts):
        return NumberValue("bool", True)
    if isinstance(value, (NumberValue, StrValue)):
        return NumberValue("bool", False)
    return NumberValue("bool")


@function("torch.manual_seed", "torch.set_printoptions", "torch.cuda.manual_seed",
          "torch.cuda.manual_seed_all", "torch.set_num_threads", "torch.save",
          "torch.cuda.empty_cache", "torch.cuda.synchronize", "torch.backends.cudnn.benchmark",
          "torch.use_deterministic_algorithms", "torch.set_float32_matmul_precision",
          "torch.autograd.set_detect_anomaly", "torch.set_anomaly_enabled")
def _no_effect(call: Call):
    return NONE


@function("torch.cuda.is_available", "torch.backends.mps.is_available")
def _is_available(call: Call):
    return NumberValue("bool")


@function("torch.cuda.device_count")
def _device_count(call: Call):
    return NumberValue("int")


@function("torch.set_default_dtype", "torch.set_default_tensor_type")
def _default_dtype(call: Call):
    call.walker.changes_default_dtype = True
    return NONE


@function("torch.get_default_dtype")
def _get_default_dtype(call: Call):
    """torch.float32, unless the program sets another default somewhere."""
    dtype = call.walker.float_dtype()
    return UNKNOWN if dtype is None else TorchName(f"torch.{dtype}")


@function("torch.load")
def _load(call: Call):
    return UNKNOWN


def unknown_torch_call(call: Call):
    """A torch name the tables do not know: a differentiable function of its tensor
    arguments if the tables list it, else unknown."""
    qualname = call.qualname or ""
    if qualname in api.DIFFERENTIABLE_FUNCTIONS and call.tensors():
        tensors = call.tensors()
        return derived(call, qualname.rsplit(".", 1)[-1], list(call.args), shape=None,
                       dtype=_float_of(tensors), grad_fn=api.DIFFERENTIABLE_FUNCTIONS[qualname])
    return UNKNOWN


def _generic(call: Call, name: str):
    tensors = call.tensors()
    if not tensors:
        return UNKNOWN
    out = derived(call, name, tensors, shape=None, dtype=_float_of(tensors))
    hidden = [v for v in (*call.args, *call.kwargs.values())
              if not isinstance(v, TensorFacts) and not _plain_value(v)]
    if hidden and isinstance(out, TensorFacts) and not out.unseen_history:
        # An argument the analysis does not see into may carry a graph of its own.
        out = call.state.created(replace(out, unseen_history=True))
    return out


def _plain_value(value) -> bool:
    """A number, string or None (or a tuple of them): no graph in it."""
    if isinstance(value, TupleValue):
        return all(_plain_value(v) for v in value.items)
    return isinstance(value, (NumberValue, StrValue, NoneValue))


def _register_torch_families():
    for name in api.UNARY_OPS:
        for parent in ("torch", "torch.nn.functional", "torch.special"):
            qual = f"{parent}.{name}"
            if qual not in FUNCTIONS_SEEN:
                function(qual)(elementwise_function)
    for name in api.REDUCTIONS | api.REDUCTIONS_WITH_DIM:
        function(f"torch.{name}")(reduction_function)
    for name in api.INDEX_RESULTS:
        if f"torch.{name}" not in _registered():
            function(f"torch.{name}")(index_result)
    for qual in api.DIFFERENTIABLE_FUNCTIONS:
        if qual not in _registered():
            function(qual)(unknown_torch_call)


def _registered():
    from autograd_lsp.analysis.semantics import FUNCTIONS
    return FUNCTIONS


def index_result(call: Call):
    """`torch.bincount(labels)`, `x.argsort()`, `torch.nonzero(mask)`: indices or
    counts, an integer tensor that no gradient reaches (bincount with weights sums
    them instead: not claimed)."""
    as_method = isinstance(call.receiver, TensorFacts)
    name = call.method if as_method else call.qualname.rsplit(".", 1)[-1]
    if name == "bincount" and call.given(0 if as_method else 1, "weights"):
        return UNKNOWN
    source = call.receiver if as_method else call.arg(0)
    device = source.device if isinstance(source, TensorFacts) else None
    return new_tensor(call, requires_grad=False, is_leaf=True, dtype=api.INDEX_RESULTS[name],
                      shape=_index_result_shape(call, name, source, as_method),
                      reason="never", device=device, ignore_no_grad=True)


def _index_result_shape(call: Call, name: str, source, as_method: bool):
    """`x.argsort()` has x's shape; `torch.nonzero(mask)` one row per True (one count
    per mask, as `x[mask]` has) of as many columns as the mask has dimensions."""
    shape = source.shape if isinstance(source, TensorFacts) else None
    if shape is None or call.starred:
        return None
    if name == "argsort":
        return shape
    if name in ("nonzero", "argwhere") and not call.given(None, "as_tuple") and len(call.args) == (0 if as_method else 1):
        return (Sym(f"N#{hash(source.tid) & 0xFFFFFFFFFFFF:x}"), len(shape))
    return None


FUNCTIONS_SEEN = _registered()


# -- tensor methods ---------------------------------------------------------------------------------

TENSOR_METHODS: dict = {}


def tensor_method(*names):
    def register(fn):
        for name in names:
            TENSOR_METHODS[name] = fn
            method("tensor", name)(fn)
        return fn
    return register


@tensor_method("detach")
def _detach(call: Call):
    t = call.receiver
    return new_tensor(call, requires_grad=False, is_leaf=True, dtype=t.dtype, shape=t.shape,
                      reason="detach", device=t.device, ignore_no_grad=True)


@tensor_method("detach_")
def _detach_(call: Call):
    t = call.receiver
    new = replace(t, requires_grad=False, is_leaf=True, grad_fn=None, no_grad_reason="detach",
                  leaves=frozenset(), saved_nodes=frozenset(), grad=None, unseen_history=False)
    call.state.update_tensor(new)
    return new


@tensor_method("item")
def _item(call: Call):
    kind = dtype_kind(call.receiver.dtype)
    return NumberValue(kind) if kind in ("float", "int", "bool") else NumberValue("float")


@tensor_method("multinomial")
def _multinomial_method(call: Call):
    return _multinomial(call, call.receiver, 0)


@tensor_method("tolist")
def _tolist(call: Call):
    """Python numbers: one for a 0-dim tensor, a list of them for a 1-dim one
    (`for i in hard.tolist():` indexes a loss one element at a time)."""
    t = call.receiver
    if t.shape is None or len(t.shape) > 1 or t.dtype is None:
        return UNKNOWN
    kind = "int" if dtype_kind(t.dtype) == "int" else "bool" if t.dtype == "bool" else \
        "float" if dtype_kind(t.dtype) == "float" else None
    if kind is None:
        return UNKNOWN
    if not t.shape:
        return NumberValue(kind)
    from autograd_lsp.analysis.semantics import containers
    count = t.shape[0] if isinstance(t.shape[0], int) else None
    if count is not None and count <= 16:
        return containers.new_list(call, [NumberValue(kind)] * count)
    return containers.new_list(call, None, item=NumberValue(kind))


@tensor_method("numpy")
def _numpy(call: Call):
    from autograd_lsp.analysis.semantics.external import ndarray_of
    return ndarray_of(call, call.receiver)


@tensor_method("requires_grad_")
def _requires_grad_(call: Call):
    t = call.receiver
    new = requires_grad_set(t, call.flag(0, "requires_grad", True))
    if new is not t:
        call.state.update_tensor(new)
    return new


def requires_grad_set(t: TensorFacts, flag) -> TensorFacts:
    """`t.requires_grad_(flag)`: changes a leaf; on a non-leaf True changes nothing
    (and False raises)."""
    if t.is_leaf is False:
        return t
    kind = dtype_kind(t.dtype)
    if flag is None or kind not in ("float", "complex"):
        # Unknown dtype or flag: unknown result. On an int tensor the call raises,
        # so what follows it is moot: unknown too, so that one mistake gives one finding.
        return replace(t, requires_grad=None if kind is None or flag is None or flag
                       else t.requires_grad)
    return replace(t, requires_grad=flag, is_leaf=True,
                   no_grad_reason=None if flag else "never",
                   leaves=frozenset({t.tid}) if flag else frozenset(),
                   grad=("none" if t.grad is None else t.grad) if flag else t.grad,
                   opaque=False if flag else t.opaque,
                   unseen_history=False if flag else t.unseen_history)


@tensor_method("retain_grad")
def _retain_grad(call: Call):
    t = call.receiver
    state = call.state
    state.update_tensor(replace(t, retains_grad=True))
    # `for t in [logprobs, probs, ...]: t.retain_grad()` over more tensors than a loop
    # unrolls: each of them may be the one (and a loop over all reaches each), so each
    # may keep its `.grad`: nothing is claimed of it.
    members = tids_of(t.tid)
    if len(members) > 1:
        for tid in members:
            member = state.tensor(tid)
            if member is not None:
                state.update_tensor(replace(member, retains_grad=True))
    return NONE


@tensor_method("backward")
def _backward(call: Call):
    from autograd_lsp.analysis.semantics import autograd
    autograd.backward(call, call.receiver)
    return NONE


@tensor_method("register_hook")
def _register_hook(call: Call):
    return UNKNOWN


@tensor_method("zero_grad")
def _tensor_zero_grad(call: Call):
    return NONE


for _name, _dtype in api.DTYPE_METHODS.items():
    def _dtype_method(call: Call, _dtype=_dtype):
        if call.args:
            return converted(call, call.receiver, None, None, "to", understood=False)
        return converted(call, call.receiver, _dtype, None, call.method)
    tensor_method(_name)(_dtype_method)


@tensor_method("to", "type")
def _to(call: Call):
    target = _conversion_target(call)
    if target is None:
        return converted(call, call.receiver, None, None, "to", understood=False)
    return converted(call, call.receiver, target[0], target[1], "to")


def _conversion_target(call: Call):
    """(dtype, device) a `.to(...)`/`.type(...)` call asks for, None where it asks
    for no change; None as a whole when an argument is not understood."""
    dtype = device = None
    values = [(None, v) for v in call.args] + list(call.kwargs.items())
    if call.starred:
        return None
    for key, value in values:
        if key in ("non_blocking", "memory_format"):
            continue
        if key == "copy":
            return None
        found = _dtype_of(value) if isinstance(value, TorchName) else None
        if found and key in (None, "dtype"):
            dtype = found
            continue
        legacy = _legacy_type(value) if call.method == "type" and key in (None, "dtype") else None
        if legacy is not None:
            # `w.type(torch.DoubleTensor)`, as old notebooks pick a precision (and,
            # with `torch.cuda.FloatTensor`, the GPU).
            dtype, device = legacy
            continue
        if isinstance(value, TensorFacts) and key in (None, "other"):
            dtype, device = value.dtype, value.device
            if dtype is None or device is None:
                return None
            continue
        if call.method == "to" and key in (None, "device"):
            device = _device_of(value)
            if device is None and _may_be_device(value):
                device = UNKNOWN_DEVICE
            if device is not None:
                continue
        return None
    return dtype, device


def _legacy_type(value):
    """(dtype, device) of a legacy tensor type named by `.type(...)`: the class
    (`torch.DoubleTensor`) or its name as a string; None for anything else."""
    if isinstance(value, TorchName):
        qualname = value.qualname
    elif isinstance(value, StrValue) and value.value:
        qualname = value.value
    else:
        return None
    prefix, _, name = qualname.rpartition(".")
    if name not in LEGACY_TENSOR_DTYPES or prefix not in ("torch", "torch.cuda"):
        return None
    return LEGACY_TENSOR_DTYPES[name], "cuda" if prefix == "torch.cuda" else "cpu"


def _may_be_device(value) -> bool:
    """A device whose value is unknown: a string, or a `torch.device(...)` of
    something unknown (anything else may be a dtype or a tensor)."""
    return isinstance(value, StrValue)


@tensor_method("cuda", "cpu")
def _cuda(call: Call):
    device = call.method if not call.args else _device_of(call.args[0], call.method)
    return converted(call, call.receiver, None, device, call.method, understood=device is not None)


@tensor_method("clone")
def _tensor_clone(call: Call):
    t = call.receiver
    return derived(call, "clone", [t], shape=t.shape, dtype=t.dtype)


@tensor_method("contiguous", "coalesce", "pin_memory", "share_memory_")
def _same_tensor(call: Call):
    return call.receiver


def _reduction_method(call: Call):
    return reduction(call, call.method, call.receiver, list(call.args), dict(call.kwargs))


def _binary_method(call: Call):
    name = call.method
    other = call.arg(0, "other")
    op = {"mm": "matmul", "mv": "matmul", "bmm": "matmul", "multiply": "mul", "subtract": "sub",
          "divide": "div", "true_divide": "div"}.get(name, name)
    return binary(call, op, call.receiver, other)


def _unary_method(call: Call):
    t = call.receiver
    return derived(call, call.method, [t], shape=t.shape, dtype=t.dtype)


def _differentiable_method(call: Call):
    t = call.receiver
    return derived(call, call.method, [t, *call.args], shape=None, dtype=t.dtype,
                   grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(f"torch.{call.method}"))


def _elementwise_pair(call: Call):
    """`a.maximum(b)`, `torch.minimum(a, b)`, `a.atan2(b)`: element by element, in
    the broadcast shape."""
    t, other = call.receiver, call.arg(0, "other")
    if not isinstance(other, (TensorFacts, NumberValue)):
        return _differentiable_method(call)
    shape = shapes.broadcast(_shape_of(t), _shape_of(other)) if isinstance(other, TensorFacts) else None
    dtype = t.dtype if not isinstance(other, TensorFacts) or other.dtype == t.dtype else None
    return derived(call, call.method, [t, other], shape=shape, dtype=dtype,
                   grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(f"torch.{call.method}"))


# Decompositions that return several tensors, each differentiable through the input
# (`torch.linalg.eigh(phi.T @ phi)` in a diversity loss), with the names torch gives them.
_DECOMPOSITIONS = {
    "torch.linalg.eigh": ("eigenvalues", "eigenvectors"),
    "torch.linalg.svd": ("U", "S", "Vh"),
    "torch.svd": ("U", "S", "V"),
    "torch.linalg.qr": ("Q", "R"),
    "torch.qr": ("Q", "R"),
}


# Linear algebra whose result has the shape of one of its inputs: the matrix itself
# (a Cholesky factor, an inverse), or the right-hand side of a solve (its batch
# dimensions broadcast with the matrix's).
_MATRIX_SHAPED = frozenset({"torch.linalg.cholesky", "torch.cholesky", "torch.linalg.inv", "torch.inverse",
                            "torch.linalg.matrix_exp", "torch.matrix_exp"})
_SOLVES = {"torch.cholesky_solve": (0, "input"), "torch.linalg.solve": (1, "B"),
           "torch.linalg.solve_triangular": (1, "B")}


@function(*_MATRIX_SHAPED, *_SOLVES)
def _linear_algebra(call: Call):
    tensors = call.tensors()
    if not tensors or call.starred:
        return UNKNOWN
    if call.qualname in _MATRIX_SHAPED:
        matrix = call.arg(0, "A")
        shape = matrix.shape if isinstance(matrix, TensorFacts) else None
    else:
        position, keyword = _SOLVES[call.qualname]
        rhs, other = call.arg(position, keyword), call.arg(1 - position)
        shape = None
        if isinstance(rhs, TensorFacts) and isinstance(other, TensorFacts) and rhs.shape is not None \
                and other.shape is not None and len(rhs.shape) >= 2 and len(other.shape) >= 2:
            batch = shapes.broadcast(rhs.shape[:-2], other.shape[:-2])
            shape = batch + rhs.shape[-2:] if batch is not None else None
    return derived(call, call.qualname, tensors, shape=shape, dtype=_float_of(tensors),
                   grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(call.qualname))


@function(*_DECOMPOSITIONS)
def _decomposition(call: Call):
    source = call.arg(0, "A")
    if not isinstance(source, TensorFacts):
        return UNKNOWN
    names = _DECOMPOSITIONS[call.qualname]
    return TupleValue(tuple(derived(call, call.qualname, [source], shape=None, dtype=source.dtype, part=i)
                            for i in range(len(names))), names)


@function("torch.meshgrid")
def _meshgrid(call: Call):
    """`torch.meshgrid(xs, ys, indexing="ij")`: one grid per input, each of its
    input's dtype, all of the shape (len(xs), len(ys), ...) ("xy" swaps the first two)."""
    from autograd_lsp.analysis.semantics.builtins import iterate
    args = [call.state.fresh(a) for a in call.args]
    if len(args) == 1 and not isinstance(args[0], TensorFacts):
        args = [call.state.fresh(e) for e in (iterate(call, args[0]).elements or [])]
    if call.starred or not args or not all(isinstance(a, TensorFacts) for a in args) \
            or len({a.dtype for a in args}) > 1:
        return UNKNOWN         # (torch refuses inputs of different dtypes)
    indexing = call.kwargs.get("indexing")
    indexing = indexing.value if isinstance(indexing, StrValue) else "ij" if indexing is None else None
    sizes = [a.shape[0] if a.shape is not None and len(a.shape) == 1 else None for a in args]
    shape = tuple(sizes) if None not in sizes and indexing in ("ij", "xy") else None
    if shape is not None and indexing == "xy" and len(shape) >= 2:
        shape = (shape[1], shape[0]) + shape[2:]
    return TupleValue(tuple(derived(call, "meshgrid", [a], shape=shape, dtype=a.dtype, saves=False, part=i)
                            for i, a in enumerate(args)))


@tensor_method("size")
def _size(call: Call):
    t = call.receiver
    if call.args or "dim" in call.kwargs:
        dim = call.number(0, "dim")
        return _dim_value(t.shape, dim)
    return _shape_value(t.shape)


@tensor_method("dim", "ndimension")
def _dim(call: Call):
    t = call.receiver
    return NumberValue("int", len(t.shape) if t.shape is not None else None)


@tensor_method("numel", "nelement")
def _tensor_numel(call: Call):
    return NumberValue("int", shapes.numel(call.receiver.shape))


@tensor_method("is_floating_point", "is_contiguous", "is_cuda", "equal", "allclose")
def _bool_method(call: Call):
    if call.method == "is_floating_point":
        kind = dtype_kind(call.receiver.dtype)
        return NumberValue("bool", None if kind is None else kind == "float")
    return NumberValue("bool")


def _shape_args(call: Call):
    values = list(call.args)
    if len(values) == 1 and isinstance(values[0], TupleValue):
        values = list(values[0].items)
    dims = []
    for v in values:
        if isinstance(v, NumberValue) and v.kind == "int":
            dims.append(v.value)
        else:
            return None
    return dims


@tensor_method("view", "reshape")
def _view(call: Call):
    t = call.receiver
    if call.args and isinstance(call.args[0], TorchName):
        return converted(call, t, _dtype_of(call.args[0]), None, "to")
    shape = shapes.view(t.shape, _shape_args(call)) if not call.starred else None
    return view_of(call, t, shape, api.grad_fn_name("view") if call.method == "view" else None)


@tensor_method("view_as", "reshape_as", "expand_as")
def _view_as(call: Call):
    t, other = call.receiver, call.arg(0)
    shape = other.shape if isinstance(other, TensorFacts) else None
    return view_of(call, t, shape, None)


@tensor_method("squeeze")
def _squeeze(call: Call):
    t = call.receiver
    dim = call.number(0, "dim") if call.given(0, "dim") else None
    if call.given(0, "dim") and dim is None:
        return view_of(call, t, None, "SqueezeBackward1")
    return view_of(call, t, shapes.squeeze(t.shape, dim),
                   "SqueezeBackward1" if dim is not None else "SqueezeBackward0")


@tensor_method("unsqueeze")
def _unsqueeze(call: Call):
    t = call.receiver
    dim = call.number(0, "dim")
    return view_of(call, t, shapes.unsqueeze(t.shape, dim) if dim is not None else None,
                   "UnsqueezeBackward0")


@tensor_method("transpose", "swapaxes", "swapdims")
def _transpose(call: Call):
    t = call.receiver
    a, b = call.number(0, "dim0"), call.number(1, "dim1")
    return view_of(call, t, shapes.transpose(t.shape, a, b), "TransposeBackward0")


@tensor_method("t")
def _t(call: Call):
    t = call.receiver
    shape = tuple(reversed(t.shape)) if t.shape is not None and len(t.shape) <= 2 else None
    return view_of(call, t, shape, "TBackward0")


@tensor_method("permute")
def _permute(call: Call):
    t = call.receiver
    return view_of(call, t, shapes.permute(t.shape, _shape_args(call)), "PermuteBackward0")


@tensor_method("flatten")
def _flatten(call: Call):
    t = call.receiver
    start = call.number(0, "start_dim", 0)
    end = call.number(1, "end_dim", -1)
    return view_of(call, t, shapes.flatten(t.shape, start, end) if start is not None and end is not None
                   else None, None)


@tensor_method("expand")
def _expand(call: Call):
    t = call.receiver
    dims = _shape_args(call)
    if dims is None or t.shape is None:
        return view_of(call, t, None, "ExpandBackward0")
    shape = tuple(t.shape[i - (len(dims) - len(t.shape))] if d == -1 else d
                  for i, d in enumerate(dims))
    return view_of(call, t, shape, "ExpandBackward0")


@tensor_method("gather")
def _gather(call: Call):
    """`t.gather(dim, index)`: the shape of `index`."""
    t, index = call.receiver, call.arg(1, "index")
    shape = index.shape if isinstance(index, TensorFacts) else None
    return derived(call, "gather", [t], shape=shape, dtype=t.dtype,
                   grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get("torch.gather"))


@tensor_method("diagonal")
def _diagonal(call: Call):
    t = call.receiver
    offset, dim1, dim2 = (call.number(i, key) if call.given(i, key) else default
                          for i, (key, default) in enumerate((("offset", 0), ("dim1", 0), ("dim2", 1))))
    return view_of(call, t, shapes.diagonal(t.shape, offset, dim1, dim2), "DiagonalBackward0")


@tensor_method("diag")
def _diag(call: Call):
    """`t.diag(k)`: the k-th diagonal of a matrix, or the matrix of a vector."""
    t = call.receiver
    k = call.number(0, "diagonal") if call.given(0, "diagonal") else 0
    shape = None
    if t.shape is not None and len(t.shape) == 2:
        shape = shapes.diagonal(t.shape, k)
    elif t.shape is not None and len(t.shape) == 1 and isinstance(k, int):
        n = t.shape[0]
        side = n + abs(k) if isinstance(n, int) else n if k == 0 else None
        shape = (side, side)
    grad_fn = "DiagEmbedBackward0" if t.shape is not None and len(t.shape) == 1 else None
    return derived(call, "diag", [t], shape=shape, dtype=t.dtype, grad_fn=grad_fn)


@tensor_method("repeat", "tile", "unflatten", "unfold", "movedim", "narrow", "diff",
               "index_select", "masked_select", "outer", "repeat_interleave", "tril",
               "triu", "flip", "roll", "take", "index_add", "scatter", "scatter_add", "index_fill",
               "masked_scatter", "put", "sort", "topk", "kthvalue")
def _reshaping(call: Call):
    t = call.receiver
    if call.method in ("sort", "topk", "kthvalue"):
        shape = t.shape if call.method == "sort" else _topk_shape(call, t) if call.method == "topk" else None
        values = derived(call, call.method, [t], shape=shape, dtype=t.dtype)
        indices = new_tensor(call, False, True, dtype="int64", shape=shape, reason="never", part=1,
                             ignore_no_grad=True)
        return TupleValue((values, indices), ("values", "indices"))
    shape = t.shape if call.method in _SAME_SHAPE else None
    return derived(call, call.method, [t, *call.args], shape=shape, dtype=t.dtype,
                   grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(f"torch.{call.method}"))


def _topk_shape(call: Call, t: TensorFacts):
    """`t.topk(k, dim=-1)`: `t`'s shape with `k` along `dim` (unknown when `k` is)."""
    dim = call.number(1, "dim")
    dim = -1 if dim is None and len(call.args) < 2 and "dim" not in call.kwargs else dim
    if t.shape is None or not isinstance(dim, int) or not -len(t.shape) <= dim < len(t.shape):
        return None
    k = call.number(0, "k")
    shape = list(t.shape)
    shape[dim] = k if isinstance(k, int) else None
    return tuple(shape)


# Of those, the ones whose result has the receiver's shape (its elements moved,
# masked or overwritten in place of others).
_SAME_SHAPE = frozenset({"flip", "roll", "tril", "triu", "index_add", "scatter", "scatter_add",
                         "index_fill", "masked_scatter", "put"})


@tensor_method("chunk", "split", "unbind", "tensor_split")
def _pieces(call: Call):
    t = call.receiver
    count = call.number(0, "chunks") if call.method == "chunk" else None
    piece = derived(call, call.method, [t], shape=None, dtype=t.dtype)
    sizes = _piece_sizes(call, t) if call.method in ("chunk", "split") else None
    if sizes is not None and isinstance(piece, TensorFacts):
        dim = sizes[0]
        return TupleValue(tuple(replace(piece, shape=t.shape[:dim] + (size,) + t.shape[dim + 1:])
                                for size in sizes[1]))
    if isinstance(count, int) and 0 < count <= 16:
        return TupleValue(tuple(piece for _ in range(count)))
    if call.method == "unbind" and t.shape:
        dim = call.number(0, "dim") if call.args or "dim" in call.kwargs else 0
        if isinstance(dim, int) and -len(t.shape) <= dim < len(t.shape):
            dim %= len(t.shape)
            size = t.shape[dim]
            if isinstance(size, int) and size <= 16:
                rest = t.shape[:dim] + t.shape[dim + 1:]
                return TupleValue(tuple(replace(piece, shape=rest) if isinstance(piece, TensorFacts)
                                        else piece for _ in range(size)))
    from autograd_lsp.analysis.semantics import containers
    # split, chunk and tensor_split give one piece at least, even of an empty dimension
    # (a loop over a batch's micro-batches runs): only unbind may give none.
    return containers.new_list(call, None, item=piece, nonempty=True if call.method != "unbind" else None)


def _piece_sizes(call: Call, t: TensorFacts):
    """(dim, sizes along it) of `t.split(n_or_sizes, dim)` / `t.chunk(k, dim)`, when the
    size of that dim and the argument are known (and the pieces few)."""
    if not t.shape:
        return None
    dim = call.number(1, "dim", 0)
    if not isinstance(dim, int) or not -len(t.shape) <= dim < len(t.shape):
        return None
    dim %= len(t.shape)
    length = t.shape[dim]
    if not isinstance(length, int):
        return None
    if call.method == "split":
        given = call.arg(0, "split_size_or_sections")
        if isinstance(given, (TupleValue, ObjectRef)):
            items = given.items if isinstance(given, TupleValue) else None
            if items is None:
                from autograd_lsp.analysis.semantics import containers
                items = containers.known_items(call.state, given)
            sizes = [i.value for i in items or () if isinstance(i, NumberValue) and isinstance(i.value, int)]
            return (dim, tuple(sizes)) if items and len(sizes) == len(items) and sum(sizes) == length \
                and len(sizes) <= 16 else None
        step = call.number(0, "split_size_or_sections")
    else:
        chunks = call.number(0, "chunks")
        step = -(-length // chunks) if isinstance(chunks, int) and chunks > 0 else None
    if not isinstance(step, int) or step <= 0 or length == 0 or -(-length // step) > 16:
        return None
    return dim, tuple([step] * (length // step) + ([length % step] if length % step else []))


@tensor_method("softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp", "softmin")
def _along_dim(call: Call):
    t = call.receiver
    return derived(call, call.method, [t], shape=t.shape, dtype=t.dtype)


@tensor_method("masked_fill", "clamp", "clip", "clamp_min", "clamp_max", "nan_to_num", "lerp",
               "where", "type_as", "new_tensor")
def _keeps_shape(call: Call):
    t = call.receiver
    if call.method == "type_as":
        other = call.arg(0)
        return converted(call, t, other.dtype if isinstance(other, TensorFacts) else None, None, "to",
                         understood=isinstance(other, TensorFacts) and other.dtype is not None)
    if call.method == "new_tensor":
        return new_tensor(call, False, True, reason="rewrap", ignore_no_grad=True)
    return derived(call, call.method, [t, *call.args], shape=t.shape, dtype=t.dtype,
                   grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(f"torch.{call.method}"))


@tensor_method("new_zeros", "new_ones", "new_empty", "new_full", "zero_like")
def _new_factory(call: Call):
    t = call.receiver
    shape = size_from(call.args[:1]) if call.args else None
    return new_tensor(call, call.flag(None, "requires_grad", False), True, dtype=t.dtype, shape=shape,
                      reason="never", device=t.device, ignore_no_grad=True)


@tensor_method("abs", "sigmoid", "tanh", "relu", "exp", "log", "neg", "sqrt", "sin", "cos")
def _common_unary(call: Call):
    return _unary_method(call)


def _inplace_method(call: Call):
    t = call.receiver
    operand = _inplace_operand(call)
    inplace(call, t, call.node.func.value if isinstance(call.node.func, ast.Attribute) else call.node,
            call.method, operand, call.node)
    return call.state.fresh(t)


# In-place methods whose first arguments say where (a dim, an index, a mask): the
# position and keyword of the values written (`out.index_add_(0, dst, msg)`).
_VALUES_AT = {"index_add_": (2, "source"), "index_copy_": (2, "source"), "index_fill_": (2, "value"),
              "index_reduce_": (2, "source"), "scatter_": (2, "src"), "scatter_add_": (2, "src"),
              "scatter_reduce_": (2, "src"), "index_put_": (1, "values"), "masked_scatter_": (1, "source"),
              "masked_fill_": (1, "value"), "put_": (1, "source")}


def _inplace_operand(call: Call):
    """What an in-place method writes into its receiver: the values argument of an
    indexed write; else every tensor it is given (`a.addcmul_(t1, t2)`,
    `w.lerp_(target, weight)`), taken together."""
    at = _VALUES_AT.get(call.method)
    if at is not None:
        value = call.arg(*at, default=None)
        if value is None and call.method == "scatter_":
            value = call.arg(None, "value", default=None)
        return value
    given = [*call.args, *call.kwargs.values()]
    tensors = [v for v in given if isinstance(v, TensorFacts)]
    if len(tensors) < 2:
        return tensors[0] if tensors else (call.args[0] if call.args else None)
    return _together(tensors)


def _together(tensors: list) -> TensorFacts:
    """Several operands as one, for what an in-place change takes from them: it
    requires grad when any does, and reaches every graph and leaf they reach."""
    flags = [t.requires_grad for t in tensors]
    requires = True if True in flags else None if None in flags else False
    first = tensors[0]
    return replace(first, requires_grad=requires,
                   saved_nodes=frozenset().union(*(t.saved_nodes for t in tensors)),
                   leaves=frozenset().union(*(t.leaves for t in tensors)),
                   opaque=any(t.opaque for t in tensors),
                   unseen_history=any(t.unseen_history for t in tensors))


def _register_tensor_methods():
    for name in api.REDUCTIONS | api.REDUCTIONS_WITH_DIM:
        tensor_method(name)(_reduction_method)
    for name in ("add", "sub", "mul", "div", "pow", "matmul", "mm", "mv", "bmm", "multiply",
                 "subtract", "divide", "true_divide", "remainder", "floor_divide", "fmod",
                 "maximum", "minimum", "atan2", "dot", "eq", "ne", "lt", "gt", "le", "ge"):
        if name in ("eq", "ne", "lt", "gt", "le", "ge"):
            tensor_method(name)(lambda call: comparison(call, [call.receiver, call.arg(0)]))
        elif name in ("maximum", "minimum", "atan2"):
            tensor_method(name)(_elementwise_pair)
        elif name == "dot":
            tensor_method(name)(_differentiable_method)
        else:
            tensor_method(name)(_binary_method)
    for name in api.UNARY_OPS:
        if name not in TENSOR_METHODS:
            tensor_method(name)(_unary_method)
    for name in api.DIFFERENTIABLE_METHODS:
        if name not in TENSOR_METHODS:
            tensor_method(name)(_differentiable_method)
    for name in api.INPLACE_METHODS:
        tensor_method(name)(_inplace_method)
    tensor_method("copy_", "zero_", "fill_", "uniform_", "normal_", "clamp_", "masked_fill_",
                  "index_fill_", "scatter_", "add_", "mul_", "sub_", "div_")(_inplace_method)
    for name in api.INDEX_RESULTS:
        if name not in TENSOR_METHODS:
            tensor_method(name)(index_result)


_register_tensor_methods()
_register_torch_families()


# -- helpers ---------------------------------------------------------------------------------------

# Why a result needs no grad, when its inputs give several reasons: the one a user
# can act on first (a gradient taken without create_graph, a no_grad block...).
_REASONS = ("grad_result", "no_grad", "inference_mode", "detach", "data", "rewrap", "sample", "checkpoint")


def _main_reason(reasons: set) -> str:
    if len(reasons) == 1:
        return next(iter(reasons)) or "never"
    for reason in _REASONS:
        if reason in reasons:
            return reason
    return "never"


# Products: each operand is kept only for the other operand's gradient.
_PRODUCTS = frozenset({"mul", "matmul", "mm", "mv", "bmm", "dot"})


def _saved_operands(op: str, tensors: list) -> list:
    """The operands an op measured to save keeps: for a product, an operand only
    when the other one requires grad (torch saves `b` for `a`'s gradient)."""
    if len(tensors) == 2 and op in _PRODUCTS:
        a, b = tensors
        return [t for t, other in ((a, b), (b, a)) if other.requires_grad is True]
    if len(tensors) == 2 and op == "div":
        a, b = tensors
        return ([a] if b.requires_grad else []) + ([b] if a.requires_grad or b.requires_grad else [])
    return [t for t in tensors if t.requires_grad is not False]


def _measured_saves(op: str, other_is_tensor) -> bool | None:
    """Whether `op` keeps tensors for its backward, from the tables measured with
    torch (a binary op by its operand kind: `mul` by a number saves the number)."""
    keys = [op]
    if other_is_tensor is not None:
        keys.insert(0, f"{op}_{'tensor' if other_is_tensor else 'scalar'}")
    for key in keys:
        if key in api.NON_SAVING_OPS:
            return False
        if api.saves_input(key) is not None:   # measured, and not in SAVES_NOTHING
            return True
    return None


def _shape_of(value):
    if isinstance(value, TensorFacts):
        return value.shape
    if isinstance(value, NumberValue):
        return ()
    return None


def _promote(left, right, op: str) -> str | None:
    dtypes = []
    for v in (left, right):
        if isinstance(v, TensorFacts):
            if v.dtype is None:
                return None
            dtypes.append(("tensor", v.dtype))
        elif isinstance(v, NumberValue):
            dtypes.append(("number", v.kind))
        else:
            return None
    tensor_dtypes = [d for k, d in dtypes if k == "tensor"]
    number_kinds = [d for k, d in dtypes if k == "number"]
    float_tensors = [d for d in tensor_dtypes if d in FLOAT_DTYPES]
    if float_tensors:
        if len(set(float_tensors)) == 1:
            return float_tensors[0]
        if "float64" in float_tensors and len(tensor_dtypes) == 2:
            return "float64"
        return None
    if op == "div" or "float" in number_kinds:
        return "float32"
    if all(d == tensor_dtypes[0] for d in tensor_dtypes) and not number_kinds:
        return tensor_dtypes[0]
    if len(set(tensor_dtypes)) == 1 and number_kinds and all(k == "int" for k in number_kinds) \
            and op in _INTEGER_OPS:
        # A Python int keeps an integer tensor's dtype (`10 * F.one_hot(y, n)` is int64)
        # and makes a bool tensor int64.
        return "int64" if tensor_dtypes[0] == "bool" and op != "sub" else \
            tensor_dtypes[0] if tensor_dtypes[0] in INT_DTYPES else None
    return None


_INTEGER_OPS = frozenset({"add", "sub", "mul", "floor_divide", "remainder", "pow"})


def _float_of(tensors: list) -> str | None:
    dtypes = {t.dtype for t in tensors}
    return dtypes.pop() if len(dtypes) == 1 else None


def _same(values: list):
    return values[0] if values and all(v == values[0] for v in values) else None


__all__ = ["new_tensor", "derived", "binary", "reduction", "converted", "getitem", "setitem",
           "inplace", "attribute", "element", "row", "Unknown"]


def unsettle_grads(state, t: TensorFacts, grad) -> None:
    """`.grad` set to `grad` on one of the tensors a joined `t` stands for (`p` of
    `for p in params` over a list not known item by item): each may be the one, so
    none of them keeps a gradient state the code may just have changed."""
    members = tids_of(t.tid)
    if len(members) < 2:
        return
    for tid in members:
        member = state.tensor(tid)
        if member is not None and member.grad != grad:
            state.update_tensor(replace(member, grad=None, grad_at=state.tick()))


def assign_attribute(call: Call, t: TensorFacts, name: str, value) -> None:
    """`t.grad = None`, `t.requires_grad = True`, `t.data = ...`."""
    from autograd_lsp.analysis.semantics import truth
    state = call.state
    t = state.fresh(t)
    if name == "grad":
        state.update_tensor(replace(t, grad="none" if value is NONE else None, grad_at=state.tick()))
        unsettle_grads(state, t, "none" if value is NONE else None)
    elif name == "requires_grad":
        flag = truth(value) if isinstance(value, NumberValue) else None
        if t.is_leaf is True and flag is not None and dtype_kind(t.dtype) in ("float", "complex"):
            state.update_tensor(replace(
                t, requires_grad=flag, no_grad_reason=None if flag else "never",
                grad="none" if flag and t.grad is None else t.grad, grad_at=state.tick(),
                leaves=frozenset({t.tid}) if flag else frozenset(), opaque=False if flag else t.opaque,
                unseen_history=False if flag else t.unseen_history))
        elif flag is None or t.is_leaf is not False:
            state.update_tensor(replace(t, requires_grad=None))
    elif name == "data":
        # The tensor keeps its identity, flags and .grad; its values, shape and dtype
        # become the new data's.
        value = state.fresh(value)
        known = isinstance(value, TensorFacts)
        state.update_tensor(replace(t, shape=value.shape if known else None,
                                    dtype=value.dtype if known else None))
