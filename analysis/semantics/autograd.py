"""Autograd itself: backward, torch.autograd.grad, grad modes, gradcheck, and
what a gradient's `.grad` attribute does."""
from __future__ import annotations

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import (NONE, UNKNOWN, FunctionValue, NumberValue, ObjectRef,
                            TensorFacts, TorchName, TupleValue, Unknown, replace)
from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.semantics import Call, function, method, truth


@record
class GradMode:
    """A grad-mode context manager or decorator: `torch.no_grad()` and friends.
    `no_grad`: True (grad off), False (on) or "unknown"."""
    no_grad: object


_CONTEXTS = {
    "torch.no_grad": True,
    "torch.inference_mode": True,
    "torch.enable_grad": False,
}


def grad_mode_of(value):
    """True/False/"unknown" for a grad-mode context or decorator value; None when
    the value is not one. `torch.no_grad` itself (not called) counts as one: as a
    decorator it works, and as a `with` it is a mistake a rule reports."""
    if isinstance(value, GradMode):
        return value.no_grad
    if isinstance(value, TorchName) and value.qualname in _CONTEXTS:
        return _CONTEXTS[value.qualname]
    return None


def entered(value):
    """What `with value as name:` binds."""
    return UNKNOWN


@function("torch.no_grad", "torch.enable_grad")
def _grad_context(call: Call):
    return GradMode(_CONTEXTS[call.qualname])


@function("torch.inference_mode")
def _inference_mode(call: Call):
    flag = call.flag(0, "mode", True)
    return GradMode("unknown" if flag is None else bool(flag))


@function("torch.set_grad_enabled")
def _set_grad_enabled(call: Call):
    flag = call.flag(0, "mode", None)
    mode = "unknown" if flag is None else (not flag)
    # As a statement it switches the mode from here on; as a `with` it scopes it.
    if call.ctx.stmt is not None and _is_statement_call(call):
        call.state.no_grad = None if mode == "unknown" else mode
    return GradMode(mode)


def _is_statement_call(call: Call) -> bool:
    import ast
    stmt = call.ctx.stmt
    return isinstance(stmt, ast.Expr) and stmt.value is call.node


@function("torch.is_grad_enabled")
def _is_grad_enabled(call: Call):
    mode = call.state.no_grad
    return NumberValue("bool", None if mode is None else not mode)


# -- backward ------------------------------------------------------------------------------

def backward(call: Call, output: TensorFacts) -> None:
    """`output.backward(...)`: frees the graph's saved tensors unless asked to keep
    them, and fills the `.grad` of the leaves it reaches."""
    state = call.state
    output = state.fresh(output)
    if call.starred:
        return
    note_stale_grads(call, output)
    keyword = retain_keyword(call)
    retain = call.flag(1, keyword, None)
    create = call.flag(2, "create_graph", False)
    if retain is False or (retain is None and not call.given(1, keyword) and create is not True):
        state.free(output.saved_nodes, call.node)
    grads_reached(call, output, "graph" if create else "set")


def retain_keyword(call: Call) -> str:
    """`retain_variables=`, torch < 0.2's name of retain_graph, is read as meant: the
    call raises until it is renamed, and one mistake makes one finding."""
    return "retain_variables" if "retain_variables" in call.kwargs else "retain_graph"


def note_stale_grads(call: Call, output: TensorFacts) -> None:
    """Tell rules which leaves this backward reaches, and by which names."""
    state = call.state
    call.extra["leaves"] = output.leaves
    call.extra["leaf_names"] = tuple(sorted(
        name for name, value in state.names.items()
        if isinstance(value, TensorFacts) and value.tid in output.leaves))


def iteration(call: Call):
    """Which iteration of which loops a call runs in."""
    return (call.ctx.loops, call.ctx.passes)


def grads_reached(call: Call, output: TensorFacts, grad: str) -> None:
    """After a backward through `output`: the leaves in its history have a `.grad`
    ("graph" when create_graph=True made it differentiable). When the history is
    not fully known, any leaf may have been reached."""
    state = call.state
    here = iteration(call)
    for tid in output.leaves:
        leaf = state.tensor(tid)
        if leaf is not None:
            # `.grad` sums every backward since it was last cleared: remember when the
            # first of them ran, and whether backwards of several iterations add up.
            if leaf.grad in ("set", "graph", "summed"):
                new = "summed" if leaf.grad == "summed" or leaf.grad_since != here else grad
                state.update_tensor(replace(leaf, grad=new))
            else:
                state.update_tensor(replace(leaf, grad=grad, grad_since=here))
    if output.opaque:
        any_leaf_may_have_grad(call)


def any_leaf_may_have_grad(call: Call) -> None:
    call.state.any_grad_may_be_set()


@function("torch.autograd.backward")
def _autograd_backward(call: Call):
    from autograd_lsp.analysis.semantics.builtins import iterate
    tensors = call.arg(0, "tensors")
    items = [tensors] if isinstance(tensors, TensorFacts) else (
        iterate(call, tensors).elements or [iterate(call, tensors).element])
    seeds = call.arg(1, "grad_tensors", None)
    if seeds is not None:
        seed_items = [seeds] if isinstance(seeds, TensorFacts) else iterate(call, seeds).elements
        if seed_items is not None and len(seed_items) == len(items):
            call.extra["seeds"] = [(call.state.fresh(o), call.state.fresh(g))
                                   for o, g in zip(items, seed_items)]
    keyword = retain_keyword(call)
    retain = call.flag(None, keyword, None)
    create = call.flag(None, "create_graph", False)
    for item in items:
        item = call.state.fresh(item)
        if not isinstance(item, TensorFacts):
            any_leaf_may_have_grad(call)
            continue
        if retain is False or (retain is None and not call.given(None, keyword) and create is not True):
            call.state.free(item.saved_nodes, call.node)
        note_stale_grads(call, item)
        grads_reached(call, item, "graph" if create else "set")
    return NONE


@record
class GradResult:
    """The tuple `torch.autograd.grad` returns; every item is like `item`."""
    item: object


@function("torch.autograd.grad")
def _autograd_grad(call: Call):
    from autograd_lsp.analysis.semantics import tensors
    state = call.state
    create = call.flag(None, "create_graph", False)
    keyword = retain_keyword(call)
    retain = call.flag(None, keyword, None)
    outputs = call.arg(0, "outputs")
    inputs = call.arg(1, "inputs")
    if not isinstance(outputs, TensorFacts):
        from autograd_lsp.analysis.semantics.builtins import iterate
        items = iterate(call, outputs).elements
        if items:
            # A sequence of outputs: what rules say of element 0 holds of it.
            call.extra["first_output"] = state.fresh(items[0])
    if isinstance(outputs, TensorFacts) and not call.given(None, keyword) and create is not True:
        state.free(outputs.saved_nodes, call.node)
    elif isinstance(outputs, TensorFacts) and retain is False:
        state.free(outputs.saved_nodes, call.node)
    shape = inputs.shape if isinstance(inputs, TensorFacts) else None
    dtype = inputs.dtype if isinstance(inputs, TensorFacts) else None
    if create is True:
        item = tensors.new_tensor(call, requires_grad=None, is_leaf=None, dtype=dtype, shape=shape)
    elif create is None:
        item = UNKNOWN
    else:
        item = tensors.new_tensor(call, requires_grad=False, is_leaf=True, dtype=dtype, shape=shape,
                                  reason="grad_result", ignore_no_grad=True)
        item = state.created(replace(item, grad_call=call.node))
    wrt = _tensors_in(call, inputs)
    if wrt is not None:
        call.extra["wrt"] = frozenset(t.tid for t in wrt)
    count = _count(call, inputs)
    if count is not None:
        return TupleValue(tuple(item for _ in range(count)))
    from autograd_lsp.analysis.semantics import containers
    return containers.new_list(call, None, item=item, nonempty=True)


def _tensors_in(call: Call, inputs) -> list | None:
    """The tensors `inputs` names (one, or a known list or tuple of them); None when
    any is not known."""
    from autograd_lsp.analysis.semantics import containers
    if isinstance(inputs, TensorFacts):
        return [inputs]
    items = inputs.items if isinstance(inputs, TupleValue) else \
        containers.known_items(call.state, inputs) if isinstance(inputs, ObjectRef) and inputs.kind == "list" \
        else None
    if items is None:
        return None
    items = [call.state.fresh(i) for i in items]
    return items if all(isinstance(i, TensorFacts) for i in items) else None


def _count(call: Call, inputs):
    from autograd_lsp.analysis.semantics import containers
    if isinstance(inputs, TensorFacts):
        return 1
    if isinstance(inputs, TupleValue):
        return len(inputs.items)
    if isinstance(inputs, ObjectRef) and inputs.kind == "list":
        items = containers.known_items(call.state, inputs)
        return len(items) if items is not None and len(items) <= 64 else None
    return None


@function("torch.autograd.gradcheck", "torch.autograd.gradgradcheck",
          "torch.autograd.gradcheck.gradcheck", "torch.autograd.gradcheck.gradgradcheck")
def _gradcheck(call: Call):
    """Tells rules the input tensors, with the node naming each when the inputs are
    written as a tuple or list."""
    import ast
    from autograd_lsp.analysis.semantics.builtins import iterate
    inputs = call.arg(1, "inputs")
    node = None
    if call.node is not None:
        positional = [a for a in call.node.args if not isinstance(a, ast.Starred)]
        node = positional[1] if len(positional) > 1 else next(
            (k.value for k in call.node.keywords if k.arg == "inputs"), None)
    if isinstance(inputs, TensorFacts):
        call.extra["gradcheck_inputs"] = [(inputs, node)]
    else:
        elements = iterate(call, inputs).elements or []
        nodes = node.elts if isinstance(node, (ast.Tuple, ast.List)) and len(node.elts) == len(elements) \
            else [None] * len(elements)
        call.extra["gradcheck_inputs"] = [(call.state.fresh(v), n) for v, n in zip(elements, nodes)]
    return NumberValue("bool")


@function(*api.VARIABLE_CLASSES)
def _variable(call: Call):
    """`Variable(t)`: since torch 0.4 a new leaf sharing `t`'s data, cut from `t`'s
    graph, requiring grad only when asked (`requires_grad=True`); `volatile=` does
    nothing."""
    from autograd_lsp.analysis.semantics import tensors
    data = call.arg(0, "data")
    flag = call.flag(1, "requires_grad", False)
    if not isinstance(data, TensorFacts):
        return tensors.new_tensor(call, flag, True, ignore_no_grad=True)
    return tensors.new_tensor(call, flag, True, dtype=data.dtype, shape=data.shape,
                              reason="never" if data.requires_grad is False else None,
                              device=data.device, ignore_no_grad=True)


def after_call(call: Call, event) -> None:
    """Effects every call shares: none yet."""


@method("grad", "zero_", "fill_", "mul_", "add_", "copy_", "div_", "sub_", "clamp_", "data")
def _grad_inplace(call: Call):
    """`p.grad.zero_()`: clears the gradient (after a backward; while `.grad` is
    None it raises AttributeError, which a rule reports)."""
    from autograd_lsp.analysis.semantics import tensors
    owner = call.state.fresh(call.receiver.owner)
    if call.method in ("zero_", "fill_", "mul_", "copy_") and owner.grad != "none":
        # Zeroed (or overwritten) in place: whatever the earlier backwards summed is gone.
        call.state.update_tensor(replace(owner, grad="zero"))
        tensors.unsettle_grads(call.state, owner, "zero")
    return call.receiver


@method("grad", "detach", "clone", "norm", "sum", "mean", "abs", "item", "cpu", "numpy", "view",
        "reshape", "flatten", "pow", "square", "sign", "to", "float", "double", "max", "min",
        "tolist", "size", "dim", "numel", "__getitem__", "requires_grad_", "detach_")
def _grad_read(call: Call):
    """Reading a gradient: a tensor that does not require grad (when it is set)."""
    from autograd_lsp.analysis.semantics import tensors
    owner = call.state.fresh(call.receiver.owner)
    if owner.grad == "none":
        return UNKNOWN
    plain = owner.grad in ("set", "zero", "summed")
    as_tensor = TensorFacts(tid=("grad", owner.tid),
                            requires_grad=True if owner.grad == "graph" else False if plain else None,
                            is_leaf=True if plain else None, dtype=owner.dtype, shape=owner.shape,
                            no_grad_reason="grad_result" if plain else None, opaque=False,
                            unseen_history=not plain,
                            device=owner.device)
    fn = tensors.TENSOR_METHODS.get(call.method)
    if fn is None:
        return UNKNOWN
    inner = Call(call.node, call.args, call.kwargs, call.state, call.ctx, call.walker, call.frame,
                 receiver=as_tensor, method=call.method, starred=call.starred)
    return fn(inner)


__all__ = ["GradMode", "grad_mode_of", "backward", "GradResult", "after_call", "truth",
           "FunctionValue", "Unknown"]
