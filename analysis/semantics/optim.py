"""torch.optim: which parameters an optimizer owns, what `step()` and
`zero_grad()` do to them; gradient scalers and learning-rate schedulers."""
from __future__ import annotations

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import (NONE, UNKNOWN, FunctionValue, BoundMethod, NumberValue, ObjectRef,
                            StrValue, TensorFacts, TupleValue, Unknown, replace, tids_of)
from autograd_lsp.analysis.semantics import PREFIXES, Call, function, method
from autograd_lsp.analysis.semantics import nn as nn_ops


def collect_params(call: Call, value, depth: int = 0):
    """(tensors, complete, module ids) handed to an optimizer: `model.parameters()`,
    a list of tensors, param-group dicts, a chain of those."""
    from autograd_lsp.analysis.semantics import containers
    from autograd_lsp.analysis.semantics.builtins import iterate
    state = call.state
    value = state.fresh(value)
    if depth > 4:
        return [], False, set()
    if isinstance(value, TensorFacts):
        members = tids_of(value.tid)
        if len(members) == 1:
            return [value], True, set()
        return [t for t in (_tensor(call, tid) for tid in members) if t is not None], False, set()
    if isinstance(value, ObjectRef) and value.kind == "list":
        attrs = state.attrs(value)
        owner = attrs.get("_params_of")
        modules = {owner.oid} if isinstance(owner, ObjectRef) else set()
        inner = iterate(call, value)
        if inner.elements is None:
            known = [state.fresh(p) for p in attrs.get("_params", ())]
            element = state.fresh(inner.element)
            if isinstance(element, TensorFacts):
                known += [t for t in (_tensor(call, tid) for tid in tids_of(element.tid)) if t is not None]
            return known, False, modules
        tensors, complete = [], True
        for item in inner.elements:
            found, ok, mods = collect_params(call, item, depth + 1)
            tensors += found
            complete = complete and ok
            modules |= mods
        return tensors, complete, modules
    if isinstance(value, ObjectRef) and value.kind == "dict":
        entries = containers.entries_of(state, value)
        if entries is not None and "params" in entries:
            return collect_params(call, entries["params"], depth + 1)
        return [], False, set()
    if isinstance(value, TupleValue):
        tensors, complete, modules = [], True, set()
        for item in value.items:
            found, ok, mods = collect_params(call, item, depth + 1)
            tensors += found
            complete = complete and ok
            modules |= mods
        return tensors, complete, modules
    return [], False, set()


def _tensor(call: Call, tid):
    return call.state.tensor(tid)


def init_optimizer(call: Call, ref: ObjectRef, params_value) -> None:
    from autograd_lsp.analysis.semantics import containers
    state = call.state
    tensors, complete, modules = collect_params(call, params_value)
    containers.consume(state, params_value)      # (a `filter(...)` handed over is used up)
    call.extra["params"] = tensors
    group = containers.new_dict(_sub(call, 0), {"params": containers.new_list(
        _sub(call, 1), tensors if complete else None, item=None if complete else UNKNOWN)}, True)
    groups = containers.new_list(_sub(call, 2), [group])
    state.set_attrs(ref, {"params": frozenset(t.tid for t in tensors), "complete": complete,
                          "modules": frozenset(modules), "param_groups": groups,
                          "state": containers.new_dict(_sub(call, 3), {}, False)})


def _sub(call: Call, part: int) -> Call:
    """A Call whose allocations get their own identities (several objects made by
    one call)."""
    return Call(call.node, [], {}, call.state, call.ctx, call.walker, call.frame,
                salt=call.salt + ("optimizer", part))


def make_optimizer(call: Call):
    ref = ObjectRef(call.new_id(), "optimizer", call.qualname)
    call.state.new_object(ref, {})
    init_optimizer(call, ref, call.arg(0, "params"))
    if call.qualname.endswith(".LBFGS"):
        # LBFGS evaluates the closure up to `max_iter` times (20 by default) per step.
        max_iter = call.number(2, "max_iter", 20)
        call.state.set_attr(ref, "closure_calls", NumberValue("int", 2 if max_iter is None or max_iter > 1 else 1))
    return ref


def _optimizer_family(qualname: str):
    name = qualname.rsplit(".", 1)[-1]
    if qualname.startswith("torch.optim.") and name in api.OPTIMIZERS:
        return make_optimizer
    if qualname.startswith("torch.optim.lr_scheduler."):
        return _scheduler
    return None


PREFIXES.append(("torch.optim.", _optimizer_family))


def _scheduler(call: Call):
    ref = ObjectRef(call.new_id(), "scheduler", call.qualname)
    call.state.new_object(ref, {})
    return ref


def owned(state, ref: ObjectRef):
    """(the parameter tensors an optimizer steps, whether that set is complete)."""
    return nn_ops.parameters_of(state, ref)


@method("optimizer", "zero_grad")
def _zero_grad(call: Call):
    set_to_none = call.flag(0, "set_to_none", True)
    params, complete = owned(call.state, call.receiver)
    call.extra["cleared"] = frozenset(p.tid for p in params)
    call.extra["complete"] = complete
    nn_ops.clear_grads(call, params, set_to_none)
    return NONE


def _closure_mark(call: Call):
    """An iteration (loops, passes) no backward runs in: the closure's earlier run."""
    return (call.ctx.loops, call.ctx.passes + (("closure", call.node.lineno, call.node.col_offset),))


def _mark_filled(call: Call, optimizer) -> dict:
    """Before the closure runs again (LBFGS evaluates it several times per step): the
    parameters whose `.grad` the first run filled, marked so that a backward adding to
    it, with nothing clearing it between, shows. Returns their earlier marks."""
    params, _ = owned(call.state, optimizer)
    marked = {}
    for p in params:
        p = call.state.fresh(p)
        if p.grad in ("set", "summed"):
            marked[p.tid] = (p.grad, p.grad_since)
            call.state.update_tensor(replace(p, grad="set", grad_since=_closure_mark(call)))
    return marked


def _summed_since_marked(call: Call, marked: dict) -> bool:
    """Whether a later run of the closure added to gradients the first run filled;
    the marks are taken off again."""
    summed = False
    mark = _closure_mark(call)
    for tid, (grad, since) in marked.items():
        p = call.state.tensor(tid)
        if p is None or p.grad_since != mark:
            continue
        summed = summed or p.grad == "summed"
        call.state.update_tensor(replace(p, grad=grad if p.grad == "set" else "summed", grad_since=since))
    return summed


@method("optimizer", "step")
def step(call: Call, optimizer: ObjectRef | None = None):
    """Runs the closure (with grad enabled, as torch's optimizers do), then changes
    the parameters in place: a graph that saved one of them can no longer be
    backwarded through."""
    optimizer = optimizer or call.receiver
    result = NONE
    closure = call.arg(0, "closure", NONE)
    if isinstance(closure, (FunctionValue, BoundMethod)):
        saved = call.state.no_grad
        if saved is True:
            call.state.no_grad = False
        calls = call.state.attr(optimizer, "closure_calls", NumberValue("int", 1))
        marked: dict = {}
        for index in range(calls.value if isinstance(calls, NumberValue) and calls.value else 1):
            if index == 1:
                marked = _mark_filled(call, optimizer)
            inner = Call(call.node, [], {}, call.state, call.ctx, call.walker, call.frame,
                         salt=call.salt + ("closure", index))
            result, _ = call.walker.apply(closure, inner)
        if marked:
            call.extra["closure_summed"] = _summed_since_marked(call, marked)
        call.state.no_grad = saved
    from autograd_lsp.analysis.semantics.autograd import iteration
    params, complete = owned(call.state, optimizer)
    call.extra["params"] = frozenset(p.tid for p in params)
    call.extra["complete"] = complete
    call.extra["optimizer"] = optimizer
    # The loops whose iterations make the parameters anew (a model built per trial).
    call.extra["params_made_in"] = frozenset(p.made_in_loop for p in (call.state.fresh(q) for q in params)
                                             if p.made_in_loop is not None)
    here = iteration(call)
    # Gradients summed since an earlier iteration, not cleared since: this step uses them.
    call.extra["stale"] = {p.tid: p.grad_since for p in (call.state.fresh(q) for q in params)
                           if p.grad == "summed" and p.grad_since is not None
                           and p.grad_since != here}
    for p in params:
        p = call.state.fresh(p)
        # torch's optimizers skip a parameter whose .grad is None: only a known
        # gradient makes the step write into it.
        if p.saved_by and p.grad in ("set", "graph", "zero", "summed"):
            call.state.clobber(p.saved_by, call.node)
    return result


@method("optimizer", "add_param_group")
def _add_param_group(call: Call):
    tensors, complete, modules = collect_params(call, call.arg(0))
    attrs = call.state.attrs(call.receiver)
    call.state.set_attrs(call.receiver, {
        "params": (attrs.get("params") or frozenset()) | {t.tid for t in tensors},
        "complete": bool(attrs.get("complete")) and complete,
        "modules": (attrs.get("modules") or frozenset()) | modules})
    return NONE


@method("optimizer", "state_dict", "load_state_dict")
def _optimizer_other(call: Call):
    return UNKNOWN


@method("scheduler", "step", "get_last_lr", "state_dict", "load_state_dict")
def _scheduler_step(call: Call):
    return NONE if call.method == "step" else UNKNOWN


# -- gradient scalers ------------------------------------------------------------------------

@function("torch.cuda.amp.GradScaler", "torch.amp.GradScaler", "torch.cpu.amp.GradScaler",
          "torch.amp.grad_scaler.GradScaler")
def _grad_scaler(call: Call):
    ref = ObjectRef(call.new_id(), "scaler", call.qualname)
    call.state.new_object(ref, {})
    return ref


@method("scaler", "scale")
def _scale(call: Call):
    from autograd_lsp.analysis.semantics import tensors
    value = call.arg(0)
    if isinstance(value, TensorFacts):
        return tensors.binary(call, "mul", value, NumberValue("float"))
    return UNKNOWN


@method("scaler", "step")
def _scaler_step(call: Call):
    optimizer = call.arg(0)
    if isinstance(optimizer, ObjectRef) and optimizer.kind == "optimizer":
        inner = Call(call.node, list(call.args[1:]), dict(call.kwargs), call.state, call.ctx,
                     call.walker, call.frame, receiver=optimizer, method="step")
        result = step(inner, optimizer)
        # What the step recorded (its optimizer, the parameters it used) is the
        # scaler's call's too: rules read it from this call's event.
        call.extra.update(inner.extra)
        return result
    return NONE


@method("scaler", "update", "unscale_", "get_scale", "state_dict", "load_state_dict")
def _scaler_other(call: Call):
    return NONE if call.method in ("update", "unscale_") else UNKNOWN


__all__ = ["make_optimizer", "init_optimizer", "owned", "step", "tids_of", "StrValue", "Unknown",
           "replace"]
