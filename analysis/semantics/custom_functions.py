"""Custom autograd Functions: `class F(torch.autograd.Function)` with static
`forward` and `backward`, called as `F.apply(*inputs)`.

torch runs `forward` with grad disabled and wraps what it returns: each tensor
output requires grad when a tensor input does (and grad mode is on), is not a
leaf, and has a `grad_fn` named after the class (`FBackward`). The forward is
walked for the shape and dtype of its outputs; its `ctx` is an object of its
own: what `ctx.save_for_backward` keeps becomes what the output's graph node
saved (an in-place change of it breaks the backward, and a second backward
finds it freed); its other bookkeeping methods change nothing followed.
`backward` is never walked: what it computes reaches the user only through
`.grad`, and its own bugs are out of reach.
"""
from __future__ import annotations

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, ClassValue, FunctionValue, ObjectRef, TensorFacts,
                                         TupleValue, replace)
from autograd_lsp.analysis.semantics import Call, method
from autograd_lsp.analysis.semantics import builtins as py
from autograd_lsp.analysis.semantics import tensors as t_ops

# The bases that make a class a custom Function (users write either name), and the
# kind such a class gets (objects._kind_of).
FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
KIND = "autograd_function"


@method("class", "apply")
def _apply(call: Call):
    cls = call.receiver
    forward = cls.lookup("forward") if isinstance(cls, ClassValue) else None
    if not isinstance(cls, ClassValue) or cls.kind != KIND or not isinstance(forward, FunctionValue):
        py.havoc(call)
        return UNKNOWN
    state = call.state
    ctx_ref = ObjectRef(call.new_id(1), "function_ctx", None)
    state.new_object(ctx_ref, {})
    saved_mode = state.no_grad
    # Inside `forward` grad is off: nothing it computes records a graph of its own.
    value, _ = call.walker.invoke(replace(forward, no_grad=True), [ctx_ref, *call.args], call.kwargs, state,
                                  call.frame, call.ctx, call.node, starred=call.starred, salt=call.salt)
    state.no_grad = saved_mode
    inputs = [state.fresh(a) for a in (*call.args, *call.kwargs.values())]
    # What forward handed to `ctx.save_for_backward`: the backward needs them.
    kept = state.attrs(ctx_ref).get("saved")
    kept = {v.tid for v in kept.items if isinstance(v, TensorFacts)} if isinstance(kept, TupleValue) else None
    grad_fn = f"{cls.name}Backward"
    value = state.fresh(value)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_output(call, inputs, state.fresh(item), grad_fn, index + 2, kept)
                                for index, item in enumerate(value.items)))
    return _output(call, inputs, value, grad_fn, 2, kept)


def _output(call: Call, inputs: list, out, grad_fn: str, part: int, kept: set | None):
    """One output of the Function. `kept`: the tensors forward saved for backward
    (None when unknown): when they are among its inputs or this output, the output's
    graph node holds them, and an in-place change of one breaks the backward."""
    if out is NONE or (not isinstance(out, TensorFacts) and out is not UNKNOWN):
        return out                       # None, a number or an object: passed through as it is
    shape = out.shape if isinstance(out, TensorFacts) else None
    dtype = out.dtype if isinstance(out, TensorFacts) else None
    tensors = [t for t in inputs if isinstance(t, TensorFacts)]
    saved_inputs = [t for t in tensors if kept and t.tid in kept]
    saves_output = bool(kept) and isinstance(out, TensorFacts) and out.tid in kept
    result = t_ops.derived(call, "custom_function", inputs, shape, dtype,
                           saves=bool(saved_inputs) or saves_output, saved=saved_inputs,
                           grad_fn=grad_fn, part=part)
    if saves_output and isinstance(result, TensorFacts):
        before = frozenset().union(*(t.saved_nodes for t in tensors))
        new = result.saved_nodes - before
        if new:
            result = replace(result, saved_by=result.saved_by | new)
            call.state.update_tensor(result)
    return result


@method("function_ctx", "save_for_backward")
def _save_for_backward(call: Call):
    call.state.set_attr(call.receiver, "saved", TupleValue(tuple(call.state.fresh(a) for a in call.args))
                        if not call.starred else UNKNOWN)
    return NONE


@method("function_ctx", "save_for_forward", "mark_dirty", "mark_non_differentiable",
        "set_materialize_grads")
def _bookkeeping(call: Call):
    return NONE
