"""A flow-sensitive walk over one chunk that keeps, per name, what is known
about each tensor, and records the events rules read.

It is an abstract interpreter: statements run in order over an `Env` of
facts; both branches of an `if` run and are joined; a loop body runs twice (the
second pass sees what the first left behind, as the second iteration would);
functions run with unknown parameters. Nothing is guessed: an expression the
interpreter does not understand gives `UNKNOWN`.

It walks only the node types it needs instead of libcst's generic visitor
dispatch, which costs more than the parse itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from itertools import count

import libcst as cst

from analysis import torch_api as api
from analysis.events import (AccumulateEvent, AttrAssignEvent, AttrReadEvent, CallEvent, Context,
                             GradAttr, InplaceEvent, LoopEvent, Trace)
from analysis.facts import (UNKNOWN, FLOAT_DTYPES, ModuleValue, NumberValue, OptimizerValue,
                            SequenceValue, TensorFacts, Tri, Unknown, Value, dtype_kind, join)
from analysis.names import Names
from analysis.summary import ModuleSummary


@dataclass
class Env:
    names: dict = field(default_factory=dict)
    # Graph nodes whose saved tensors a backward without retain_graph freed ->
    # the call that freed them (a fix adds retain_graph=True there).
    freed: dict = field(default_factory=dict)
    # Graph nodes whose saved tensor was since changed in place -> that in-place op:
    # a backward through them raises.
    clobbered: dict = field(default_factory=dict)

    def copy(self) -> "Env":
        return Env(dict(self.names), self.freed, self.clobbered)

    def joined(self, other: "Env") -> "Env":
        names = {}
        for key in self.names.keys() | other.names.keys():
            a, b = self.names.get(key, UNKNOWN), other.names.get(key, UNKNOWN)
            names[key] = join(a, b)
        # A node is freed afterwards only if it is freed on both paths.
        return Env(names, {n: c for n, c in self.freed.items() if n in other.freed},
                   {n: c for n, c in self.clobbered.items() if n in other.clobbered})

    def update_tensor(self, tid, new: TensorFacts) -> None:
        """An in-place change reaches every name bound to the same tensor."""
        for key, value in self.names.items():
            if isinstance(value, TensorFacts) and value.tid == tid:
                self.names[key] = new


_BINARY_OPS = {
    cst.Add: "add", cst.Subtract: "sub", cst.Multiply: "mul", cst.Divide: "div",
    cst.Power: "pow", cst.MatrixMultiply: "matmul", cst.FloorDivide: "floor_divide",
    cst.Modulo: "remainder",
}
_AUG_OPS = {
    cst.AddAssign: "+=", cst.SubtractAssign: "-=", cst.MultiplyAssign: "*=",
    cst.DivideAssign: "/=", cst.PowerAssign: "**=", cst.MatrixMultiplyAssign: "@=",
}


class Interpreter:
    def __init__(self, summary: ModuleSummary, id_prefix: object, function_globals: dict | None = None,
                 parameters: dict | None = None):
        self.summary = summary
        # Facts of the positional parameters of this chunk's top-level functions, from
        # the calls elsewhere in the file (None: parameters are unknown).
        self.parameters = parameters or {}
        # Calls of the module's own functions seen here: (name, positional facts).
        self.calls: list[tuple] = []
        # Module-level names a function body may read (models, optimizers).
        self.function_globals = dict(function_globals or {})
        self.trace = Trace()
        self._ids = count(1)
        self._prefix = id_prefix
        # Facts of names as evaluated, for hovers: Name node -> value.
        self.seen: dict[cst.CSTNode, Value] = {}
        # The environment of the expression being evaluated (ops record there which
        # inputs they saved for backward).
        self._env: Env | None = None

    # -- identities -------------------------------------------------------------

    def new_id(self):
        return (self._prefix, next(self._ids))

    # -- entry points -------------------------------------------------------------

    def run_module(self, module: cst.Module, env: Env) -> Env:
        names = Names(dict(self.summary.aliases))
        ctx = Context(no_grad=False)
        self._names = names
        self.trace.torch_name = next((local for local, qual in names.aliases.items()
                                      if qual == "torch"), None)
        self.trace.mentions_backward = self.summary.mentions_backward
        return self.run_block(module.body, env, ctx)

    def run_function(self, node: cst.FunctionDef, outer_names: Names, ctx: Context) -> None:
        saved_names = self._names
        self._names = outer_names.child()
        env = Env(dict(self.function_globals))
        params = node.params
        given = self.parameters.get(node.name.value, ()) if ctx.function is None else ()
        positional = (*params.posonly_params, *params.params)
        for index, param in enumerate((*positional, *params.kwonly_params)):
            env.names[param.name.value] = given[index] if index < len(given) \
                and index < len(positional) else UNKNOWN
            self._names.shadow(param.name.value)
        no_grad = ctx.no_grad
        for deco in node.decorators:
            mode = self._grad_mode_of(deco.decorator)
            if mode is not None:
                no_grad = mode
        # Code inside a function runs when it is called: grad mode there is
        # the caller's unless a decorator sets it.
        if no_grad is False and not any(self._grad_mode_of(d.decorator) is not None
                                        for d in node.decorators):
            no_grad = None if ctx.function is not None else False
        inner = Context(no_grad=no_grad, function=node)
        self.run_block(node.body.body if isinstance(node.body, cst.IndentedBlock) else [node.body],
                       env, inner)
        self._names = saved_names

    # -- statements -----------------------------------------------------------------

    def run_block(self, statements, env: Env, ctx: Context) -> Env:
        for stmt in statements:
            env = self.run_statement(stmt, env, ctx)
        return env

    def run_statement(self, stmt, env: Env, ctx: Context) -> Env:
        ctx = replace(ctx, stmt=stmt)
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.run_small(small, env, ctx)
            return env
        if isinstance(stmt, cst.If):
            self.evaluate(stmt.test, env, ctx)
            self._forget_tested_grads(stmt.test, env)
            ctx = replace(ctx, blocks=ctx.blocks + (stmt,))
            then_env = self.run_block(stmt.body.body, env.copy(), ctx)
            if stmt.orelse is None:
                return then_env.joined(env)
            if isinstance(stmt.orelse, cst.If):
                else_env = self.run_statement(stmt.orelse, env.copy(), ctx)
            else:
                else_env = self.run_block(stmt.orelse.body.body, env.copy(), ctx)
            return then_env.joined(else_env)
        if isinstance(stmt, (cst.For, cst.While)):
            return self.run_loop(stmt, env, ctx)
        if isinstance(stmt, cst.With):
            mode = ctx.no_grad
            for item in stmt.items:
                self.evaluate(item.item, env, ctx)
                found = self._grad_mode_of(item.item)
                if found is not None:
                    mode = found
                if item.asname is not None:
                    self.bind(item.asname.name, UNKNOWN, env)
            return self.run_block(stmt.body.body, env, replace(ctx, no_grad=mode))
        if isinstance(stmt, cst.Try):
            ctx = replace(ctx, blocks=ctx.blocks + (stmt,))
            body_env = self.run_block(stmt.body.body, env.copy(), ctx)
            out = body_env
            for handler in stmt.handlers:
                h_env = self.run_block(handler.body.body, env.copy(), ctx)
                out = out.joined(h_env)
            if stmt.orelse is not None:
                out = self.run_block(stmt.orelse.body.body, out, ctx)
            if stmt.finalbody is not None:
                out = self.run_block(stmt.finalbody.body.body, out, ctx)
            return out
        if isinstance(stmt, cst.FunctionDef):
            self.run_function(stmt, self._names, ctx)
            self.bind(stmt.name, UNKNOWN, env)
            return env
        if isinstance(stmt, cst.ClassDef):
            for inner in stmt.body.body:
                if isinstance(inner, cst.FunctionDef):
                    self.run_function(inner, self._names, ctx)
            self.bind(stmt.name, UNKNOWN, env)
            return env
        # match statements and anything newer: unknown effects on the names it binds
        return env

    def _inplace(self, node, ctx: Context, target: TensorFacts, target_node, op: str, env: Env) -> None:
        """Record an in-place change of `target`: the event, and (grad mode on) the
        graph nodes that had saved it, whose backward it breaks."""
        self.trace.events.append(InplaceEvent(node, ctx, target, target_node, op))
        if target.saved_by and ctx.no_grad is not True:
            env.clobbered = {**env.clobbered, **{n: node for n in target.saved_by
                                                 if n not in env.clobbered}}

    @staticmethod
    def _forget_mutated_list(node, env: Env) -> None:
        """A list whose contents may change (`losses.append(l)`) is no longer known."""
        if isinstance(node, cst.Name):
            value = env.names.get(node.value)
            if isinstance(value, SequenceValue) and value.mutable:
                env.names[node.value] = UNKNOWN

    @staticmethod
    def _forget_tested_grads(test, env: Env) -> None:
        """`if x.grad is not None:` and the like: the branches know more than we
        track, so `.grad` of every tensor the test reads becomes unknown."""
        if not any(isinstance(v, TensorFacts) and v.grad is not None for v in env.names.values()):
            return
        # The expression forms a test is made of; libcst's generic `children` is slow.
        stack = [test]
        while stack:
            node = stack.pop()
            if isinstance(node, cst.Attribute):
                if node.attr.value == "grad" and isinstance(node.value, cst.Name):
                    value = env.names.get(node.value.value)
                    if isinstance(value, TensorFacts) and value.grad is not None:
                        env.update_tensor(value.tid, replace(value, grad=None))
                stack.append(node.value)
            elif isinstance(node, cst.Comparison):
                stack.append(node.left)
                stack.extend(c.comparator for c in node.comparisons)
            elif isinstance(node, cst.BooleanOperation):
                stack.extend((node.left, node.right))
            elif isinstance(node, cst.UnaryOperation):
                stack.append(node.expression)
            elif isinstance(node, cst.Call):
                stack.append(node.func)
                stack.extend(a.value for a in node.args)

    def run_loop(self, stmt, env: Env, ctx: Context) -> Env:
        self.trace.events.append(LoopEvent(stmt, ctx))
        loops = ctx.loops + (stmt,)
        blocks = ctx.blocks + (stmt,)
        if isinstance(stmt, cst.For):
            iterable = self.evaluate(stmt.iter, env, ctx)
        else:
            self.evaluate(stmt.test, env, ctx)
            iterable = UNKNOWN
        current = env.copy()
        for loop_pass in (0, 1):
            inner = replace(ctx, loops=loops, loop_pass=loop_pass, blocks=blocks)
            if isinstance(stmt, cst.For):
                self.bind(stmt.target, self._element_of(iterable, inner), current)
            current = self.run_block(stmt.body.body, current, inner)
        out = current.joined(env)
        if isinstance(iterable, _Parameters) and "requires_grad" in _code(stmt.body):
            # `for p in m.parameters(): p.requires_grad = False`: freezing (some of) them
            for key, value in list(out.names.items()):
                if isinstance(value, ModuleValue) and value.mid == iterable.mid:
                    out.names[key] = replace(value, params_require_grad=None)
        if stmt.orelse is not None:
            out = self.run_block(stmt.orelse.body.body, out, ctx)
        return out

    def _element_of(self, iterable: Value, ctx: Context) -> Value:
        if isinstance(iterable, _RangeValue):
            return NumberValue("int")
        if isinstance(iterable, _Enumerated):
            return SequenceValue((NumberValue("int"), self._element_of(iterable.inner, ctx)))
        if isinstance(iterable, TensorFacts):
            return self.element(iterable, None, ctx)
        if isinstance(iterable, _Parameters) and iterable.require_grad:
            # A module's parameters are leaves that require grad; their `.grad` may be
            # anything.
            tid = self.new_id()
            return TensorFacts(tid=tid, requires_grad=True, is_leaf=True, leaves=frozenset({tid}),
                               opaque=False, made_in_loop=self._loop_id(ctx))
        return UNKNOWN

    def run_small(self, small, env: Env, ctx: Context) -> None:
        if isinstance(small, cst.Expr):
            self.evaluate(small.value, env, ctx, used=False)
        elif isinstance(small, cst.Assign):
            # `_ = f()` throws the value away on purpose.
            discarded = all(isinstance(t.target, cst.Name) and t.target.value == "_"
                            for t in small.targets)
            value = self.evaluate(small.value, env, ctx, used=not discarded)
            accumulated = _self_addition(small)
            if accumulated is not None:
                # `total = total + loss`
                before = env.names.get(accumulated.value, UNKNOWN)
                operand = self.seen.get(small.value.right, UNKNOWN) \
                    if isinstance(small.value.right, cst.Name) else _value_of_add(value, before)
                if isinstance(operand, TensorFacts):
                    self.trace.events.append(AccumulateEvent(small, ctx, accumulated, before, operand))
            for target in small.targets:
                self.assign(target.target, value, small.value, env, ctx)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                value = self.evaluate(small.value, env, ctx)
                self.assign(small.target, value, small.value, env, ctx)
        elif isinstance(small, cst.AugAssign):
            self.run_augassign(small, env, ctx)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                self.evaluate(small.value, env, ctx)
        elif isinstance(small, (cst.Import, cst.ImportFrom)):
            self._names.add_import(small)
            for alias in small.names if not isinstance(small.names, cst.ImportStar) else ():
                bound = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(bound, cst.Name):
                    env.names.pop(bound.value, None)
        elif isinstance(small, cst.Del):
            if isinstance(small.target, cst.Name):
                env.names.pop(small.target.value, None)
            elif isinstance(small.target, cst.Attribute) and small.target.attr.value == "grad":
                owner = self.evaluate(small.target.value, env, ctx)
                if isinstance(owner, TensorFacts):
                    env.update_tensor(owner.tid, replace(owner, grad="none"))
        elif isinstance(small, (cst.Global, cst.Nonlocal)):
            for item in small.names:
                env.names[item.name.value] = UNKNOWN

    def run_augassign(self, small: cst.AugAssign, env: Env, ctx: Context) -> None:
        target = self.evaluate(small.target, env, ctx)
        operand = self.evaluate(small.value, env, ctx)
        op = _AUG_OPS.get(type(small.operator), "op=")
        if isinstance(target, TensorFacts) and op == "@=":
            # `a @= b` is not in place: it rebinds `a` to a new product.
            self.assign(small.target, self.binary("matmul", target, operand, ctx), small, env, ctx)
        elif isinstance(target, TensorFacts):
            self._inplace(small, ctx, target, small.target, op, env)
            if op == "+=" and isinstance(operand, TensorFacts):
                self.trace.events.append(AccumulateEvent(small, ctx, small.target, target, operand))
            result = self.inplace_result(target, operand, ctx)
            self.assign(small.target, result, small, env, ctx, rebinding=True)
            env.update_tensor(target.tid, result)
        elif isinstance(target, NumberValue) and isinstance(operand, TensorFacts):
            # `total += loss`: the name now holds a tensor
            self.trace.events.append(AccumulateEvent(small, ctx, small.target, target, operand))
            result = self.binary("add", target, operand, ctx)
            self.assign(small.target, result, small, env, ctx)
        else:
            self.assign(small.target, UNKNOWN if not isinstance(target, NumberValue) else target,
                        small, env, ctx)

    # -- binding -------------------------------------------------------------------

    def assign(self, target, value: Value, value_node, env: Env, ctx: Context,
               rebinding: bool = False) -> None:
        if isinstance(target, cst.Name):
            if isinstance(value_node, cst.Name) and value_node.value == "None" \
                    and target.value in self._names.aliases:
                # `except ImportError: torch = None`: the optional-import idiom keeps
                # the name torch's wherever the import succeeded.
                env.names[target.value] = UNKNOWN
                return
            self.bind(target, value, env)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.items if isinstance(value, SequenceValue) else None
            elements = [e for e in target.elements]
            if isinstance(value, _GradResult):
                items = (value.item,) * len(elements)
            if items is not None and len(items) == len(elements) and \
                    not any(isinstance(e, cst.StarredElement) for e in elements):
                for element, item in zip(elements, items):
                    self.assign(element.value, item, value_node, env, ctx)
            else:
                for element in elements:
                    self.assign(element.value, UNKNOWN, value_node, env, ctx)
        elif isinstance(target, cst.Attribute):
            receiver = self.evaluate(target.value, env, ctx)
            attr = target.attr.value
            self.trace.events.append(AttrAssignEvent(target, ctx, receiver, attr, value, value_node))
            if isinstance(receiver, TensorFacts):
                self._apply_attr_assign(receiver, attr, value, value_node, env)
        elif isinstance(target, cst.Subscript):
            receiver = self.evaluate(target.value, env, ctx)
            for element in target.slice:
                if isinstance(element.slice, cst.Index):
                    self.evaluate(element.slice.value, env, ctx)
            if isinstance(receiver, TensorFacts) and not rebinding:
                self._inplace(target, ctx, receiver, target.value, "setitem", env)
                env.update_tensor(receiver.tid, self.inplace_result(receiver, value, ctx))
            self._forget_mutated_list(target.value, env)
        elif isinstance(target, cst.StarredElement):
            self.assign(target.value, UNKNOWN, value_node, env, ctx)

    def bind(self, target, value: Value, env: Env) -> None:
        if isinstance(target, cst.Name):
            if isinstance(value, TensorFacts) and value.label is None and value.is_leaf \
                    and value.requires_grad:
                # how the backward graph names this leaf (torch's AccumulateGrad)
                value = replace(value, label=target.value)
                env.update_tensor(value.tid, value)
            env.names[target.value] = value
            self.seen[target] = value       # hovers on the name where it is defined
            self._names.shadow(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.items if isinstance(value, SequenceValue) else None
            if items is not None and len(items) == len(target.elements):
                for element, item in zip(target.elements, items):
                    self.bind(element.value, item, env)
            else:
                for element in target.elements:
                    self.bind(element.value, UNKNOWN, env)

    def _apply_attr_assign(self, tensor: TensorFacts, attr: str, value: Value, value_node, env: Env):
        if attr == "grad":
            is_none = isinstance(value_node, cst.Name) and value_node.value == "None"
            env.update_tensor(tensor.tid, replace(tensor, grad="none" if is_none else None))
        elif attr == "requires_grad":
            flag = _literal_bool(value_node)
            if tensor.is_leaf is True and flag is not None and dtype_kind(tensor.dtype) in ("float", "complex"):
                env.update_tensor(tensor.tid, replace(
                    tensor, requires_grad=flag, no_grad_reason=None if flag else "never",
                    grad="none" if flag and tensor.grad is None else tensor.grad,
                    leaves=frozenset({tensor.tid}) if flag else frozenset()))
            elif flag is None or tensor.is_leaf is not False:
                env.update_tensor(tensor.tid, replace(tensor, requires_grad=None))
        elif attr == "data":
            env.update_tensor(tensor.tid, replace(tensor, shape=None, dtype=None))

    # -- expressions -----------------------------------------------------------------

    def evaluate(self, node, env: Env, ctx: Context, used: bool = True) -> Value:
        self._env = env
        if isinstance(node, cst.Name):
            value = env.names.get(node.value, UNKNOWN)
            self.seen[node] = value
            return value
        if isinstance(node, cst.Call):
            return self.eval_call(node, env, ctx, used)
        if isinstance(node, cst.Attribute):
            return self.eval_attribute(node, env, ctx)
        if isinstance(node, cst.BinaryOperation):
            left = self.evaluate(node.left, env, ctx)
            right = self.evaluate(node.right, env, ctx)
            op = _BINARY_OPS.get(type(node.operator))
            return self.binary(op, left, right, ctx) if op else UNKNOWN
        if isinstance(node, cst.UnaryOperation):
            operand = self.evaluate(node.expression, env, ctx)
            if isinstance(node.operator, cst.Minus):
                if isinstance(operand, TensorFacts):
                    return self.derived("neg", [operand], ctx, shape=operand.shape, dtype=operand.dtype)
                return operand if isinstance(operand, NumberValue) else UNKNOWN
            if isinstance(node.operator, cst.Not):
                return NumberValue("bool")
            return operand if isinstance(operand, NumberValue) else UNKNOWN
        if isinstance(node, cst.Integer):
            return NumberValue("int", _literal_number(node.value))
        if isinstance(node, cst.Float):
            return NumberValue("float", _literal_number(node.value))
        if isinstance(node, cst.Imaginary):
            return NumberValue("complex")
        if isinstance(node, (cst.Tuple, cst.List)):
            items = []
            for element in node.elements:
                value = self.evaluate(element.value, env, ctx)
                if isinstance(element, cst.StarredElement):
                    return UNKNOWN
                items.append(value)
            return SequenceValue(tuple(items), mutable=isinstance(node, cst.List))
        if isinstance(node, cst.Subscript):
            return self.eval_subscript(node, env, ctx)
        if isinstance(node, cst.Comparison):
            values = [self.evaluate(node.left, env, ctx)]
            values += [self.evaluate(c.comparator, env, ctx) for c in node.comparisons]
            tensors = [v for v in values if isinstance(v, TensorFacts)]
            if tensors and all(isinstance(v, (TensorFacts, NumberValue)) for v in values):
                return self.new_tensor(ctx, requires_grad=False, is_leaf=True, dtype="bool",
                                       shape=_broadcast(*[_shape_of(v) for v in values]),
                                       reason="never")
            return UNKNOWN
        if isinstance(node, cst.IfExp):
            self.evaluate(node.test, env, ctx)
            return join(self.evaluate(node.body, env, ctx), self.evaluate(node.orelse, env, ctx))
        if isinstance(node, (cst.Lambda, cst.SimpleString, cst.ConcatenatedString)):
            return UNKNOWN
        # Anything else: look inside for calls (their events matter), know nothing of the result.
        for child in node.children:
            if isinstance(child, cst.BaseExpression):
                self.evaluate(child, env, ctx)
            elif isinstance(child, (cst.Arg, cst.Element, cst.CompFor, cst.DictElement,
                                    cst.FormattedStringExpression)):
                for sub in child.children:
                    if isinstance(sub, cst.BaseExpression):
                        self.evaluate(sub, env, ctx)
        return UNKNOWN

    def eval_attribute(self, node: cst.Attribute, env: Env, ctx: Context) -> Value:
        if self._names.qualname(node) is not None:
            return UNKNOWN        # a torch name such as torch.float32
        receiver = self.evaluate(node.value, env, ctx)
        attr = node.attr.value
        if isinstance(receiver, TensorFacts):
            if attr == "grad":
                self.trace.events.append(AttrReadEvent(node, ctx, receiver, attr))
                return GradAttr(receiver)
            if attr == "data":
                return self.new_tensor(ctx, requires_grad=False, is_leaf=True, dtype=receiver.dtype,
                                       shape=receiver.shape, reason="detach",
                                       device=receiver.device)
            if attr == "T":
                return self.derived("t", [receiver], ctx, shape=None, dtype=receiver.dtype)
            return UNKNOWN
        if isinstance(receiver, GradAttr) and attr == "data":
            return GradAttr(receiver.owner, via_data=True)
        return UNKNOWN

    def eval_subscript(self, node: cst.Subscript, env: Env, ctx: Context) -> Value:
        base = self.evaluate(node.value, env, ctx)
        index = None
        for element in node.slice:
            if isinstance(element.slice, cst.Index):
                value = self.evaluate(element.slice.value, env, ctx)
                if len(node.slice) == 1 and isinstance(value, NumberValue):
                    index = value
            else:
                for part in (element.slice.lower, element.slice.upper, element.slice.step):
                    if part is not None:
                        self.evaluate(part, env, ctx)
        if isinstance(base, SequenceValue) and index is not None and isinstance(index.value, int):
            if -len(base.items) <= index.value < len(base.items):
                return base.items[index.value]
            return UNKNOWN
        if isinstance(base, _GradResult):
            return base.item
        if isinstance(base, TensorFacts):
            simple = index is not None and index.kind == "int"
            return self.element(base, simple, ctx)
        return UNKNOWN

    def element(self, base: TensorFacts, int_index: bool | None, ctx: Context) -> TensorFacts:
        """`t[i]` (an integer index) or an item of iterating over `t`."""
        shape = None
        if base.shape is not None and len(base.shape) >= 1 and (int_index or int_index is None):
            shape = base.shape[1:]
        requires = base.requires_grad
        # t[i] selects; iterating over t unbinds it
        grad_fn = ("SelectBackward0" if int_index else "UnbindBackward0" if int_index is None
                   else None) if requires else None
        return TensorFacts(
            tid=self.new_id(), requires_grad=requires,
            is_leaf=(not requires) if requires is not None else None,
            dtype=base.dtype, shape=shape,
            grad_fn=grad_fn, parents=(base,) if requires else (),
            saved_nodes=base.saved_nodes, leaves=base.leaves, opaque=base.opaque,
            no_grad_reason=base.no_grad_reason if requires is False else None,
            grad=None, device=base.device, made_in_loop=self._loop_id(ctx),
            element_of=base.tid)

    # -- calls ---------------------------------------------------------------------

    def eval_call(self, node: cst.Call, env: Env, ctx: Context, used: bool) -> Value:
        func = node.func
        qualname = self._names.qualname(func)
        method = None
        receiver = None
        if qualname is None and isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.evaluate(func.value, env, ctx)
        if method is not None:
            self._forget_mutated_list(func.value, env)
        args, kwargs = [], {}
        for arg in node.args:
            value = self.evaluate(arg.value, env, ctx)
            if qualname is None:
                # A function we do not model may append to a list it is given.
                self._forget_mutated_list(arg.value, env)
            if arg.keyword is not None:
                kwargs[arg.keyword.value] = value
            elif arg.star == "":
                args.append(value)
            else:
                args.append(UNKNOWN)
        summary = None
        if qualname is None and isinstance(func, cst.Name):
            summary = self.summary.effects(func.value) if func.value not in env.names else None
            if summary is not None and all(a.keyword is None and not a.star for a in node.args):
                self.calls.append((func.value, tuple(args)))
        result = self.call_result(node, qualname, method, receiver, args, kwargs, env, ctx)
        if isinstance(result, TensorFacts) and result.origin is None and result is not receiver:
            result = replace(result, origin=node)
        event = CallEvent(node, ctx, qualname, method, receiver, tuple(args), kwargs, result, used,
                          env.freed, summary, clobbered=env.clobbered,
                          callee=env.names.get(func.value) if isinstance(func, cst.Name) else None)
        if method == "backward" and isinstance(receiver, TensorFacts):
            event.leaf_names = tuple(sorted(
                key for key, value in env.names.items()
                if isinstance(value, TensorFacts) and value.tid in receiver.leaves))
        self.trace.events.append(event)
        self.apply_call_effects(event, env)
        return result

    def call_result(self, node, qualname, method, receiver, args, kwargs, env, ctx) -> Value:
        if qualname is not None:
            return self.torch_call(node, qualname, args, kwargs, env, ctx)
        if method is not None:
            if isinstance(receiver, TensorFacts):
                return self.tensor_method(node, receiver, method, args, kwargs, env, ctx)
            if isinstance(receiver, GradAttr):
                owner = receiver.owner
                as_tensor = TensorFacts(tid=self.new_id(), requires_grad=False, is_leaf=True,
                                        dtype=owner.dtype, shape=owner.shape,
                                        no_grad_reason="grad_result", opaque=False)
                if method == "backward":
                    return UNKNOWN
                return self.tensor_method(node, as_tensor, method, args, kwargs, env, ctx)
            if isinstance(receiver, ModuleValue):
                if method == "parameters":
                    return _Parameters(receiver.mid, receiver.params_require_grad)
                if method in _MODULE_METHODS_RETURNING_SELF:
                    return self._module_method(receiver, method, node, env)
                return UNKNOWN
            if method == "requires_grad_" and _is_copy_call(node.func.value) \
                    and _first_arg_bool(node, "requires_grad", default=True) is True:
                # `x.clone().requires_grad_()`: a new tensor whatever `x` was. Leaf or
                # not depends on `x`, but either way its `.grad` is None until a backward.
                tid = self.new_id()
                return TensorFacts(tid=tid, requires_grad=True, is_leaf=None, grad="none",
                                   leaves=frozenset({tid}), opaque=True,
                                   made_in_loop=self._loop_id(ctx))
            return UNKNOWN
        func = node.func
        if isinstance(func, cst.Name):
            if func.value == "range":
                return _RangeValue()
            if func.value == "enumerate" and args:
                return _Enumerated(args[0])
            if func.value in ("float", "int", "bool"):
                return NumberValue(func.value)
            target = env.names.get(func.value)
            if isinstance(target, ModuleValue):
                return self.module_call(target, args, kwargs, ctx)
            if not isinstance(target, (TensorFacts, NumberValue, SequenceValue, OptimizerValue)):
                has_params = self.summary.module_class(func.value)
                if has_params is not None:
                    # An instance of an nn.Module subclass defined in this file.
                    with_params = has_params or None
                    return ModuleValue(self.new_id(), f"local.{func.value}", has_params=with_params,
                                       params_require_grad=True if with_params else None,
                                       saves=True if with_params else None)
        return UNKNOWN

    def apply_call_effects(self, event: CallEvent, env: Env) -> None:
        method, receiver = event.method, event.receiver
        if method == "backward" and isinstance(receiver, TensorFacts) and not event.args[1:2]:
            retain = _kwarg_bool(event.node, "retain_graph")
            create = _kwarg_bool(event.node, "create_graph")
            if retain is False or (retain is None and not _has_kwarg(event.node, "retain_graph")
                                   and create is not True):
                self._free(receiver.saved_nodes, env, event.node)
            self._grads_reached(receiver, env, "graph" if create else "set")
        elif event.qualname == "torch.autograd.grad":
            retain = _kwarg_bool(event.node, "retain_graph")
            create = _kwarg_bool(event.node, "create_graph")
            outputs = event.args[0] if event.args else event.kwargs.get("outputs")
            if isinstance(outputs, TensorFacts) and not _has_kwarg(event.node, "retain_graph") \
                    and create is not True:
                self._free(outputs.saved_nodes, env, event.node)
        elif method == "zero_grad" and isinstance(receiver, OptimizerValue):
            set_to_none = _kwarg_bool(event.node, "set_to_none")
            if set_to_none is not False and not _has_positional(event.node):
                for key, value in list(env.names.items()):
                    if isinstance(value, TensorFacts) and value.tid in receiver.tensors:
                        env.names[key] = replace(value, grad="none")
        elif method is not None and method in api.INPLACE_METHODS \
                and isinstance(receiver, TensorFacts):
            self._inplace(event.node, event.ctx, receiver, event.node.func.value, method, env)
        elif method == "requires_grad_" and isinstance(receiver, TensorFacts) \
                and isinstance(event.result, TensorFacts):
            env.update_tensor(receiver.tid, event.result)
        elif method == "retain_grad" and isinstance(receiver, TensorFacts):
            env.update_tensor(receiver.tid, replace(receiver, retains_grad=True))
        elif event.qualname is None and event.method is None and event.callee_summary is None \
                and isinstance(event.node.func, cst.Name):
            # A function we cannot see may run backward on anything it was given.
            for value in event.args:
                if isinstance(value, TensorFacts):
                    env.update_tensor(value.tid, replace(value, grad=None))
        reaches_unknown = (event.callee_summary is not None and event.callee_summary.calls_backward) \
            or (method == "backward" and not isinstance(receiver, TensorFacts))
        if reaches_unknown:
            # A backward through a graph we do not know may fill any leaf's .grad.
            for key, value in list(env.names.items()):
                if isinstance(value, TensorFacts) and value.grad == "none":
                    env.names[key] = replace(value, grad=None)
        elif method is not None and event.qualname is None and not isinstance(receiver, TensorFacts):
            # `trainer.fit(x)`: a method we cannot see may run backward on what it is given.
            for value in event.args:
                if isinstance(value, TensorFacts) and value.grad is not None:
                    env.update_tensor(value.tid, replace(value, grad=None))

    @staticmethod
    def _free(nodes: frozenset, env: Env, call: cst.Call) -> None:
        """A backward without retain_graph (`call`) frees what these graph nodes saved."""
        if not nodes:
            return
        env.freed = {**env.freed, **{n: call for n in nodes if n not in env.freed}}
        for key, value in list(env.names.items()):
            if isinstance(value, TensorFacts) and not value.graph_freed and value.saved_nodes & nodes:
                env.names[key] = replace(value, graph_freed=True)

    def _grads_reached(self, output: TensorFacts, env: Env, state: str) -> None:
        """After `output.backward()`: the leaves in its history have a `.grad`
        ("graph" when create_graph=True made it differentiable)."""
        for key, value in list(env.names.items()):
            if not isinstance(value, TensorFacts):
                continue
            if value.tid in output.leaves:
                env.names[key] = replace(value, grad=state)
            elif value.grad == "none" and output.opaque:
                env.names[key] = replace(value, grad=None)

    # -- torch functions ------------------------------------------------------------

    def torch_call(self, node, qualname, args, kwargs, env, ctx) -> Value:
        name = qualname.rsplit(".", 1)[-1]
        if qualname == "torch.normal" and any(isinstance(a, TensorFacts) for a in args):
            # normal(mean_tensor, std) is an op, differentiable in `mean`
            tensors = [a for a in args if isinstance(a, TensorFacts)]
            return self.derived("normal", list(args), ctx, shape=tensors[0].shape,
                                dtype=tensors[0].dtype)
        if qualname in api.FACTORIES or qualname in api.DATA_FACTORIES or qualname in api.LIKE_FACTORIES:
            return self.factory(node, qualname, args, kwargs, ctx)
        if qualname == "torch.nn.Parameter" or qualname == "torch.nn.parameter.Parameter":
            base = args[0] if args else kwargs.get("data", UNKNOWN)
            flag = _first_arg_bool(node, "requires_grad", default=True, position=1)
            return self.new_tensor(ctx, requires_grad=flag, is_leaf=True,
                                   dtype=base.dtype if isinstance(base, TensorFacts) else None,
                                   shape=base.shape if isinstance(base, TensorFacts) else None,
                                   ignore_no_grad=True)
        if qualname == "torch.autograd.grad":
            create = _kwarg_bool(node, "create_graph")
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", UNKNOWN)
            shape = inputs.shape if isinstance(inputs, TensorFacts) else None
            dtype = inputs.dtype if isinstance(inputs, TensorFacts) else None
            if create is True:
                item = self.new_tensor(ctx, requires_grad=None, is_leaf=None, dtype=dtype, shape=shape)
            elif create is None and _has_kwarg(node, "create_graph"):
                item = UNKNOWN
            else:
                item = self.new_tensor(ctx, requires_grad=False, is_leaf=True, dtype=dtype,
                                       shape=shape, reason="grad_result")
            return _GradResult(item)
        if qualname.startswith("torch.nn.") and qualname.count(".") == 2:
            return self.nn_class(node, name, args, kwargs)
        if qualname.startswith("torch.optim.") and name in api.OPTIMIZERS:
            return self.optimizer(args, kwargs, env)
        if qualname.startswith("torch.nn.functional.") and name in api.FUNCTIONAL_LOSSES:
            scalar = _reduces(node, api.FUNCTIONAL_LOSS_REDUCTION.get(name))
            tensors = [v for v in args if isinstance(v, TensorFacts)]
            return self.derived(name, list(args), ctx, shape=() if scalar else None,
                                dtype=_float_of(tensors), saves=True)
        parent, _, _ = qualname.rpartition(".")
        if parent in ("torch", "torch.nn.functional", "torch.special") and args:
            first = args[0]
            if name in api.REDUCTIONS and isinstance(first, TensorFacts):
                return self.reduction(name, first, args[1:], kwargs, ctx)
            if name in api.UNARY_OPS and isinstance(first, TensorFacts):
                if name in ("mul", "div", "add", "sub", "pow") and len(args) > 1:
                    return self.binary(name, first, args[1], ctx)
                return self.derived(name, [first], ctx, shape=first.shape, dtype=first.dtype)
            if name in ("matmul", "mm", "mv", "bmm") and len(args) > 1:
                return self.binary("matmul", args[0], args[1], ctx)
            if name in ("cat", "stack") and isinstance(first, SequenceValue):
                return self.derived(name, list(first.items), ctx, shape=None,
                                    dtype=_float_of([v for v in first.items if isinstance(v, TensorFacts)]))
        # the other differentiable functions: one tensor, shape not followed
        if qualname in api.DIFFERENTIABLE_FUNCTIONS and any(isinstance(a, TensorFacts) for a in args):
            tensors = [a for a in args if isinstance(a, TensorFacts)]
            return self.derived(name, list(args), ctx, shape=None, dtype=_float_of(tensors),
                                grad_fn=api.DIFFERENTIABLE_FUNCTIONS[qualname])
        return UNKNOWN

    def factory(self, node, qualname, args, kwargs, ctx) -> Value:
        requires = _first_arg_bool(node, "requires_grad", default=False, position=None)
        dtype_node = _kwarg_node(node, "dtype")
        dtype = None
        if dtype_node is not None:
            dtype = api.DTYPES.get(self._names.qualname(dtype_node) or "")
        shape = None
        if qualname in api.LIKE_FACTORIES:
            base = args[0] if args else UNKNOWN
            if isinstance(base, TensorFacts):
                shape = base.shape
                dtype = dtype or base.dtype
            if dtype_node is None and not isinstance(base, TensorFacts):
                dtype = None
        elif qualname in api.DATA_FACTORIES:
            data = args[0] if args else UNKNOWN
            if isinstance(data, TensorFacts) and qualname not in api.DATA_FACTORIES_CUTTING_GRAPH:
                # torch.as_tensor(t) / asarray(t) return `t` itself (converted when asked)
                return self.converted(t=data, dtype=dtype, device=None, op="to", ctx=ctx)
            shape, data_dtype = _literal_shape_dtype(node.args[0].value if node.args else None)
            if data_dtype == "float32" and self.summary.changes_default_dtype:
                data_dtype = None
            if isinstance(data, TensorFacts):
                shape, data_dtype = data.shape, data.dtype
            dtype = dtype or (data_dtype if dtype_node is None else None)
        else:
            default = api.FACTORIES[qualname]
            if qualname == "torch.arange":
                default = _arange_dtype(args)
            elif qualname == "torch.full" and len(args) > 1 and isinstance(args[1], NumberValue):
                default = {"int": "int64", "bool": "bool", "float": "float32"}.get(args[1].kind)
            if default in FLOAT_DTYPES and self.summary.changes_default_dtype:
                default = None
            if dtype_node is None:
                dtype = default
            shape = _factory_shape(qualname, node, args)
        device = _device_of(_kwarg_node(node, "device"), self._names)
        if _kwarg_node(node, "device") is None:
            base = args[0] if args and qualname in api.LIKE_FACTORIES else None
            device = base.device if isinstance(base, TensorFacts) else (
                "cpu" if qualname not in api.LIKE_FACTORIES else None)
        return self.new_tensor(ctx, requires_grad=bool(requires) if requires is not None else None,
                               is_leaf=True, dtype=dtype, shape=shape,
                               reason=None if requires else ("rewrap" if qualname in api.DATA_FACTORIES
                                                             else "never"),
                               device=device, ignore_no_grad=True)

    def nn_class(self, node, name, args, kwargs) -> Value:
        if name in api.NN_LAYERS_WITH_PARAMS:
            return ModuleValue(self.new_id(), f"torch.nn.{name}", has_params=True,
                               params_require_grad=True, saves=True)
        if name in api.NN_LAYERS_WITHOUT_PARAMS:
            inplace = name in api.NN_INPLACE_CAPABLE and _first_arg_bool(
                node, "inplace", default=False, position=None) is True
            return ModuleValue(self.new_id(), f"torch.nn.{name}", has_params=False,
                               params_require_grad=None, saves=None, inplace=inplace)
        if name in api.NN_LOSSES:
            reduces = _reduces(node, api.NN_LOSS_REDUCTION.get(name))
            return ModuleValue(self.new_id(), f"torch.nn.{name}", has_params=False,
                               params_require_grad=None, saves=True, loss_reduces=reduces)
        if name == "Sequential":
            layers = [a for a in args if isinstance(a, ModuleValue)]
            if len(layers) == len(args) and layers:
                has = any(l.has_params for l in layers)
                # An in-place activation right after a layer that saved its output
                # for backward (Sigmoid, Tanh, ...) overwrites what that backward needs.
                corrupts = any(
                    after.inplace and before.cls.rsplit(".", 1)[-1] in api.NN_ACTIVATIONS_SAVING_OUTPUT
                    for before, after in zip(layers, layers[1:]))
                return ModuleValue(self.new_id(), "torch.nn.Sequential", has_params=has,
                                   params_require_grad=True if has else None,
                                   saves=True if has else None, corrupts_saved=corrupts)
            return ModuleValue(self.new_id(), "torch.nn.Sequential", has_params=None,
                               params_require_grad=None)
        return UNKNOWN

    def optimizer(self, args, kwargs, env) -> Value:
        params = args[0] if args else kwargs.get("params", UNKNOWN)
        if isinstance(params, _Parameters):
            return OptimizerValue(self.new_id(), modules=frozenset({params.mid}), opaque=False)
        if isinstance(params, SequenceValue) and all(isinstance(v, TensorFacts) for v in params.items):
            return OptimizerValue(self.new_id(), tensors=frozenset(v.tid for v in params.items),
                                  opaque=False)
        return OptimizerValue(self.new_id())

    def module_call(self, module: ModuleValue, args, kwargs, ctx) -> Value:
        inputs = [v for v in args if isinstance(v, TensorFacts)]
        if module.loss_reduces is not None:
            return self.derived(module.cls.rsplit(".", 1)[-1], list(args), ctx,
                                shape=() if module.loss_reduces else None,
                                dtype=_float_of(inputs), saves=True)
        if module.has_params and module.params_require_grad is True:
            if ctx.no_grad is True:
                return self.new_tensor(ctx, requires_grad=False, is_leaf=True, reason="no_grad")
            if ctx.no_grad is None:
                return self.new_tensor(ctx, requires_grad=None, is_leaf=None)
            # The parameters are leaves we do not track by name: the history is opaque.
            saved = frozenset().union(*(t.saved_nodes for t in inputs)) | {self.new_id()}
            corrupted = frozenset().union(*(t.corrupted_by for t in inputs))
            if module.corrupts_saved:
                corrupted = corrupted | {module.mid}
            return TensorFacts(tid=self.new_id(), requires_grad=True, is_leaf=False,
                               dtype=_float_of(inputs) if len(inputs) == len(args) else None,
                               saved_nodes=saved,
                               leaves=frozenset().union(*(t.leaves for t in inputs)),
                               opaque=True, made_in_loop=self._loop_id(ctx),
                               corrupted_by=corrupted,
                               device=_same([t.device for t in inputs]) if inputs else None)
        if module.has_params is False and module.loss_reduces is None:
            return self.derived("module", list(args), ctx, shape=None, dtype=_float_of(inputs),
                                saves=module.saves)
        return UNKNOWN

    # -- tensor methods --------------------------------------------------------------

    def tensor_method(self, node, t: TensorFacts, method, args, kwargs, env, ctx) -> Value:
        if method == "backward":
            return UNKNOWN
        if method == "detach":
            return self.new_tensor(ctx, requires_grad=False, is_leaf=True, dtype=t.dtype,
                                   shape=t.shape, reason="detach", device=t.device)
        if method in ("item", "tolist"):
            kind = dtype_kind(t.dtype)
            return NumberValue(kind) if method == "item" and kind in ("float", "int", "bool") else UNKNOWN
        if method == "numpy":
            return UNKNOWN
        if method == "requires_grad_":
            return self._requires_grad_set(t, _first_arg_bool(node, "requires_grad", default=True))
        if method in ("retain_grad", "zero_grad"):
            return UNKNOWN
        if method in api.DTYPE_METHODS and not args:
            return self.converted(t, api.DTYPE_METHODS[method], None, method, ctx)
        if method in ("to", "type"):
            target = self._conversion_target(node, method)
            if target is None:
                return self.converted(t, None, None, "to", ctx, understood=False)
            return self.converted(t, target[0], target[1], "to", ctx)
        if method in ("cuda", "cpu"):
            positional = _positional_nodes(node)
            device = method if not positional else _device_of(positional[0], self._names, method)
            return self.converted(t, None, device, method, ctx, understood=device is not None)
        if method == "clone":
            return self.derived("clone", [t], ctx, shape=t.shape, dtype=t.dtype)
        if method in api.REDUCTIONS:
            return self.reduction(method, t, args, kwargs, ctx)
        if method in ("mul", "div", "add", "sub", "pow", "matmul", "mm", "mv") and args:
            return self.binary("matmul" if method in ("mm", "mv") else method, t, args[0], ctx)
        if method in api.UNARY_OPS:
            return self.derived(method, [t], ctx, shape=t.shape, dtype=t.dtype)
        if method in api.DIFFERENTIABLE_METHODS:
            return self.derived(method, [t, *args], ctx, shape=None, dtype=t.dtype,
                                grad_fn=api.DIFFERENTIABLE_FUNCTIONS.get(f"torch.{method}"))
        if method in api.SHAPE_OPS:
            return self.derived(method, [t, *args], ctx, shape=None, dtype=t.dtype)
        if method in api.INPLACE_METHODS:
            return t
        if method == "contiguous":
            return t
        return UNKNOWN

    def _module_method(self, module: ModuleValue, method: str, node: cst.Call, env: Env) -> ModuleValue:
        """`model.to(device)`, `.train()`, `.eval()`, `.requires_grad_(flag)`: the same
        module, changed in place."""
        new = module
        if method == "requires_grad_":
            flag = _first_arg_bool(node, "requires_grad", default=True)
            new = replace(module, params_require_grad=flag)
        elif method in ("train", "eval"):
            flag = _first_arg_bool(node, "mode", default=True) if method == "train" else False
            new = replace(module, training=flag)
        if new is not module:
            for key, value in list(env.names.items()):
                if isinstance(value, ModuleValue) and value.mid == module.mid:
                    env.names[key] = new
        return new

    @staticmethod
    def _requires_grad_set(t: TensorFacts, flag: bool | None) -> TensorFacts:
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
                       opaque=False if flag else t.opaque)

    def reduction(self, op: str, t: TensorFacts, args, kwargs, ctx) -> Value:
        """`t.sum()`, `t.max(1)`, `t.argmax()`...: a 0-dim tensor without a dim; with
        one, an unknown shape (and a (values, indices) pair for max/min/median)."""
        has_dim = bool(args) or "dim" in kwargs
        int_dtype = api.REDUCTION_DTYPES.get(op)
        if int_dtype is not None:
            # argmax, count_nonzero, all...: integer or bool results, no gradient
            return self.new_tensor(ctx, requires_grad=False, is_leaf=True, dtype=int_dtype,
                                   shape=None if has_dim else (), reason="never", device=t.device)
        key = f"{op}_dim" if has_dim else op
        values = self.derived(key if key in api.NON_SAVING_OPS or api.saves_input(key) is not None
                              else op, [t], ctx, shape=None if has_dim else (), dtype=t.dtype,
                              grad_fn=api.grad_fn_name(key))
        if has_dim and op in api.REDUCTIONS_DIM_RETURNS_PAIR:
            indices = self.new_tensor(ctx, requires_grad=False, is_leaf=True, dtype="int64",
                                      reason="never", device=t.device)
            return SequenceValue((values, indices))
        return values

    def converted(self, t: TensorFacts, dtype, device, op, ctx, understood: bool = True) -> Value:
        """`.double()`, `.to(...)`, `.cuda()`. `dtype`/`device`: the target, None for
        "unchanged". torch returns the very same tensor when nothing changes (a
        leaf stays a leaf); a real change gives a new, non-leaf tensor."""
        changes = []
        if dtype is not None:
            changes.append(None if t.dtype is None else dtype != t.dtype)
        if device is not None:
            changes.append(None if t.device is None else device != t.device)
        new_dtype = dtype or t.dtype
        if understood and all(c is False for c in changes):
            return t
        out = self.derived(op, [t], ctx, shape=t.shape, dtype=new_dtype if understood else None)
        if not isinstance(out, TensorFacts):
            return out
        if not understood or any(c is None for c in changes):
            # It may or may not be the same tensor.
            out = replace(out, is_leaf=None if t.requires_grad is not False else True,
                          dtype=None if not understood else out.dtype)
        return replace(out, device=device or t.device if understood else None)

    def _conversion_target(self, node: cst.Call, method: str):
        """(dtype, device) a `.to(...)`/`.type(...)` call asks for, None where it asks
        for no change; None as a whole when an argument is not understood."""
        dtype = device = None
        for arg in node.args:
            key = arg.keyword.value if arg.keyword is not None else None
            if key in ("non_blocking", "memory_format"):
                continue
            if key == "copy" or arg.star:
                return None
            found = api.DTYPES.get(self._names.qualname(arg.value) or "")
            if found and key in (None, "dtype"):
                dtype = found
                continue
            if method == "to" and key in (None, "device"):
                device = _device_of(arg.value, self._names)
                if device is not None:
                    continue
            return None
        return dtype, device

    # -- building values ---------------------------------------------------------------

    def new_tensor(self, ctx, requires_grad, is_leaf, dtype=None, shape=None, reason=None,
                   device=None, ignore_no_grad=False) -> TensorFacts:
        if not ignore_no_grad and ctx.no_grad is True:
            requires_grad, is_leaf, reason = False, True, "no_grad"
        tid = self.new_id()
        return TensorFacts(
            tid=tid, requires_grad=requires_grad, is_leaf=is_leaf, dtype=dtype, shape=shape,
            grad_fn=None if is_leaf else None,
            leaves=frozenset({tid}) if requires_grad and is_leaf else frozenset(),
            opaque=requires_grad is None or is_leaf is None,
            no_grad_reason=reason if requires_grad is False else None,
            grad="none" if requires_grad and is_leaf else None,
            device=device, made_in_loop=self._loop_id(ctx))

    def derived(self, op: str, inputs: list, ctx: Context, shape, dtype, saves=None,
                grad_fn: str | None = None) -> Value:
        """The result of an op on `inputs` (tensors, numbers or unknowns). `saves`:
        whether the op keeps tensors for backward (None: look `op` up in the tables
        measured from torch; an op they do not know is not claimed to save)."""
        tensors = [v for v in inputs if isinstance(v, TensorFacts)]
        unknown = [v for v in inputs if not isinstance(v, (TensorFacts, NumberValue))]
        if not tensors:
            return UNKNOWN
        if ctx.no_grad is True:
            return self.new_tensor(ctx, False, True, dtype, shape, "no_grad")
        flags = [t.requires_grad for t in tensors]
        if any(f is True for f in flags):
            requires = True if ctx.no_grad is False else None
        elif all(f is False for f in flags) and not unknown:
            requires = False if ctx.no_grad is False else False
        else:
            requires = None
        if requires is False:
            reasons = {t.no_grad_reason for t in tensors}
            reason = reasons.pop() if len(reasons) == 1 else "never"
            return self.new_tensor(ctx, False, True, dtype, shape, reason)
        other_is_tensor = len(tensors) > 1 if len(inputs) > 1 else None
        if saves is None:
            saves = _measured_saves(op, other_is_tensor)
        saved = frozenset().union(*(t.saved_nodes for t in tensors))
        node = None
        if saves and requires:
            node = self.new_id()
            saved = saved | {node}
            # Which of the inputs this op keeps for its backward: changing one in
            # place afterwards breaks the backward through `node`.
            if api.saves_input(op, bool(other_is_tensor)) and self._env is not None:
                for t in tensors:
                    self._env.update_tensor(t.tid, replace(t, saved_by=t.saved_by | {node}))
        opaque = any(t.opaque for t in tensors) or bool(unknown) or requires is None
        tid = self.new_id()
        return TensorFacts(
            tid=tid, requires_grad=requires,
            is_leaf=False if requires else None,
            dtype=dtype, shape=shape,
            grad_fn=(grad_fn or api.grad_fn_name(op)) if requires else None,
            saved_nodes=saved,
            leaves=frozenset().union(*(t.leaves for t in tensors)),
            opaque=opaque, no_grad_reason=None, grad=None,
            device=_same([t.device for t in tensors]),
            made_in_loop=self._loop_id(ctx),
            graph_freed=any(t.graph_freed for t in tensors),
            saved_by=frozenset({node}) if node is not None and api.saves_output(op, other_is_tensor)
            else frozenset(),
            parents=tuple(t for t in tensors if t.requires_grad is not False) if requires else (),
            corrupted_by=frozenset().union(*(t.corrupted_by for t in tensors)))

    def binary(self, op: str, left: Value, right: Value, ctx: Context) -> Value:
        if not isinstance(left, TensorFacts) and not isinstance(right, TensorFacts):
            if isinstance(left, NumberValue) and isinstance(right, NumberValue):
                kind = "float" if "float" in (left.kind, right.kind) or op == "div" else left.kind
                return NumberValue(kind)
            return UNKNOWN
        if op == "matmul":
            shape = _matmul_shape(_shape_of(left), _shape_of(right))
        else:
            shape = _broadcast(_shape_of(left), _shape_of(right))
        dtype = _promote(left, right, op)
        grad_fn = None
        operand_shapes = [v.shape if isinstance(v, TensorFacts) else None for v in (left, right)]
        # The name depends on the operands (MvBackward0, PowBackward1, RsubBackward1...),
        # known only when every tensor operand's rank is.
        if all(shape is not None or not isinstance(v, TensorFacts)
               for shape, v in zip(operand_shapes, (left, right))):
            grad_fn = api.grad_fn_name(op, arity_shapes=tuple(operand_shapes))
        elif op == "matmul":
            grad_fn = None
        out = self.derived(op, [left, right], ctx, shape=shape, dtype=dtype, grad_fn=grad_fn)
        if op == "matmul" and isinstance(out, TensorFacts) and grad_fn is None:
            out = replace(out, grad_fn=None)
        return out

    def inplace_result(self, target: TensorFacts, operand: Value, ctx: Context) -> TensorFacts:
        if ctx.no_grad is True:
            return target
        if isinstance(operand, TensorFacts) and operand.requires_grad and target.requires_grad is False:
            return replace(target, requires_grad=True, is_leaf=False, opaque=True, no_grad_reason=None)
        if not isinstance(operand, (TensorFacts, NumberValue)) and target.requires_grad is False:
            return replace(target, requires_grad=None, is_leaf=None, no_grad_reason=None)
        return target

    # -- helpers ---------------------------------------------------------------------

    @staticmethod
    def _loop_id(ctx: Context):
        return id(ctx.loop) if ctx.loop is not None else None

    def _grad_mode_of(self, expr) -> bool | None:
        """True for no_grad/inference_mode, False for enable_grad, None otherwise."""
        call = expr if isinstance(expr, cst.Call) else None
        qual = self._names.qualname(call.func if call else expr)
        if qual is None:
            return None
        if qual == "torch.no_grad":
            return True
        if qual == "torch.inference_mode":
            if call is not None and call.args:
                flag = _literal_bool(call.args[0].value)
                return flag
            return True
        if qual == "torch.enable_grad":
            return False
        if qual == "torch.set_grad_enabled" and call is not None and call.args:
            flag = _literal_bool(call.args[0].value)
            return None if flag is None else not flag
        return None


# Module methods that return the module itself.
_MODULE_METHODS_RETURNING_SELF = {"to", "cuda", "cpu", "float", "double", "half", "train", "eval",
                                  "requires_grad_", "bfloat16", "type"}


# -- small values the interpreter uses internally ----------------------------------------

@dataclass(frozen=True)
class _RangeValue(Unknown):
    pass


@dataclass(frozen=True)
class _Enumerated(Unknown):
    inner: Value = UNKNOWN


@dataclass(frozen=True)
class _Parameters(Unknown):
    mid: object = None
    require_grad: Tri = None


@dataclass(frozen=True)
class _GradResult(Unknown):
    """The tuple `torch.autograd.grad` returns; every item is like `item`."""
    item: Value = UNKNOWN


# -- literal helpers -------------------------------------------------------------------

def _self_addition(assign: cst.Assign):
    """The name in `x = x + y`, else None."""
    value = assign.value
    if len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) \
            and isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add) \
            and isinstance(value.left, cst.Name) and value.left.value == assign.targets[0].target.value:
        return value.left
    return None


def _value_of_add(result: Value, before: Value) -> Value:
    """What was added to `before` to give `result`, as far as facts go: a tensor sum
    whose accumulator was a number was made from a tensor operand."""
    if isinstance(result, TensorFacts) and isinstance(before, NumberValue):
        return result
    return UNKNOWN


def _device_of(node, names: Names, default: str | None = None) -> str | None:
    """"cpu", "cuda", "cuda:1"... from a literal or `torch.device("...")`; None when
    the expression does not say (a variable)."""
    if node is None:
        return default
    if isinstance(node, cst.Call) and names.qualname(node.func) == "torch.device" and node.args:
        node = node.args[0].value
    if isinstance(node, cst.SimpleString):
        text = node.evaluated_value
        if isinstance(text, bytes):
            return None
        return "cuda" if text == "cuda:0" else text
    if isinstance(node, cst.Integer):
        index = _literal_number(node.value)
        return "cuda" if index == 0 else f"cuda:{index}"
    return None


def _reduces(call: cst.Call, default: str | None) -> bool | None:
    """Whether a loss call or class gives a 0-dim result: its `reduction`, or the
    default torch gives it. None when the argument is not a literal."""
    reduction = _kwarg_str(call, "reduction")
    if reduction is None:
        if _has_kwarg(call, "reduction"):
            return None
        reduction = default
    if reduction is None:
        return None
    return reduction in ("mean", "sum", "batchmean")


def _measured_saves(op: str, other_is_tensor: bool | None) -> bool | None:
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


_EMPTY_MODULE = cst.Module(body=[])


def _code(node) -> str:
    return _EMPTY_MODULE.code_for_node(node)


def _is_copy_call(node) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
        and node.func.attr.value in ("clone", "detach") and not node.args


def _literal_number(text: str):
    try:
        return int(text.replace("_", ""), 0)
    except ValueError:
        try:
            return float(text.replace("_", ""))
        except ValueError:
            return None


def _literal_bool(node) -> bool | None:
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value == "True"
    return None


def _kwarg_node(call: cst.Call, name: str):
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def _has_kwarg(call: cst.Call, name: str) -> bool:
    return _kwarg_node(call, name) is not None or any(arg.star == "**" for arg in call.args)


def _has_positional(call: cst.Call) -> bool:
    return any(arg.keyword is None for arg in call.args)


def _kwarg_bool(call: cst.Call, name: str) -> bool | None:
    node = _kwarg_node(call, name)
    return _literal_bool(node) if node is not None else None


def _kwarg_str(call: cst.Call, name: str) -> str | None:
    node = _kwarg_node(call, name)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return None


def _first_arg_bool(call: cst.Call, name: str, default, position: int | None = 0):
    """A bool argument given by keyword or at `position`; `default` when absent,
    None when present but not a literal."""
    node = _kwarg_node(call, name)
    if node is None and position is not None:
        positional = _positional_nodes(call)
        node = positional[position] if len(positional) > position else None
    if node is None:
        return None if any(arg.star == "**" for arg in call.args) else default
    return _literal_bool(node)


def _positional_nodes(call: cst.Call) -> list:
    return [arg.value for arg in call.args if arg.keyword is None and arg.star == ""]


def _literal_shape_dtype(node) -> tuple:
    """Shape and dtype of the data literal given to `torch.tensor`."""
    if node is None:
        return None, None
    if isinstance(node, cst.Integer):
        return (), "int64"
    if isinstance(node, cst.Float):
        return (), "float32"
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return (), "bool"
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _literal_shape_dtype(node.expression)
    if isinstance(node, (cst.List, cst.Tuple)):
        if not node.elements:
            return (0,), "float32"
        parts = [_literal_shape_dtype(e.value) for e in node.elements]
        shapes = {p[0] for p in parts}
        dtypes = {p[1] for p in parts}
        shape = (len(parts),) + shapes.pop() if len(shapes) == 1 and None not in shapes else None
        if None in dtypes:
            dtype = None
        elif "float32" in dtypes:
            dtype = "float32"
        elif "int64" in dtypes:
            dtype = "int64"
        else:
            dtype = "bool"
        return shape, dtype
    return None, None


def _factory_shape(qualname: str, call: cst.Call, args: list) -> tuple | None:
    positional = _positional_nodes(call)
    if qualname == "torch.linspace" or qualname == "torch.logspace":
        node = positional[2] if len(positional) > 2 else _kwarg_node(call, "steps")
        if isinstance(node, cst.Integer):
            return (_literal_number(node.value),)
        return None
    if qualname == "torch.arange":
        numbers = [a for a in args if isinstance(a, NumberValue)]
        if len(numbers) == len(args) and all(isinstance(n.value, (int, float)) for n in numbers):
            values = [n.value for n in numbers]
            if len(values) == 1:
                values = [0, values[0]]
            if len(values) in (2, 3):
                step = values[2] if len(values) == 3 else 1
                if step:
                    # torch: size = ceil((end - start) / step), computed in double
                    return (max(0, math.ceil((values[1] - values[0]) / step)),)
        return None
    if qualname == "torch.randint":
        size = positional[-1] if positional else _kwarg_node(call, "size")
        return _size_literal([size]) if size is not None else None
    if qualname in ("torch.full",):
        return _size_literal(positional[:1])
    if qualname == "torch.eye":
        dims = [_literal_number(n.value) for n in positional if isinstance(n, cst.Integer)]
        if len(dims) == len(positional) and dims:
            return (dims[0], dims[1] if len(dims) > 1 else dims[0])
        return None
    if qualname == "torch.normal":
        return None
    size = _kwarg_node(call, "size")
    if size is not None:
        return _size_literal([size])
    # sizes as positional values: literals or names bound to known ints
    if args and len(args) == len(positional):
        if len(args) == 1 and isinstance(args[0], SequenceValue):
            args = list(args[0].items)
        dims = [a.value if isinstance(a, NumberValue) and isinstance(a.value, int)
                and not isinstance(a.value, bool) else None for a in args]
        if all(d is not None for d in dims):
            return tuple(dims)
    return _size_literal(positional)


def _size_literal(nodes: list) -> tuple | None:
    """`3, 4` or `(3, 4)` or `[3, 4]` -> (3, 4); None when any part is not a literal."""
    if len(nodes) == 1 and isinstance(nodes[0], (cst.Tuple, cst.List)):
        nodes = [e.value for e in nodes[0].elements]
    dims = []
    for node in nodes:
        if isinstance(node, cst.Integer):
            dims.append(_literal_number(node.value))
        else:
            return None
    return tuple(dims)


def _arange_dtype(args: list) -> str | None:
    if args and all(isinstance(a, NumberValue) for a in args):
        return "float32" if any(a.kind == "float" for a in args) else "int64"
    return None


def _shape_of(value: Value):
    if isinstance(value, TensorFacts):
        return value.shape
    if isinstance(value, NumberValue):
        return ()
    return None


def _broadcast(*shapes):
    if any(s is None for s in shapes):
        return None
    ndim = max(len(s) for s in shapes)
    out = []
    for i in range(ndim):
        dims = {s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0}
        dims.discard(1)
        if len(dims) == 0:
            out.append(1)
        elif len(dims) == 1:
            out.append(dims.pop())
        else:
            return None if None in dims else None
    return tuple(out)


def _matmul_shape(a, b):
    if a is None or b is None or len(a) == 0 or len(b) == 0:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 2 and len(b) == 1:
        return (a[0],)
    if len(a) == 1 and len(b) == 2:
        return (b[1],)
    if len(a) == 2 and len(b) == 2:
        return (a[0], b[1])
    return None


def _promote(left: Value, right: Value, op: str) -> str | None:
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
    return None


def _float_of(tensors: list) -> str | None:
    dtypes = {t.dtype for t in tensors}
    return dtypes.pop() if len(dtypes) == 1 else None


def _same(values: list):
    return values[0] if values and all(v == values[0] for v in values) else None
