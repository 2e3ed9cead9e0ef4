"""Classes of the analysed code and their instances: `self.x = ...` in any
method is seen in every other, `Net()` runs `__init__`, `model(x)` runs
`forward`, `super().__init__(...)` reaches torch's own base classes
(nn.Module, nn.Sequential, torch.optim.Optimizer, Dataset), and a @dataclass
or NamedTuple gets the `__init__` Python would write for it."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, BoundMethod, BuiltinName, ClassValue, ExternalName,
                            FunctionValue, GradAttr, MethodOf, NumberValue, ObjectRef, StrValue,
                            TensorFacts, TorchName, TupleValue, Unknown)
from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.semantics import Call, custom_functions, find_method
from autograd_lsp.analysis.semantics import nn as nn_ops
from autograd_lsp.analysis.semantics import optim as optim_ops
from autograd_lsp.analysis.trace import AttrAssignEvent

# Which class a method was defined in (for `super()`), by function.
_OWNER: dict = {}


@record
class SuperValue:
    cls: ClassValue
    receiver: object


@record
class SuperMethod:
    """`super().name`: a method of a base class, bound to the instance."""
    base: object                     # the ClassValue or TorchName that has it
    name: str
    receiver: object


def make_class(walker, node: ast.ClassDef, state, frame, ctx) -> ClassValue:
    bases = tuple(walker.expr(b, state, frame, ctx) for b in node.bases)
    decorators = [walker.expr(d, state, frame, ctx) for d in node.decorator_list]
    # The class body runs in a namespace of its own.
    saved = state.names
    state.names = {}
    from autograd_lsp.analysis.walker import Frame
    body_frame = Frame(None, frame.source, saved if frame.globals is None else frame.globals,
                       frame.closure, prefix=frame.prefix, depth=frame.depth, module=frame.module,
                       sites=frame.sites)
    methods, attrs = {}, {}
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[stmt.name] = state.names[stmt.name] = walker.make_function(
                stmt, state, body_frame, ctx, qualname=f"{node.name}.{stmt.name}")
        else:
            walker.stmt(stmt, state, body_frame, ctx)
    defined = list(methods.values())
    for name, value in state.names.items():
        if name in methods:
            continue
        if any(value is fn for fn in defined):
            methods[name] = value          # `__call__ = forward`: another name for a method
        else:
            attrs[name] = value
    state.names = saved
    kind = _kind_of(bases)
    fields = None
    if any(_is_dataclass_decorator(d) for d in decorators) or any(
            isinstance(b, ExternalName) and b.qualname.endswith("NamedTuple") for b in bases):
        fields = tuple(s.target.id for s in node.body
                       if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name))
    cls = ClassValue(node, frame.source, node.name, bases, methods, attrs, kind, fields)
    for fn in methods.values():
        _OWNER[fn] = cls
    for decorator in reversed(decorators):
        if isinstance(decorator, (FunctionValue, BoundMethod)):
            walker.apply_decorator(decorator, cls, node, state, frame, ctx)
    return cls


def _is_dataclass_decorator(value) -> bool:
    return isinstance(value, ExternalName) and value.qualname in ("dataclasses.dataclass", "dataclass")


def _kind_of(bases) -> str:
    for base in bases:
        if isinstance(base, ClassValue) and base.kind != "instance":
            return base.kind
        if isinstance(base, TorchName):
            name = base.qualname
            if name.startswith("torch.nn.") and name.count(".") == 2 and name.rsplit(".", 1)[-1][:1].isupper():
                return "module"
            if name.startswith("torch.optim.") and name.rsplit(".", 1)[-1][:1].isupper():
                return "optimizer"
            if name.startswith("torch.utils.data."):
                return "dataset"
            if name in custom_functions.FUNCTION_BASES:
                return custom_functions.KIND
    return "instance"


def _torch_base(cls: ClassValue):
    """The torch class a class derives from, if any (nn.Module, nn.Sequential...)."""
    for c in cls.mro():
        for base in c.bases:
            if isinstance(base, TorchName):
                return base.qualname
    return None


def named_tuple_fields(ref: ObjectRef) -> tuple | None:
    """The fields of an instance of a `class Out(NamedTuple)`, in order (it unpacks
    and iterates as a tuple of them); None for any other object."""
    cls = ref.cls
    if not isinstance(cls, ClassValue) or cls.fields is None:
        return None
    if any(isinstance(b, ExternalName) and b.qualname.endswith("NamedTuple") for b in cls.bases):
        return cls.fields
    return None


def instantiate(walker, cls: ClassValue, call: Call):
    state = call.state
    ref = ObjectRef(call.new_id(), cls.kind if cls.kind != "dataset" else "dataset", cls)
    attrs = {"training": NumberValue("bool", True)} if cls.kind == "module" else {}
    state.new_object(ref, attrs)
    init = cls.lookup("__init__")
    if isinstance(init, FunctionValue):
        walker.invoke_user(init, [ref, *call.args], call)
    elif cls.fields is not None:
        values = dict(zip(cls.fields, call.args))
        values.update({k: v for k, v in call.kwargs.items() if k in cls.fields})
        literals = _field_literals(cls.node) if len(values) < len(cls.fields) else {}
        for name in cls.fields:
            if name in values:
                state.set_attr(ref, name, values[name])
                continue
            literal = literals.get(name)
            if isinstance(literal, ast.Name):
                # `field(default_factory=list)`: a new empty container for each instance.
                from autograd_lsp.analysis.semantics import containers
                made = Call(literal, [], {}, state, call.ctx, walker, call.frame)
                default = containers.new_list(made, []) if literal.id == "list" else \
                    containers.new_dict(made, {}, True) if literal.id == "dict" else UNKNOWN
            elif literal is not None:
                default = walker.expr(literal, state, call.frame, call.ctx)
            else:
                default = cls.attrs.get(name, UNKNOWN)
            state.set_attr(ref, name, default)
    else:
        base = _torch_base(cls)
        if base is not None:
            _torch_init(call, base, ref, call.args, call.kwargs)
    return ref


def _field_literals(node: ast.ClassDef) -> dict:
    """Field name -> the literal a dataclass field's `field(default=...)` or
    `field(default_factory=lambda: ...)` gives each instance (`[2, 4, 8]`), made
    afresh per instance as the factory does; only literals of constants
    (evaluated where the class is used, they must not read names); or the name
    `list` or `dict` of `field(default_factory=list)`."""
    found, seen = {}, set()
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) \
                and isinstance(stmt.value, ast.Call) and stmt.target.id not in seen:
            seen.add(stmt.target.id)
            func = stmt.value.func
            if (func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)) != "field":
                continue
            for kw in stmt.value.keywords:
                if kw.arg == "default_factory" and isinstance(kw.value, ast.Name) \
                        and kw.value.id in ("list", "dict"):
                    found[stmt.target.id] = kw.value
                    break
                value = kw.value.body if kw.arg == "default_factory" and isinstance(kw.value, ast.Lambda) \
                    else kw.value if kw.arg == "default" else None
                if value is not None and _constant_literal(value):
                    found[stmt.target.id] = value
                    break
    return found


def _constant_literal(node) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return isinstance(node.operand, ast.Constant)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_constant_literal(e) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _constant_literal(k) for k in node.keys) \
            and all(_constant_literal(v) for v in node.values)
    return False


def _torch_init(call: Call, base: str, ref: ObjectRef, args, kwargs) -> None:
    """`super().__init__(...)` into torch: containers keep their layers, optimizers
    their parameters."""
    state = call.state
    name = base.rsplit(".", 1)[-1]
    if name in ("Sequential", "ModuleList"):
        inner = Call(call.node, list(args), dict(kwargs), state, call.ctx, call.walker, call.frame,
                     qualname=base, starred=call.starred, salt=call.salt + ("base",))
        made = nn_ops.make_container(inner, name)
        state.set_attrs(ref, {k: v for k, v in state.attrs(made).items() if k != "training"})
    elif base.startswith("torch.optim."):
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        optim_ops.init_optimizer(call, ref, params)
    elif base.startswith("torch.nn.") and name != "Module":
        # A subclass of a layer (`class Noisy(nn.Linear)`): the layer's parameters and
        # settings, as its constructor makes them.
        inner = Call(call.node, list(args), dict(kwargs), state, call.ctx, call.walker, call.frame,
                     qualname=base, starred=call.starred, salt=call.salt + ("base",))
        made = nn_ops.make_layer(inner)
        if isinstance(made, ObjectRef):
            state.set_attrs(ref, {k: v for k, v in state.attrs(made).items() if k != "training"})


def get_attribute(walker, ref: ObjectRef, name: str, state, node, frame, ctx):
    attrs = state.attrs(ref)
    if name in attrs:
        return state.fresh(attrs[name])
    cls = ref.cls
    if isinstance(cls, ClassValue):
        found = cls.lookup(name)
        if isinstance(found, FunctionValue):
            if found.is_property:
                inner = Call(node, [], {}, state, ctx, walker, frame)
                value, _ = walker.apply(BoundMethod(found, ref), inner)
                return value
            if found.is_static:
                return found
            return BoundMethod(found, ref)
        if found is not None:
            return found
    if ref.kind == "module" and name in ("weight", "bias") and isinstance(cls, str):
        return UNKNOWN
    if ref.kind == "module" and name == "_modules":
        # The children by name (`for name, layer in cnn._modules.items()`, as style
        # transfer tutorials walk a feature extractor).
        from autograd_lsp.analysis.semantics import containers, nn
        named = nn.named_children(state, ref)
        if named is None:
            return UNKNOWN
        return containers.new_dict(Call(node, [], {}, state, ctx, walker, frame, salt=("_modules",)),
                                   dict(named), True)
    if ref.kind == "module" and "_weights" in attrs and "_part" not in attrs and find_method(ref, name) is None:
        from autograd_lsp.analysis.semantics import library_models
        return library_models.child(Call(node, [], {}, state, ctx, walker, frame), ref, name)
    if find_method(ref, name) is not None or ref.kind in ("module", "optimizer", "list", "dict",
                                                            "loader", "dataset", "scaler",
                                                            "scheduler"):
        return MethodOf(ref, name)
    return UNKNOWN


def set_attribute(walker, target, receiver, name: str, value, value_node, state, frame, ctx) -> None:
    from autograd_lsp.analysis.semantics import tensors
    walker.emit(AttrAssignEvent(target, ctx, receiver, name, value, value_node))
    if isinstance(receiver, TensorFacts):
        tensors.assign_attribute(walker.call_for(target, state, frame, ctx), receiver, name, value)
    elif isinstance(receiver, GradAttr):
        return
    elif isinstance(receiver, ObjectRef):
        store_attribute(state, receiver, name, value)


def store_attribute(state, ref: ObjectRef, name: str, value) -> None:
    state.set_attr(ref, name, value)


def call_object(walker, ref: ObjectRef, call: Call):
    """`model(x)` and other calls of an object: (result, whether analysed code ran)."""
    if ref.kind == "module":
        return walker.call_module(ref, call)
    cls = ref.cls
    if isinstance(cls, ClassValue):
        method = cls.lookup("__call__")
        if isinstance(method, FunctionValue):
            return walker.invoke_user(method, [ref, *call.args], call), True
    from autograd_lsp.analysis.semantics.builtins import havoc
    havoc(call)
    return UNKNOWN, False


def call_module(walker, ref: ObjectRef, call: Call):
    cls = ref.cls
    if isinstance(cls, ClassValue):
        forward = cls.lookup("forward")
        if isinstance(forward, FunctionValue):
            return walker.invoke_user(forward, [ref, *call.args], call), True
        base = _torch_base(cls)
        if base is not None and nn_ops.has_layer_state(call.state, ref, base):
            # A subclass of a layer that keeps the layer's forward.
            return nn_ops.call_layer(call, ObjectRef(ref.oid, "module", base)), False
        return nn_ops._opaque_output(call, ref), False
    return nn_ops.call_layer(call, ref), False


def make_super(call: Call):
    function = call.ctx.function
    cls = _OWNER.get(function)
    if cls is None or not call.frame or function is None:
        return UNKNOWN
    params = function.node.args.args
    if not params:
        return UNKNOWN
    receiver = call.walker.lookup(params[0].arg, call.state, call.frame)
    return SuperValue(cls, receiver)


def super_attribute(value: SuperValue, name: str):
    mro = value.cls.mro()
    for cls in mro[1:]:
        if name in cls.methods:
            fn = cls.methods[name]
            return fn if fn.is_static else BoundMethod(fn, value.receiver)
    for cls in mro:
        for base in cls.bases:
            if isinstance(base, TorchName):
                return SuperMethod(base, name, value.receiver)
    return SuperMethod(None, name, value.receiver)


def call_super(walker, method: SuperMethod, call: Call):
    """`super().__init__(...)`, `super().forward(x)` into a torch base class."""
    base = method.base
    receiver = method.receiver
    if isinstance(base, TorchName) and isinstance(receiver, ObjectRef):
        if method.name == "__init__":
            _torch_init(call, base.qualname, receiver, call.args, call.kwargs)
            return NONE, False
        if method.name == "forward" and nn_ops.has_layer_state(call.state, receiver, base.qualname):
            # `super().forward(x)` in a subclass of a layer (`class Noisy(nn.Linear)`):
            # the layer's own forward, on the receiver's parameters.
            return nn_ops.call_layer(call, ObjectRef(receiver.oid, "module", base.qualname)), False
        fn = find_method(receiver, method.name)
        if fn is not None:
            call.receiver = receiver
            call.method = method.name
            return fn(call), False
    if method.name == "__init__":
        return NONE, False
    from autograd_lsp.analysis.semantics.builtins import havoc
    havoc(call)
    return UNKNOWN, False


__all__ = ["make_class", "instantiate", "get_attribute", "set_attribute", "call_object",
           "SuperValue", "SuperMethod", "make_super", "super_attribute", "call_super",
           "store_attribute", "BuiltinName", "StrValue", "TupleValue", "Unknown"]
