"""torch.nn: layers, containers, losses, parameters, module methods and the
functional API.

A module is an object in the heap whose attributes mirror torch's: a layer's
`weight` and `bias` are parameter tensors (leaves that require grad, with the
shapes its constructor gives them), `training` and `inplace` are flags, a
container keeps its layers in order. Calling a layer makes a tensor that
requires grad when a trainable parameter or the input does, whose graph
reaches those parameters (so a backward fills their `.grad`) and saves the
input when the layer needs it for its backward.
"""
from __future__ import annotations

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import (NONE, UNKNOWN, ClassValue, ModuleChoice, NoneValue, NumberValue,
                            ObjectRef, StrValue, TensorFacts, TorchName, TupleValue, Unknown, dtype_kind, replace)
from autograd_lsp.analysis.semantics import PREFIXES, Call, function, method, shapes, truth
from autograd_lsp.analysis.semantics import tensors as t_ops
from autograd_lsp.analysis.trace import InplaceEvent

_LOSSES = api.NN_LOSSES
_WITH_PARAMS = api.NN_LAYERS_WITH_PARAMS
_WITHOUT_PARAMS = api.NN_LAYERS_WITHOUT_PARAMS
# How many modules `parameters()` walks into before calling the set incomplete.
_MAX_MODULES = 256


# -- making layers ---------------------------------------------------------------------------

def _constructor_values(call: Call, name: str) -> dict:
    """Constructor arguments by parameter name (positional ones mapped through the
    signature measured from torch)."""
    params = api.NN_CONSTRUCTOR_PARAMS.get(name, ())
    values = dict(call.kwargs)
    for index, value in enumerate(call.args):
        if index < len(params):
            values.setdefault(params[index], value)
    return values


# Constructor arguments that change which parameters a layer has, or their shapes,
# beyond what the measured templates assume (their defaults).
_SHAPE_CHANGING = {"groups": 1, "num_layers": 1, "bidirectional": False, "proj_size": 0,
                   "kdim": None, "vdim": None}
# A layer with more parameters than this is given one that stands for them all.
_MAX_PARAMS = 12


def _dim_from(values: dict, spec):
    """One dimension of a parameter's shape from the constructor's values: an
    argument, an item of a tuple argument, a multiple of an argument, a constant."""
    if isinstance(spec, int):
        return spec
    if spec is None:
        return None
    if spec[0] == "*":
        _, factor, name = spec
        inner = _dim_from(values, name)
        return factor * inner if isinstance(inner, int) else None
    name, index = (spec, None) if isinstance(spec, str) else spec
    value = values.get(name)
    if isinstance(value, NumberValue) and value.kind == "int":
        return value.value
    if isinstance(value, TupleValue) and index is not None and index < len(value.items):
        item = value.items[index]
        return item.value if isinstance(item, NumberValue) else None
    return None


def make_layer(call: Call):
    """`nn.Linear(3, 4)`, `nn.ReLU(inplace=True)`, `nn.MSELoss(reduction="none")`..."""
    name = call.qualname.rsplit(".", 1)[-1]
    if name in ("Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"):
        return make_container(call, name)
    if name == "Module":
        return new_module(call, "torch.nn.Module", {})
    if name not in _WITH_PARAMS and name not in _WITHOUT_PARAMS and name not in _LOSSES:
        return UNKNOWN
    values = _constructor_values(call, name)
    attrs = {}
    if name in _LOSSES:
        reduction = call.text(None, "reduction", api.NN_LOSS_REDUCTION.get(name))
        if "reduction" in call.kwargs and reduction is None:
            reduction = "unknown"
        attrs["reduction"] = StrValue(legacy_reduction(call, reduction) or "unknown")
    if name in api.NN_INPLACE_CAPABLE:
        flag = truth(values.get("inplace", NumberValue("bool", False)))
        attrs["inplace"] = NumberValue("bool", flag)
    for key in ("batch_first", "bidirectional", "num_layers", "hidden_size", "out_features",
                "embedding_dim", "out_channels", "in_features", "start_dim", "end_dim",
                "kernel_size", "stride", "padding", "dilation", "output_padding", "output_size",
                "ceil_mode", "return_indices"):
        if key in values:
            attrs[key] = values[key]
    templates = api.NN_PARAM_SHAPES.get(name)
    has_bias = truth(values.get("bias", NumberValue("bool", True)))
    if name in _WITH_PARAMS:
        dtype = call.walker.float_dtype()
        if templates is None or len(templates) > _MAX_PARAMS:
            # Parameters whose names and shapes are not tabled: one that stands for all.
            templates = {"weight": None}
        exact = not any(key in values and not _is_default(values[key], default)
                        for key, default in _SHAPE_CHANGING.items())
        for index, (param, dims) in enumerate(sorted(templates.items())):
            if param.startswith("bias") and has_bias is False:
                if param == "bias":
                    attrs[param] = NONE
                continue
            shape = tuple(_dim_from(values, d) for d in dims) if dims is not None and exact else None
            attrs[param] = t_ops.new_tensor(call, True, True, dtype=dtype, shape=shape,
                                            device="cpu", ignore_no_grad=True, part=10 + index,
                                            is_param=True)
    return new_module(call, f"torch.nn.{name}", attrs)


def _is_default(value, default) -> bool:
    if default is None:
        return value is NONE
    return isinstance(value, NumberValue) and value.value == default


def new_module(call: Call, cls, attrs: dict) -> ObjectRef:
    ref = ObjectRef(call.new_id(), "module", cls)
    call.state.new_object(ref, {"training": NumberValue("bool", True), **attrs})
    return ref


def make_container(call: Call, name: str):
    from autograd_lsp.analysis.semantics import containers
    from autograd_lsp.analysis.semantics.builtins import iterate
    state = call.state
    if name in ("Sequential", "ModuleList", "ParameterList"):
        items = list(call.args)
        names = None
        if name != "Sequential" and items:
            inner = iterate(call, items[0])
            items = inner.elements
        elif name == "Sequential" and len(items) == 1 and isinstance(items[0], ObjectRef) \
                and items[0].kind == "dict":
            entries = containers.entries_of(state, items[0])
            items = list(entries.values()) if entries is not None else None
            names = tuple(str(k) for k in entries) if entries is not None else None
        if call.starred:
            items = None
        attrs = {"_items": tuple(state.fresh(i) for i in items) if items is not None else None}
        if names is not None and items is not None:
            attrs["_item_names"] = names
        return new_module(call, f"torch.nn.{name}", attrs)
    entries = containers.entries_of(state, call.args[0]) if call.args and isinstance(
        call.args[0], ObjectRef) else ({} if not call.args else None)
    return new_module(call, f"torch.nn.{name}", {"_entries": entries})


def _layer_family(qualname: str):
    rest = qualname[len("torch.nn."):]
    if "." in rest:
        return None
    if rest in _WITH_PARAMS or rest in _WITHOUT_PARAMS or rest in _LOSSES or rest in api.NN_CONTAINERS \
            or rest == "Module":
        return make_layer
    return None


PREFIXES.append(("torch.nn.", _layer_family))


@function("torch.func.functional_call", "torch.nn.utils.stateless.functional_call")
def _functional_call(call: Call):
    """`functional_call(model, params, args)`: the model's forward with the tensors of
    `params` in place of its parameters of the same names (MAML's fast weights). The
    output has the forward's shape; its graph goes to the given tensors and inputs,
    and to the module's own parameters unless every one of them is replaced."""
    from autograd_lsp.analysis.semantics import containers
    state = call.state
    module = state.fresh(call.arg(0, "module"))
    given = state.fresh(call.arg(1, "parameter_and_buffer_dicts"))
    args = state.fresh(call.arg(2, "args"))
    if not isinstance(module, ObjectRef) or module.kind != "module" or call.given(3, "kwargs"):
        return UNKNOWN
    if not isinstance(given, ObjectRef) or given.kind != "dict":
        return UNKNOWN
    entries = containers.entries_of(state, given)
    named = named_parameters_of(state, module)
    if entries is None:
        # Keys not known (a dict comprehension over the parameters): what its values
        # stand for, and no claim about which parameters of the module remain.
        entries, named = {None: containers.item_of(state, given)}, []
    elif named is None:
        return UNKNOWN
    inputs = list(args.items) if isinstance(args, TupleValue) else [args]
    inner = Call(call.node, inputs, {}, state, call.ctx, call.walker, call.frame,
                 salt=call.salt + ("functional_call",))
    result, _ = call.walker.call_module(module, inner)
    result = state.fresh(result)
    if not isinstance(result, TensorFacts):
        return UNKNOWN
    kept = [p for name, p in named if name not in entries]
    return t_ops.derived(call, "functional_call", [*entries.values(), *kept, *inputs],
                         shape=result.shape, dtype=result.dtype, saves=True)


@function("torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
          "torch.nn.parallel.data_parallel.DataParallel", "torch.nn.parallel.DistributedDataParallel",
          "torch.nn.parallel.distributed.DistributedDataParallel")
def _data_parallel(call: Call):
    """`nn.DataParallel(model)`: a call of it runs the model's forward (on each device,
    on a slice of the batch, gathered along the first dimension as one forward would
    give it); its parameters, its train and eval modes are the model's. It stands for
    the model here, so `.module` is not known, unless the model has a `module` of
    its own: then the wrapper is not modelled (`.module` would be that)."""
    module = call.state.fresh(call.arg(0, "module"))
    if isinstance(module, ObjectRef) and module.kind == "module" \
            and "module" not in call.state.attrs(module):
        return module
    return UNKNOWN


@function("torch.nn.TransformerEncoder", "torch.nn.modules.transformer.TransformerEncoder",
          "torch.nn.TransformerDecoder", "torch.nn.modules.transformer.TransformerDecoder")
def _transformer_stack(call: Call):
    """`nn.TransformerEncoder(layer, num_layers, norm=None)`: `num_layers` deep copies
    of the layer (parameters of their own), run one after the other on the input,
    then the norm; its `layers` is their ModuleList. (A decoder's layers take the
    memory too: its output is that of a module whose forward is not known.)"""
    from autograd_lsp.analysis.semantics.external import deep_copy
    state = call.state
    layer = state.fresh(call.arg(0, "encoder_layer" if "Encoder" in call.qualname else "decoder_layer"))
    count = call.number(1, "num_layers")
    norm = state.fresh(call.arg(2, "norm")) if call.given(2, "norm") else NONE
    name = "TransformerEncoder" if "Encoder" in call.qualname else "TransformerDecoder"
    if not isinstance(layer, ObjectRef) or layer.kind != "module" or not isinstance(count, int) \
            or not 0 < count <= 16:
        return new_module(call, f"torch.nn.{name}", {"_opaque": True})
    copies = []
    for index in range(count):
        inner = Call(call.node, [], {}, state, call.ctx, call.walker, call.frame, salt=call.salt + (("layer", index),))
        copies.append(deep_copy(inner, layer, {}))
    items = tuple(copies) + ((norm,) if isinstance(norm, ObjectRef) else ())
    layers = new_module(Call(call.node, [], {}, state, call.ctx, call.walker, call.frame, salt=call.salt + ("layers",)),
                        "torch.nn.ModuleList", {"_items": tuple(copies)})
    return new_module(call, f"torch.nn.{name}", {"_items": items, "layers": layers, "norm": norm,
                                                 "num_layers": NumberValue("int", count)})


# Options of `checkpoint` itself, not arguments of the function it runs.
_CHECKPOINT_OPTIONS = frozenset({"use_reentrant", "preserve_rng_state", "context_fn", "determinism_check",
                                 "debug"})


@function("torch.utils.checkpoint.checkpoint")
def _checkpoint(call: Call):
    """`checkpoint(fn, *args, use_reentrant=...)`: what `fn(*args)` gives. With
    use_reentrant=True its output requires grad only when a tensor input does: the
    parameters inside do not count (LoRA blocks after a frozen embedding get no
    graph at all)."""
    state = call.state
    if not call.args or call.starred:
        return UNKNOWN
    kwargs = {k: v for k, v in call.kwargs.items() if k not in _CHECKPOINT_OPTIONS}
    inner = Call(call.node, list(call.args[1:]), kwargs, state, call.ctx, call.walker, call.frame,
                 salt=call.salt + ("checkpoint",))
    result, _ = call.walker.apply(state.fresh(call.args[0]), inner)
    result = state.fresh(result)
    if call.flag(None, "use_reentrant", None) is True and isinstance(result, TensorFacts) \
            and state.no_grad is False and not kwargs:
        inputs = [state.fresh(v) for v in call.args[1:]]
        if inputs and all(isinstance(t, TensorFacts) and t.requires_grad is False for t in inputs):
            return t_ops.new_tensor(call, False, True, dtype=result.dtype, shape=result.shape,
                                    reason="checkpoint", device=result.device, part=1)
    return result


@function("torch.optim.swa_utils.AveragedModel")
def _averaged_model(call: Call):
    """`AveragedModel(model)`, the EMA or SWA copy: a deep copy of the model, whose
    parameters are leaves of their own that require grad (an evaluation of it records
    a graph); a call of it runs the copy's forward. It stands for the copy, so
    `.module` is not known (as for DataParallel)."""
    from autograd_lsp.analysis.semantics.external import deep_copy
    module = call.state.fresh(call.arg(0, "model"))
    if isinstance(module, ObjectRef) and module.kind == "module" \
            and "module" not in call.state.attrs(module):
        return deep_copy(call, module, {})
    return UNKNOWN


@method("module", "update_parameters")
def _update_parameters(call: Call):
    """`ema.update_parameters(model)`: the average's values change in place under
    no_grad; nothing autograd knows of either model changes."""
    return NONE


@function("torch.nn.Embedding.from_pretrained", "torch.nn.EmbeddingBag.from_pretrained")
def _embedding_from_pretrained(call: Call):
    """`nn.Embedding.from_pretrained(vectors, freeze=True)`: a layer whose weight is a
    new leaf parameter with the vectors' shape, trainable only when not frozen."""
    vectors = call.state.fresh(call.arg(0, "embeddings"))
    freeze = call.flag(1, "freeze", True)
    known = isinstance(vectors, TensorFacts)
    shape = vectors.shape if known else None
    weight = t_ops.new_tensor(call, None if freeze is None else not freeze, True,
                              dtype=vectors.dtype if known else None, shape=shape, device="cpu",
                              ignore_no_grad=True, part=10, is_param=True)
    attrs = {"weight": weight}
    if shape is not None and len(shape) == 2 and isinstance(shape[1], int):
        attrs["embedding_dim"] = NumberValue("int", shape[1])
    name = call.qualname.rsplit(".", 2)[-2]
    return new_module(call, f"torch.nn.{name}", attrs)


@function("torch.nn.Parameter", "torch.nn.parameter.Parameter")
def _parameter(call: Call):
    base = call.arg(0, "data")
    flag = call.flag(1, "requires_grad", True)
    dtype = base.dtype if isinstance(base, TensorFacts) else None
    if flag and dtype is not None and dtype_kind(dtype) not in ("float", "complex"):
        # torch raises here; what follows does not run.
        flag = None
    return t_ops.new_tensor(call, requires_grad=flag, is_leaf=True, dtype=dtype,
                            shape=base.shape if isinstance(base, TensorFacts) else None,
                            device=base.device if isinstance(base, TensorFacts) else None,
                            reason="never" if flag is False else None, ignore_no_grad=True,
                            is_param=True)


# -- parameters --------------------------------------------------------------------------------

def parameters_of(state, ref, seen: set | None = None):
    """(the parameter tensors of a module or an optimizer, whether that list is known
    to be complete)."""
    if not isinstance(ref, ObjectRef):
        return [], False
    if ref.kind == "optimizer":
        attrs = state.attrs(ref)
        tids = attrs.get("params") or frozenset()
        found = [t for t in (_tensor(state, tid) for tid in tids) if t is not None]
        return found, bool(attrs.get("complete"))
    if ref.kind != "module":
        return [], False
    seen = seen if seen is not None else set()
    found: list = []
    complete = True
    stack = [ref]
    while stack:
        current = stack.pop()
        if current.oid in seen:
            continue
        seen.add(current.oid)
        if len(seen) > _MAX_MODULES:
            return found, False
        attrs = state.attrs(current)
        if isinstance(current.cls, ClassValue) and current.cls.has_unknown_base() \
                and current.cls.kind == "module":
            complete = False
        if attrs.get("_opaque"):
            complete = False
        for key, value in attrs.items():
            value = state.fresh(value)
            if key.startswith("_buffer_"):
                continue
            if isinstance(value, TensorFacts):
                if value.is_param:
                    found.append(value)
            elif isinstance(value, ObjectRef):
                if value.kind == "module":
                    stack.append(value)
                elif value.kind in ("list", "dict"):
                    sub = _modules_in_container(state, value)
                    if sub is None:
                        complete = False
                    else:
                        stack.extend(sub)
            elif isinstance(value, TupleValue):
                for item in value.items:
                    if isinstance(item, ObjectRef) and item.kind == "module":
                        stack.append(item)
            elif key == "_items":
                if value is None:
                    complete = False
            elif isinstance(value, Unknown) and not key.startswith("_"):
                complete = False
        for item in attrs.get("_items") or ():
            item = state.fresh(item)
            if isinstance(item, ObjectRef) and item.kind == "module":
                stack.append(item)
            elif isinstance(item, TensorFacts) and item.is_param:
                found.append(item)
        entries = attrs.get("_entries")
        if entries is None and "_entries" in attrs:
            complete = False
        for item in (entries or {}).values():
            item = state.fresh(item)
            if isinstance(item, ObjectRef) and item.kind == "module":
                stack.append(item)
    unique = {}
    for p in found:
        unique.setdefault(p.tid, p)
    return list(unique.values()), complete


def _modules_in_container(state, ref):
    from autograd_lsp.analysis.semantics import containers
    items = containers.known_items(state, ref) if ref.kind == "list" else (
        list((containers.entries_of(state, ref) or {}).values()) if containers.entries_of(state, ref)
        is not None else None)
    if items is None:
        item = containers.item_of(state, ref)
        return None if isinstance(item, ObjectRef) and item.kind == "module" else []
    return [state.fresh(i) for i in items if isinstance(state.fresh(i), ObjectRef)
            and state.fresh(i).kind == "module"]


def _tensor(state, tid):
    return state.tensor(tid)


def submodules(state, ref: ObjectRef, include_self: bool = True) -> list:
    out, seen, stack = [], set(), [ref]
    while stack:
        current = stack.pop(0)
        if current.oid in seen:
            continue
        seen.add(current.oid)
        out.append(current)
        attrs = state.attrs(current)
        children = [v for k, v in attrs.items() if isinstance(state.fresh(v), ObjectRef)
                    and state.fresh(v).kind == "module"]
        children += [i for i in (attrs.get("_items") or ()) if isinstance(i, ObjectRef)]
        children += [i for i in (attrs.get("_entries") or {}).values() if isinstance(i, ObjectRef)]
        for value in attrs.values():
            value = state.fresh(value)
            if isinstance(value, ObjectRef) and value.kind in ("list", "dict"):
                children += _modules_in_container(state, value) or []
        stack.extend(state.fresh(c) for c in children)
    return out if include_self else out[1:]


def set_params(call: Call, params: list, **changes) -> None:
    for p in params:
        call.state.update_tensor(replace(call.state.fresh(p), **changes))


# -- calling modules ---------------------------------------------------------------------------

def has_layer_state(state, ref: ObjectRef, qualname: str) -> bool:
    """Whether `ref` (an instance of a subclass of the layer `qualname`) holds what the
    layer's forward reads: its items for a Sequential, its parameters for a layer
    that has some. Without them its output is not known."""
    name = qualname.rsplit(".", 1)[-1]
    if not qualname.startswith("torch.nn.") or name == "Module":
        return False
    attrs = state.attrs(ref)
    if name == "Sequential":
        return True
    if name in _WITH_PARAMS:
        return any(isinstance(v, TensorFacts) and v.is_param for v in attrs.values())
    return name in _WITHOUT_PARAMS or name in _LOSSES


def call_layer(call: Call, ref: ObjectRef):
    """A torch layer (not a subclass written in the analysed code) called on inputs."""
    state = call.state
    name = str(ref.cls).rsplit(".", 1)[-1]
    attrs = state.attrs(ref)
    if attrs.get("_opaque") and "_items" not in attrs:
        return _opaque_output(call, ref)     # its layers are not known (a library's model)
    if name == "TransformerDecoder":
        return _opaque_output(call, ref)      # its layers take the memory too: not followed
    if name in ("Sequential", "TransformerEncoder"):
        # (A TransformerEncoder runs its layers one after the other, like a Sequential.)
        items = attrs.get("_items")
        if items is None:
            return _opaque_output(call, ref)
        value = call.args[0] if call.args else UNKNOWN
        for index, layer in enumerate(items):
            layer = state.fresh(layer)
            inner = Call(call.node, [value], {}, state, call.ctx, call.walker, call.frame,
                         salt=call.salt + (index,))
            if isinstance(layer, ObjectRef):
                value, _ = call.walker.call_module(layer, inner)
            else:
                # A layer the analysis does not know (`nn.Sequential(*blocks)` of a list
                # it lost track of): whatever calling it does.
                value, _ = call.walker.apply(layer, inner)
            value = state.fresh(value)
        return value
    inputs = [state.fresh(v) for v in call.args]
    first = inputs[0] if inputs else call.kwargs.get("input", UNKNOWN)
    if name in _LOSSES:
        return _loss_output(call, name, inputs, attrs)
    if name in _WITHOUT_PARAMS:
        if not isinstance(first, TensorFacts):
            return UNKNOWN
        inplace = attrs.get("inplace")
        if isinstance(inplace, NumberValue) and inplace.value is True and state.no_grad is not True:
            # `ReLU(inplace=True)(x)` overwrites x: a tensor an earlier op saved is lost.
            t_ops.inplace(call, first, call.node.args[0] if call.node is not None and call.node.args
                          else call.node, f"{name}(inplace=True)", None, call.node, hidden=bool(call.salt),
                          layer=ref)
            first = state.fresh(first)
            return _activated(call, name, first)
        if name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout") and \
                truth(attrs.get("training")) is False:
            return first
        shape = output_shape(name, attrs, first.shape)
        return t_ops.derived(call, name.lower(), [first], shape=shape, dtype=first.dtype,
                             saves=_layer_saves(name))
    params = [p for p in (state.fresh(v) for v in attrs.values()) if isinstance(p, TensorFacts) and p.is_param]
    if not isinstance(first, TensorFacts) and not isinstance(first, Unknown):
        return UNKNOWN
    shape = output_shape(name, attrs, first.shape if isinstance(first, TensorFacts) else None)
    dtype = first.dtype if isinstance(first, TensorFacts) and dtype_kind(first.dtype) == "float" else (
        params[0].dtype if params else None)
    operands = [v for v in _flat(inputs) if isinstance(v, (TensorFacts, Unknown))] + params
    # The weights are kept for the input's gradient, the input for the weights'.
    saved = []
    if isinstance(first, TensorFacts):
        if first.requires_grad is True:
            saved += params
        if name in api.NN_LAYERS_SAVING_INPUT and any(p.requires_grad for p in params):
            saved.append(first)
    out = t_ops.derived(call, name.lower(), operands, shape=shape, dtype=dtype,
                        saves=True if params else None, saved=saved)
    if name in api.NN_RETURNS_TUPLE:
        return _rnn_outputs(call, name, attrs, first, out)
    return out


def _flat(values):
    """Tensors given in tuples too (an RNN's `(h, c)` state)."""
    out = []
    for v in values:
        if isinstance(v, TupleValue):
            out.extend(_flat(v.items))
        else:
            out.append(v)
    return out


def _activated(call: Call, name: str, t: TensorFacts):
    grad_fn = {"ReLU": "ReluBackward0", "LeakyReLU": "LeakyReluBackward1"}.get(name)
    if t.requires_grad and call.state.no_grad is not True:
        node = t_ops.graph_node(call)
        new = replace(t, grad_fn=grad_fn or t.grad_fn, is_leaf=False,
                      saved_nodes=t.saved_nodes | {node},
                      saved_by=t.saved_by | ({node} if name in api.NN_ACTIVATIONS_SAVING_OUTPUT else frozenset()))
        call.state.update_tensor(new)
        return new
    return t


def _layer_saves(name: str):
    if name in api.NN_ACTIVATIONS_SAVING_OUTPUT or name in api.NN_ACTIVATIONS_SAVING_INPUT:
        return True
    return None


def _opaque_output(call: Call, ref: ObjectRef):
    """A module whose forward is not known: its output requires grad when it has a
    trainable parameter (grad mode on)."""
    state = call.state
    params, _ = parameters_of(state, ref)
    inputs = [state.fresh(v) for v in call.args if isinstance(state.fresh(v), TensorFacts)]
    trainable = [p for p in params if p.requires_grad]
    if not trainable and not any(t.requires_grad for t in inputs):
        return UNKNOWN
    out = t_ops.derived(call, "module", inputs + trainable + [UNKNOWN], shape=None, dtype=None,
                        saves=True if trainable else None)
    return out


def _loss_output(call: Call, name: str, inputs: list, attrs: dict):
    reduction = attrs.get("reduction")
    reduction = reduction.value if isinstance(reduction, StrValue) else None
    return loss_value(call, name, inputs, reduction)


def legacy_reduction(call: Call, reduction):
    """The reduction a loss gets from `size_average=` / `reduce=`, the arguments before
    `reduction=` (which they override when given), as torch reads them; None when
    one is not a literal."""
    if "size_average" not in call.kwargs and "reduce" not in call.kwargs:
        return reduction
    size_average, reduce = call.flag(None, "size_average", True), call.flag(None, "reduce", True)
    if size_average is None or reduce is None:
        return None
    return "none" if not reduce else "mean" if size_average else "sum"


def loss_value(call: Call, name: str, inputs: list, reduction):
    tensors = [v for v in inputs if isinstance(v, TensorFacts)]
    first = inputs[0] if inputs else UNKNOWN
    if reduction in ("mean", "sum", "batchmean") and not tensors:
        # Reduced, the loss is 0-dim whatever its inputs; whether it requires grad
        # (what the inputs are) is not known.
        return t_ops.new_tensor(call, None, None, shape=())
    if reduction in ("mean", "sum", "batchmean"):
        shape = ()
    elif reduction == "none" and isinstance(first, TensorFacts):
        shape = _unreduced_loss_shape(name, first, inputs[1] if len(inputs) > 1 else None)
    else:
        shape = None
    dtypes = {t.dtype for t in tensors if dtype_kind(t.dtype) == "float"}
    dtype = dtypes.pop() if len(dtypes) == 1 else None
    return t_ops.derived(call, name, list(inputs), shape=shape, dtype=dtype, saves=True,
                         grad_fn=api.grad_fn_name(name))


def _unreduced_loss_shape(name: str, first: TensorFacts, target):
    kind = api.LOSS_UNREDUCED_SHAPE.get(name)
    if kind == "input":
        # (A target of unknown shape broadcasts to a shape not known either.)
        other = target.shape if isinstance(target, TensorFacts) else first.shape
        return shapes.broadcast(first.shape, other)
    if kind == "drop_class_dim" and first.shape is not None and len(first.shape) >= 2:
        return (first.shape[0],) + first.shape[2:]
    return None


def output_shape(name: str, attrs: dict, shape):
    """The output shape of a torch layer for an input shape, where it is known."""
    if shape is None:
        return None
    if name in api.NN_SHAPE_PRESERVING:
        return shape
    value = lambda key: attrs.get(key).value if isinstance(attrs.get(key), NumberValue) else None
    if name in ("Linear", "LazyLinear"):
        out = value("out_features")
        return shape[:-1] + (out,) if shape else None
    if name in ("LSTMCell", "GRUCell", "RNNCell"):
        # (N, input_size) -> (N, hidden_size); unbatched (input_size,) -> (hidden_size,)
        return shape[:-1] + (value("hidden_size"),) if shape and len(shape) <= 2 else None
    if name in ("Embedding",):
        return shape + (value("embedding_dim"),)
    if name == "EmbeddingBag":
        return (shape[0], value("embedding_dim")) if len(shape) == 2 else None
    if name in ("Conv1d", "Conv2d", "Conv3d") and len(shape) >= 3:
        spatial = len(shape) - 2
        return (shape[0], value("out_channels")) + tuple(
            _conv_size(shape[2 + i], i, spatial, attrs) for i in range(spatial))
    spatial = _POOLS.get(name) or _TRANSPOSED.get(name)
    if spatial and len(shape) >= spatial + 1 and not truth(attrs.get("ceil_mode")) \
            and not truth(attrs.get("return_indices")):
        keep = shape[:-spatial]
        if name in _TRANSPOSED:
            return (shape[0], value("out_channels")) + tuple(
                _transposed_size(shape[-spatial + i], i, spatial, attrs) for i in range(spatial)) \
                if len(shape) == spatial + 2 else None
        # Pooling: the convolution's formula, with the stride the kernel size unless given.
        settings = dict(attrs)
        if settings.get("stride") is None or isinstance(settings.get("stride"), NoneValue):
            settings["stride"] = attrs.get("kernel_size")
        return keep + tuple(_conv_size(shape[-spatial + i], i, spatial, settings) for i in range(spatial))
    spatial = _ADAPTIVE.get(name)
    if spatial and len(shape) >= spatial + 1 and not truth(attrs.get("return_indices")):
        sizes = _per_dim(attrs.get("output_size"), spatial)
        if sizes is None:
            return None
        return shape[:-spatial] + tuple(shape[-spatial + i] if isinstance(size, NoneValue)
                                        else size.value if isinstance(size, NumberValue) else None
                                        for i, size in enumerate(sizes))
    if name == "Flatten":
        start, end = value("start_dim"), value("end_dim")
        return shapes.flatten(shape, 1 if start is None else start, -1 if end is None else end)
    return None


# functional pooling -> (the layer whose shape it has, its arguments after the input)
_FUNCTIONAL_POOLS = {
    "max_pool2d": ("MaxPool2d", ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")),
    "avg_pool2d": ("AvgPool2d", ("kernel_size", "stride", "padding", "ceil_mode")),
    "adaptive_avg_pool2d": ("AdaptiveAvgPool2d", ("output_size",)),
}
_POOLS = {"MaxPool1d": 1, "MaxPool2d": 2, "MaxPool3d": 3, "AvgPool1d": 1, "AvgPool2d": 2, "AvgPool3d": 3}
_ADAPTIVE = {"AdaptiveAvgPool1d": 1, "AdaptiveAvgPool2d": 2, "AdaptiveAvgPool3d": 3,
             "AdaptiveMaxPool1d": 1, "AdaptiveMaxPool2d": 2, "AdaptiveMaxPool3d": 3}
_TRANSPOSED = {"ConvTranspose1d": 1, "ConvTranspose2d": 2, "ConvTranspose3d": 3}


def _per_dim(value, spatial: int):
    """An int or a tuple of sizes (None: keep the input's) as one value per dim."""
    if isinstance(value, TupleValue):
        return value.items if len(value.items) == spatial else None
    if isinstance(value, NumberValue) and type(value.value) is int:
        return (value,) * spatial
    return None


def _transposed_size(size, index: int, spatial: int, attrs: dict):
    """One spatial size of a transposed convolution's output (torch's formula)."""
    def setting(key, default):
        value = attrs.get(key)
        if value is None:
            return default
        items = _per_dim(value, spatial)
        value = items[index] if items is not None else None
        return value.value if isinstance(value, NumberValue) and type(value.value) is int else None

    kernel, stride = setting("kernel_size", None), setting("stride", 1)
    padding, dilation = setting("padding", 0), setting("dilation", 1)
    extra = setting("output_padding", 0)
    if not all(isinstance(v, int) for v in (size, kernel, stride, padding, dilation, extra)):
        return None
    out = (size - 1) * stride - 2 * padding + dilation * (kernel - 1) + extra + 1
    return out if out > 0 else None


def _conv_size(size, index: int, spatial: int, attrs: dict):
    """One spatial size of a convolution's output (torch's formula), where known."""
    def setting(key, default):
        value = attrs.get(key)
        if value is None:
            return default
        if isinstance(value, TupleValue):
            value = value.items[index] if len(value.items) == spatial else None
        if isinstance(value, StrValue):
            return value.value
        return value.value if isinstance(value, NumberValue) and type(value.value) is int else None

    kernel, stride = setting("kernel_size", None), setting("stride", 1)
    padding, dilation = setting("padding", 0), setting("dilation", 1)
    if padding == "same":
        return size
    if padding == "valid":
        padding = 0
    if not all(isinstance(v, int) for v in (size, kernel, stride, padding, dilation)) or stride < 1:
        return None
    out = (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1
    return out if out > 0 else None


def _rnn_outputs(call: Call, name: str, attrs: dict, first, out):
    """`out, h = rnn(x)` / `out, (h, c) = lstm(x)`: for a batched input, `out` is
    (L, N, D*H) or (N, L, D*H) with batch_first, each state (num_layers*D, N, H)."""
    state_shape = None
    if name in ("LSTM", "GRU", "RNN") and isinstance(out, TensorFacts):
        def number(key, default):
            value = attrs.get(key, NumberValue("int", default))
            return value.value if isinstance(value, NumberValue) else None
        size, layers = number("hidden_size", None), number("num_layers", 1)
        directions = {True: 2, False: 1}.get(truth(attrs.get("bidirectional", NumberValue("bool", False))))
        batch_first = truth(attrs.get("batch_first", NumberValue("bool", False)))
        if isinstance(first, TensorFacts) and first.shape is not None and len(first.shape) == 3 \
                and None not in (size, layers, directions, batch_first) and not number("proj_size", 0):
            out = replace(out, shape=first.shape[:2] + (directions * size,))
            state_shape = (layers * directions, first.shape[0 if batch_first else 1], size)
    if name in ("LSTM",):
        state_pair = TupleValue((replace(out, shape=state_shape, tid=("h", out.tid)) if isinstance(out, TensorFacts) else out,
                                 replace(out, shape=state_shape, tid=("c", out.tid)) if isinstance(out, TensorFacts) else out))
        return TupleValue((out, state_pair))
    if name == "MultiheadAttention" and isinstance(out, TensorFacts) and isinstance(first, TensorFacts) \
            and first.shape is not None and len(first.shape) in (2, 3):
        # The attention output has the query's shape, (L, E) or (N, L, E) / (L, N, E);
        # the weights' shape depends on the keys and on need_weights: not given.
        projection = call.state.fresh(attrs.get("out_proj.weight"))       # (E, E)
        embed = projection.shape[0] if isinstance(projection, TensorFacts) and projection.shape else None
        if isinstance(embed, int) and embed == first.shape[-1]:
            out = replace(out, shape=first.shape)
    if name in ("GRU", "RNN", "MultiheadAttention"):
        second = replace(out, shape=state_shape, tid=("h", out.tid)) if isinstance(out, TensorFacts) else out
        return TupleValue((out, second))
    if name == "LSTMCell":
        # `h, c = cell(x, (h, c))`: the next hidden and cell states, each of the output's shape
        second = replace(out, tid=("c", out.tid)) if isinstance(out, TensorFacts) else out
        return TupleValue((out, second))
    return out


# -- module methods ---------------------------------------------------------------------------------

@method("module", "parameters")
def _parameters(call: Call):
    from autograd_lsp.analysis.semantics import containers
    params, complete = parameters_of(call.state, call.receiver)
    ref = containers.new_list(call, params if complete else None,
                              item=None if complete else _param_summary(params), nonempty=True)
    call.state.set_attr(ref, "_params_of", call.receiver)
    if not complete:
        call.state.set_attr(ref, "_params", tuple(params))
    return ref


def _param_summary(params):
    from autograd_lsp.analysis.facts import join
    out = UNKNOWN
    for i, p in enumerate(params):
        out = p if i == 0 else join(out, p)
    return out if params else UNKNOWN


@method("module", "named_parameters")
def _named_parameters(call: Call):
    from autograd_lsp.analysis.semantics import containers
    params, complete = parameters_of(call.state, call.receiver)
    named = named_parameters_of(call.state, call.receiver) if complete else None
    if named is not None and len(named) == len(params) \
            and {t.tid for _, t in named} == {p.tid for p in params}:
        return containers.new_list(call, [TupleValue((StrValue(n), p)) for n, p in named])
    pairs = [TupleValue((StrValue(), p)) for p in params]
    if complete:
        return containers.new_list(call, pairs)
    return containers.new_list(call, None, item=TupleValue((StrValue(), _param_summary(params))))


@method("module", "children", "modules", "named_children", "named_modules")
def _children(call: Call):
    from autograd_lsp.analysis.semantics import containers
    state = call.state
    if call.method in ("children", "named_children"):
        named = named_children(state, call.receiver)
        if named is None:
            return containers.new_list(call, None)
        if call.method == "children":
            return containers.new_list(call, [m for _, m in named])
        return containers.new_list(call, [TupleValue((StrValue(n), m)) for n, m in named])
    if call.method == "named_modules":
        # By their dotted names when every child is known (`dict(model.named_modules())
        # ["layer2"]`, where Grad-CAM hangs its hooks).
        named = named_modules_of(state, call.receiver)
        if named is not None and len(named) <= 64:
            return containers.new_list(call, [TupleValue((StrValue(n), m)) for n, m in named])
    mods = submodules(state, call.receiver)
    if len(mods) > 64:
        return containers.new_list(call, None)
    if call.method == "named_modules":
        mods = [TupleValue((StrValue(), m)) for m in mods]
    return containers.new_list(call, mods)


def named_modules_of(state, ref: ObjectRef) -> list | None:
    """(dotted name, module) as `named_modules()` yields them: the module itself as
    "", then each child before its own children, each once; None when a child is
    not known."""
    out: list = []
    seen: set = set()

    def visit(module: ObjectRef, name: str) -> bool:
        if module.oid in seen:
            return True
        seen.add(module.oid)
        out.append((name, module))
        children = named_children(state, module)
        if children is None:
            return False
        return all(visit(child, f"{name}.{child_name}" if name else child_name)
                   for child_name, child in children if child.kind == "module")

    return out if visit(ref, "") else None


def named_parameters_of(state, ref: ObjectRef) -> list | None:
    """(name, parameter) as `named_parameters()` yields them ("backbone.0.weight"): a
    module's own parameters, then its children's, each once; None when a child is not
    known."""
    out: list = []
    seen_modules: set = set()
    seen_params: set = set()

    def visit(module: ObjectRef, prefix: str) -> bool:
        if module.oid in seen_modules:
            return True
        seen_modules.add(module.oid)
        attrs = state.attrs(module)
        own = [(k, state.fresh(v)) for k, v in attrs.items() if not k.startswith("_")]
        own += [(n, state.fresh(v)) for n, v in zip(_item_names(attrs), attrs.get("_items") or ())]
        for name, value in own:
            if isinstance(value, TensorFacts) and value.is_param and value.tid not in seen_params:
                seen_params.add(value.tid)
                out.append((prefix + name, value))
        children = named_children(state, module)
        if children is None:
            return False
        return all(visit(child, f"{prefix}{name}.") for name, child in children
                   if child.kind == "module")

    return out if visit(ref, "") else None


def named_children(state, ref: ObjectRef):
    """(name, module) of a module's direct children, as torch names them; None when
    they are not all known."""
    attrs = state.attrs(ref)
    if "_items" in attrs:
        items = attrs["_items"]
        if items is None:
            return None
        return [(n, state.fresh(m)) for n, m in zip(_item_names(attrs), items)
                if isinstance(state.fresh(m), ObjectRef)]
    if attrs.get("_entries") is not None:
        return [(k, state.fresh(m)) for k, m in attrs["_entries"].items() if isinstance(state.fresh(m), ObjectRef)]
    if attrs.get("_opaque"):
        return None
    return [(k, state.fresh(v)) for k, v in attrs.items()
            if isinstance(state.fresh(v), ObjectRef) and state.fresh(v).kind == "module"]


def child_name(index) -> str | None:
    """The name a child has under `module[index]` (`"6"` for `seq[6]`), None when
    the index is not known."""
    if isinstance(index, NumberValue) and isinstance(index.value, int) and not isinstance(index.value, bool) \
            and index.value >= 0:
        return str(index.value)
    if isinstance(index, StrValue) and index.value is not None:
        return index.value
    return None


def forward_hooks(state, ref: ObjectRef) -> tuple:
    """The forward hooks registered on a module; none known when a branch registered
    one on one path only."""
    hooks = state.attrs(ref).get("_forward_hooks")
    return hooks if isinstance(hooks, tuple) else ()


def set_child(state, ref: ObjectRef, name, value) -> None:
    """`setattr(module, name, child)`: a container's numbered child, or an attribute;
    a name that is not known leaves the module's structure unknown."""
    attrs = state.attrs(ref)
    if not isinstance(name, str):
        state.set_attrs(ref, {"_items": None, "_opaque": True} if "_items" in attrs else {"_opaque": True})
        return
    items = attrs.get("_items")
    names = _item_names(attrs)
    if items is not None and name in names:
        items = list(items)
        items[names.index(name)] = value
        state.set_attr(ref, "_items", tuple(items))
        return
    if items is not None and isinstance(value, ObjectRef) and value.kind == "module":
        # A container's forward runs every child it holds, in the order they were
        # added: `nn.Sequential()` then `add_module("fc", nn.Linear(...))`.
        state.set_attrs(ref, {"_items": items + (value,), "_item_names": tuple(names) + (name,)})
    state.set_attr(ref, name, value)


def _item_names(attrs: dict) -> list:
    """The names of a container's children, as torch names them: their positions,
    unless `add_module` named them."""
    items = attrs.get("_items") or ()
    names = attrs.get("_item_names")
    if names is None or len(names) != len(items):
        return [str(i) for i in range(len(items))]
    return list(names)


@method("module", "train", "eval")
def _train(call: Call):
    flag = call.flag(0, "mode", True) if call.method == "train" else False
    for module in submodules(call.state, call.receiver):
        call.state.set_attr(module, "training", NumberValue("bool", flag))
    return call.receiver


@method("module", "requires_grad_")
def _module_requires_grad(call: Call):
    flag = call.flag(0, "requires_grad", True)
    params, _ = parameters_of(call.state, call.receiver)
    for p in params:
        new = t_ops.requires_grad_set(p, flag)
        call.state.update_tensor(new)
    return call.receiver


@method("module", "zero_grad")
def _module_zero_grad(call: Call):
    set_to_none = call.flag(0, "set_to_none", True)
    params, complete = parameters_of(call.state, call.receiver)
    call.extra["cleared"] = frozenset(p.tid for p in params)
    call.extra["complete"] = complete
    clear_grads(call, params, set_to_none)
    return NONE


def clear_grads(call: Call, params, set_to_none) -> None:
    for p in params:
        p = call.state.fresh(p)
        if set_to_none is True:
            grad = "none"
        elif set_to_none is False:
            grad = "none" if p.grad == "none" else "zero"
        else:
            grad = "none" if p.grad == "none" else None
        if p.grad != grad:
            call.state.update_tensor(replace(p, grad=grad, grad_at=call.state.tick()))


@method("module", "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "type", "share_memory")
def _module_to(call: Call):
    dtype = {"double": "float64", "float": "float32", "half": "float16", "bfloat16": "bfloat16"}.get(call.method)
    if call.method == "to":
        for value in (*call.args, *call.kwargs.values()):
            if isinstance(value, TorchName) and value.qualname in api.DTYPES:
                dtype = api.DTYPES[value.qualname]
    if dtype is not None:
        params, _ = parameters_of(call.state, call.receiver)
        set_params(call, params, dtype=dtype)
    return call.receiver


@method("module", "register_buffer")
def _register_buffer(call: Call):
    name = call.arg(0, "name")
    if isinstance(name, StrValue) and name.value:
        call.state.set_attr(call.receiver, name.value, call.arg(1, "tensor"))
    return NONE


@method("module", "register_parameter", "add_module", "register_module")
def _register_parameter(call: Call):
    name = call.arg(0, "name")
    set_child(call.state, call.receiver, name.value if isinstance(name, StrValue) else None, call.arg(1))
    return NONE


@method("module", "apply")
def _apply(call: Call):
    fn = call.arg(0, "fn")
    mods = submodules(call.state, call.receiver)
    if len(mods) <= 32:
        for index, module in enumerate(reversed(mods)):
            inner = Call(call.node, [module], {}, call.state, call.ctx, call.walker, call.frame,
                         salt=call.salt + (index,))
            call.walker.apply(fn, inner)
    return call.receiver


@method("module", "get_submodule", "get_parameter", "get_buffer")
def _get_submodule(call: Call):
    """`model.get_submodule("neck.ats")`: the attribute path, followed."""
    target = call.arg(0, "target")
    if not isinstance(target, StrValue) or target.value is None:
        return UNKNOWN
    value = call.receiver
    for name in target.value.split(".") if target.value else []:
        if not isinstance(value, ObjectRef):
            return UNKNOWN
        attrs = call.state.attrs(value)
        if name.isdigit() and attrs.get("_items") is not None and int(name) < len(attrs["_items"]):
            value = call.state.fresh(attrs["_items"][int(name)])
        elif name in attrs:
            value = call.state.fresh(attrs[name])
        else:
            return UNKNOWN
    return value


@method("module", "state_dict", "load_state_dict", "named_buffers", "buffers", "extra_repr",
        "register_full_backward_hook", "register_forward_pre_hook")
def _module_other(call: Call):
    return UNKNOWN


@method("module", "register_forward_hook")
def _register_forward_hook(call: Call):
    """The hook runs after each forward of the module (`Walker.call_module`), on its
    input and output: activations a hook keeps are the module's outputs."""
    hook = call.arg(0)
    if call.args[1:] or call.kwargs:
        hook = UNKNOWN          # `with_kwargs=True`, `prepend=True`...: not followed
    hooks = forward_hooks(call.state, call.receiver)
    call.state.set_attr(call.receiver, "_forward_hooks", hooks + (hook,))
    # The handle's `remove()` takes this hook off again (Grad-CAM removes its hooks
    # once the maps are drawn).
    handle = ObjectRef(call.new_id(), "hook_handle", "torch.utils.hooks.RemovableHandle")
    return call.state.new_object(handle, {"module": call.receiver, "index": len(hooks)})


@method("hook_handle", "remove")
def _remove_hook(call: Call):
    attrs = call.state.attrs(call.receiver)
    module, index = attrs.get("module"), attrs.get("index")
    if isinstance(module, ObjectRef) and isinstance(index, int):
        hooks = list(forward_hooks(call.state, module))
        if index < len(hooks):
            hooks[index] = NONE          # kept in place: later handles hold their index
            call.state.set_attr(module, "_forward_hooks", tuple(hooks))
    return NONE


@method("module", "append")
def _module_append(call: Call):
    attrs = call.state.attrs(call.receiver)
    items = attrs.get("_items")
    if items is None:
        call.state.set_attr(call.receiver, "_items", None)
    else:
        call.state.set_attrs(call.receiver, {"_items": items + (call.arg(0),),
                                             "_item_names": tuple(_item_names(attrs)) + (str(len(items)),)})
    return call.receiver


@method("module", "extend")
def _module_extend(call: Call):
    call.state.set_attr(call.receiver, "_items", None)
    return call.receiver


def iterate_module(call: Call, ref: ObjectRef):
    from autograd_lsp.analysis.semantics.builtins import Iteration
    from autograd_lsp.analysis.facts import join
    state = call.state
    attrs = state.attrs(ref)
    items = attrs.get("_items")
    if items is not None:
        items = [state.fresh(i) for i in items]
        out = UNKNOWN
        for i, item in enumerate(items):
            out = item if i == 0 else join(out, item)
        return Iteration(items, out, bool(items))
    entries = attrs.get("_entries")
    if entries is not None:
        keys = [StrValue(k) if isinstance(k, str) else UNKNOWN for k in entries]
        return Iteration(keys, StrValue(), bool(keys))
    return Iteration(None, UNKNOWN, None)


# Layers an unknown index may pick that a call runs one path each for.
CHOICE_LIMIT = 16


@method("module", "items", "keys", "values")
def _module_dict_view(call: Call):
    """`heads.items()` of an nn.ModuleDict / ParameterDict whose entries are known."""
    from autograd_lsp.analysis.semantics import containers
    entries = call.state.attrs(call.receiver).get("_entries")
    if not isinstance(entries, dict) or call.args or call.kwargs:
        return UNKNOWN
    if call.method == "keys":
        items = [StrValue(k) if isinstance(k, str) else NumberValue("int", k) for k in entries]
    elif call.method == "values":
        items = [call.state.fresh(v) for v in entries.values()]
    else:
        items = [TupleValue((StrValue(k) if isinstance(k, str) else NumberValue("int", k), call.state.fresh(v)))
                 for k, v in entries.items()]
    return containers.new_list(call, items)


def module_item(state, ref: ObjectRef, index):
    attrs = state.attrs(ref)
    items = attrs.get("_items")
    if items is not None and isinstance(index, NumberValue) and isinstance(index.value, int):
        if -len(items) <= index.value < len(items):
            return state.fresh(items[index.value])
    if items and isinstance(index, NumberValue) and index.kind == "int" and index.value is None \
            and len(items) <= CHOICE_LIMIT:
        layers = []
        for item in items:
            item = state.fresh(item)
            if item not in layers:
                layers.append(item)
        if all(isinstance(layer, ObjectRef) and layer.kind == "module" for layer in layers):
            return layers[0] if len(layers) == 1 else ModuleChoice(tuple(layers))
    entries = attrs.get("_entries")
    if entries is not None and isinstance(index, StrValue) and index.value in entries:
        return state.fresh(entries[index.value])
    return UNKNOWN


def is_instance(value: ObjectRef, qualname: str):
    """isinstance of a module, optimizer... against a torch class."""
    if value.kind == "module":
        if qualname in ("torch.nn.Module", "torch.nn.modules.module.Module"):
            return True
        cls = value.cls
        if isinstance(cls, ClassValue):
            for base in (b for c in cls.mro() for b in c.bases):
                if isinstance(base, TorchName) and base.qualname == qualname:
                    return True
            return None if cls.has_unknown_base() else False
        return cls == qualname
    if value.kind == "optimizer":
        if qualname.startswith("torch.nn."):
            return False      # an optimizer is never a module (`prepare(model, optimizer)` tells them apart)
        return True if qualname in ("torch.optim.Optimizer",) or value.cls == qualname else None
    if value.kind in ("list", "dict", "loader", "dataset", "scheduler", "scaler"):
        return False if qualname.startswith("torch.nn.") else None
    return None


# -- functional --------------------------------------------------------------------------------------

def _functional_loss(call: Call):
    name = call.qualname.rsplit(".", 1)[-1]
    reduction = call.text(None, "reduction", api.FUNCTIONAL_LOSS_REDUCTION.get(name))
    if call.given(None, "reduction") and reduction is None:
        reduction = None
    reduction = legacy_reduction(call, reduction)
    inputs = [call.arg(0, "input"), call.arg(1, "target")]
    return loss_value(call, name, [v for v in inputs if not isinstance(v, Unknown) or True], reduction)


for _name in api.FUNCTIONAL_LOSSES:
    function(f"torch.nn.functional.{_name}")(_functional_loss)


@function("torch.nn.functional.relu", "torch.nn.functional.relu_", "torch.nn.functional.leaky_relu",
          "torch.nn.functional.elu", "torch.nn.functional.hardtanh", "torch.nn.functional.relu6",
          "torch.nn.functional.selu", "torch.nn.functional.silu", "torch.nn.functional.dropout",
          "torch.nn.functional.threshold")
def _functional_activation(call: Call):
    name = call.qualname.rsplit(".", 1)[-1]
    x = call.arg(0, "input")
    if not isinstance(x, TensorFacts):
        return UNKNOWN
    if name == "dropout" and call.flag(2, "training", True) is False:
        return x
    inplace = call.flag(None, "inplace", False) or name.endswith("_")
    if inplace and call.state.no_grad is not True:
        t_ops.inplace(call, x, call.node.args[0] if call.node is not None and call.node.args else call.node,
                      f"{name}(inplace=True)", None, call.node)
        return _activated(call, {"relu": "ReLU", "relu_": "ReLU", "leaky_relu": "LeakyReLU"}.get(name, name),
                          call.state.fresh(x))
    return t_ops.derived(call, name.rstrip("_"), [x], shape=x.shape, dtype=x.dtype)


@function("torch.nn.functional.linear")
def _linear(call: Call):
    x, w = call.arg(0, "input"), call.arg(1, "weight")
    b = call.arg(2, "bias", NONE)
    shape = None
    if isinstance(x, TensorFacts) and isinstance(w, TensorFacts) and x.shape and w.shape and len(w.shape) == 2:
        shape = x.shape[:-1] + (w.shape[0],)
    operands = [v for v in (x, w, b) if isinstance(v, (TensorFacts, Unknown))]
    return t_ops.derived(call, "linear", operands, shape=shape,
                         dtype=x.dtype if isinstance(x, TensorFacts) else None, saves=True,
                         grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get("torch.nn.functional.linear"))


@function("torch.nn.functional.embedding", "torch.nn.functional.conv1d", "torch.nn.functional.conv2d",
          "torch.nn.functional.conv3d", "torch.nn.functional.layer_norm", "torch.nn.functional.batch_norm",
          "torch.nn.functional.group_norm", "torch.nn.functional.normalize", "torch.nn.functional.pad",
          "torch.nn.functional.interpolate", "torch.nn.functional.max_pool2d",
          "torch.nn.functional.avg_pool2d", "torch.nn.functional.adaptive_avg_pool2d",
          "torch.nn.functional.one_hot", "torch.nn.functional.gumbel_softmax",
          "torch.nn.functional.cosine_similarity", "torch.nn.functional.pairwise_distance",
          "torch.nn.functional.grid_sample", "torch.nn.functional.unfold", "torch.nn.functional.fold",
          "torch.nn.functional.scaled_dot_product_attention", "torch.nn.functional.multi_head_attention_forward")
def _functional_other(call: Call):
    name = call.qualname.rsplit(".", 1)[-1]
    x = call.arg(0, "input")
    if name == "one_hot":
        shape = None
        classes = call.number(1, "num_classes")
        if isinstance(x, TensorFacts) and x.shape is not None and isinstance(classes, int):
            shape = x.shape + (classes,)
        return t_ops.new_tensor(call, False, True, dtype="int64", shape=shape, reason="never",
                                ignore_no_grad=True)
    tensors = [v for v in (*call.args, *call.kwargs.values()) if isinstance(v, (TensorFacts, Unknown))]
    if not any(isinstance(v, TensorFacts) for v in tensors):
        return UNKNOWN
    shape = None
    if name in ("normalize", "layer_norm", "batch_norm", "group_norm", "gumbel_softmax") \
            and isinstance(x, TensorFacts):
        shape = x.shape
    pooled = _FUNCTIONAL_POOLS.get(name)
    if pooled is not None and isinstance(x, TensorFacts) and not call.starred:
        # The layer's formula, with the arguments in the layer's order.
        layer, keys = pooled
        attrs = {key: call.arg(i + 1, key) for i, key in enumerate(keys) if call.given(i + 1, key)}
        shape = output_shape(layer, attrs, x.shape)
    if name in ("cosine_similarity", "pairwise_distance"):
        shape = _similarity_shape(call, name)
    if name == "embedding":
        w = call.arg(1, "weight")
        if isinstance(x, TensorFacts) and isinstance(w, TensorFacts) and x.shape is not None \
                and w.shape and len(w.shape) == 2:
            shape = x.shape + (w.shape[1],)
    dtype = x.dtype if isinstance(x, TensorFacts) and name != "embedding" else None
    return t_ops.derived(call, name, tensors, shape=shape, dtype=dtype,
                         grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(call.qualname))


def _similarity_shape(call: Call, name: str):
    """`cosine_similarity(x1, x2, dim=1)` reduces `dim` of the broadcast inputs;
    `pairwise_distance(x1, x2)` the last one (kept with keepdim=True)."""
    x1, x2 = call.arg(0, "x1"), call.arg(1, "x2")
    if not isinstance(x1, TensorFacts) or not isinstance(x2, TensorFacts) or call.starred:
        return None
    shape = shapes.broadcast(x1.shape, x2.shape)
    if not shape:
        return None
    if name == "pairwise_distance":
        keep = truth(call.arg(4, "keepdim", NumberValue("bool", False)))
        return None if keep is None else shape[:-1] + ((1,) if keep else ())
    dim = call.number(2, "dim", 1)
    if not isinstance(dim, int) or not -len(shape) <= dim < len(shape):
        return None
    dim %= len(shape)
    return shape[:dim] + shape[dim + 1:]


@function("torch.nn.functional.softmax", "torch.nn.functional.log_softmax",
          "torch.nn.functional.softmin", "torch.softmax", "torch.log_softmax")
def _softmax(call: Call):
    x = call.arg(0, "input")
    if not isinstance(x, TensorFacts):
        return UNKNOWN
    name = call.qualname.rsplit(".", 1)[-1]
    return t_ops.derived(call, name, [x], shape=x.shape, dtype=x.dtype)


def _init_function(call: Call):
    # nn.init functions change the tensor under no_grad: fine on a parameter.
    return call.arg(0, "tensor")


def _init_family(qualname: str):
    if qualname.startswith("torch.nn.init."):
        return _init_function
    return None


PREFIXES.append(("torch.nn.init.", _init_family))


@function("torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.weight_norm",
          "torch.nn.utils.parametrizations.spectral_norm", "torch.nn.utils.spectral_norm")
def _reparametrized(call: Call):
    """`weight_norm(layer)`: the same layer, whose `weight` is now computed from new
    parameters on every access (a non-leaf tensor)."""
    module = call.arg(0, "module")
    name = call.text(1, "name", "weight")
    if not isinstance(module, ObjectRef) or module.kind != "module" or name is None:
        return module
    state = call.state
    old = state.attr(module, name)
    if not isinstance(old, TensorFacts):
        return module
    original = t_ops.new_tensor(call, True, True, dtype=old.dtype, shape=old.shape, device=old.device,
                                ignore_no_grad=True, part=1, is_param=True)
    computed = t_ops.derived(call, "weight_norm", [original], shape=old.shape, dtype=old.dtype, part=2)
    state.set_attrs(module, {name + "_original": original, name: computed})
    return module


@function("torch.nn.utils.rnn.pad_sequence")
def _pad_sequence(call: Call):
    """`pad_sequence(seqs, batch_first=True)`: the sequences (L_i, *) stacked to
    (B, L_max, *), or (L_max, B, *); B is their count when known, L_max is not."""
    from autograd_lsp.analysis.semantics.builtins import iterate
    if call.starred:
        return UNKNOWN
    seqs = iterate(call, call.arg(0, "sequences"))
    items = [call.state.fresh(v) for v in (seqs.elements if seqs.elements is not None else [seqs.element])]
    if not items or not all(isinstance(t, TensorFacts) for t in items):
        return UNKNOWN
    rests = {t.shape[1:] for t in items if t.shape}
    rest = rests.pop() if len(rests) == 1 and all(t.shape for t in items) else None
    count = len(seqs.elements) if seqs.elements is not None else None
    batch_first = call.flag(1, "batch_first", False)
    shape = None
    if rest is not None and batch_first is not None:
        shape = ((count, None) if batch_first else (None, count)) + rest
    dtypes = {t.dtype for t in items}
    return t_ops.derived(call, "pad_sequence", items, shape=shape, dtype=dtypes.pop() if len(dtypes) == 1 else None)


@function("torch.nn.utils.parameters_to_vector", "torch.nn.utils.convert_parameters.parameters_to_vector")
def _parameters_to_vector(call: Call):
    """One flat vector of the tensors given (parameters, or the gradients
    `autograd.grad` returned): their concatenation, and their graph."""
    from autograd_lsp.analysis.semantics.builtins import iterate
    found = iterate(call, call.state.fresh(call.arg(0, "parameters")))
    tensors = [call.state.fresh(t) for t in (found.elements if found.elements is not None else [found.element])]
    if not tensors or not all(isinstance(t, TensorFacts) for t in tensors):
        return UNKNOWN
    sizes = [shapes.numel(t.shape) for t in tensors]
    size = sum(sizes) if found.elements is not None and None not in sizes else None
    dtypes = {t.dtype for t in tensors}
    return t_ops.derived(call, "cat", tensors, shape=(size,), dtype=dtypes.pop() if len(dtypes) == 1 else None)


@function("torch.nn.utils.vector_to_parameters", "torch.nn.utils.convert_parameters.vector_to_parameters")
def _vector_to_parameters(call: Call):
    """Sets each parameter's `.data` from the vector: nothing autograd records."""
    return NONE


@function("torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
          "torch.nn.utils.clip_grad_norm")
def _clip_grad_norm(call: Call):
    return t_ops.new_tensor(call, False, True, dtype="float32", shape=(), reason="never",
                            ignore_no_grad=True)


@function("torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_")
def _clip_grad_value(call: Call):
    return NONE


__all__ = ["make_layer", "call_layer", "parameters_of", "submodules", "iterate_module",
           "module_item", "is_instance", "loss_value", "clear_grads", "InplaceEvent"]
