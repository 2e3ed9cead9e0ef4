"""Python's builtins and protocols: iteration, unpacking, comparisons, and what
an unknown call may do to what it is handed."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, BoundMethod, BuiltinName, ClassValue,
                            FunctionValue, GradAttr, MethodOf, NoneValue, NumberValue, ObjectRef, Partial,
                            StrValue, TensorFacts, TorchName, Tri, TupleValue, Unknown, join_all,
                            replace)
from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.semantics import Call, builtin, truth


@record
class RangeValue:
    count: int | None = None
    # The first number, when the start is known (even where the stop is not):
    # what the first pass of a loop over it sees.
    first: int | None = None


@record
class SliceValue:
    """`a:b:c` in a subscript, with the bounds' values."""
    lower: object = None
    upper: object = None
    step: object = None

    def indices(self, length: int):
        """The indices it picks from a sequence of `length`, or None when a bound is
        not a known int."""
        bounds = []
        for bound in (self.lower, self.upper, self.step):
            if bound is None or bound is NONE:
                bounds.append(None)
            elif isinstance(bound, NumberValue) and isinstance(bound.value, int) and not isinstance(bound.value, bool):
                bounds.append(bound.value)
            else:
                return None
        if bounds[2] == 0:
            return None
        return range(length)[slice(*bounds)]


@dataclass
class Iteration:
    """What a `for` loop over a value sees."""
    elements: list | None            # every element, when the collection is known and finite
    element: object                  # what any element is known to be
    nonempty: Tri = None
    # How many elements there are, when known though they are not listed (a tensor's rows).
    count: int | None = None
    # Each element is a new object on every pass (a DataLoader's batches): what an
    # earlier pass did to one (`data.requires_grad = True`, its `.grad`) is not seen.
    renewed: bool = False
    # The first element, when it alone is known (`range(0, n, k)` starts at 0): the
    # loop's first pass is its first iteration and sees it.
    first: object = None
    # A used-up iterator (a `filter(...)` an optimizer was made from): a loop over it
    # never runs its body.
    exhausted: bool = False

    def listed(self, count: int):
        """`count` elements, when they are listed or all alike and at least that many."""
        if self.elements is not None:
            return self.elements[:count] if len(self.elements) >= count else None
        if self.count is not None and self.count >= count:
            return [self.element] * count
        return None


def iterate(call: Call, value, small_ranges: bool = False) -> Iteration:
    """What iterating `value` gives. `small_ranges`: list the numbers of a short
    `range` (a comprehension builds one item per number; a `for` loop over epochs is
    better summarised in two passes)."""
    from autograd_lsp.analysis.semantics import containers, data, nn, objects, tensors
    state = call.state
    if isinstance(value, RangeValue):
        if small_ranges and value.count is not None and value.count <= 8:
            numbers = [NumberValue("int", i) for i in range(value.count)]
            return Iteration(numbers, NumberValue("int"), value.count > 0)
        return Iteration(None, NumberValue("int"), None if value.count is None else value.count > 0,
                         value.count,
                         first=None if value.first is None or value.count == 0 else NumberValue("int", value.first))
    if isinstance(value, TupleValue):
        return Iteration(list(value.items), join_all(value.items), bool(value.items))
    if isinstance(value, TensorFacts):
        shape = value.shape
        first = shape[0] if shape else None
        element = tensors.element(call, value)
        count = first if isinstance(first, int) else None
        # Rows of a known count, all alike (`for expert_logits in logits` of a stack of
        # three experts' outputs): a list made from them has that length.
        rows = [element] * count if count is not None and count <= MAX_SIZED_LIST else None
        return Iteration(rows, element, None if count is None else count > 0, count)
    if isinstance(value, StrValue):
        return Iteration(None, StrValue(), None)
    if isinstance(value, ObjectRef):
        if value.kind in ("list", "dict"):
            return containers.iterate(call, value)
        if value.kind == "module":
            return nn.iterate_module(call, value)
        if value.kind in ("loader", "dataset"):
            return data.iterate(call, value)
        fields = objects.named_tuple_fields(value)
        if fields is not None:
            items = [state.attr(value, name) for name in fields]
            return Iteration(items, join_all(items), bool(items))
    return Iteration(None, UNKNOWN, None)


def unpack(state, value, count: int | None):
    """The items of `value` when it is unpacked into `count` targets (None: any
    number); None when they are not known."""
    from autograd_lsp.analysis.semantics import containers, objects, tensors
    if isinstance(value, TupleValue):
        items = list(value.items)
    elif isinstance(value, ObjectRef) and value.kind == "list":
        items = containers.known_items(state, value)
        if items is None and count is not None:
            item = containers.item_of(state, value)
            return [item] * count if not isinstance(item, Unknown) else None
    elif isinstance(value, ObjectRef) and objects.named_tuple_fields(value) is not None:
        items = [state.attr(value, name) for name in objects.named_tuple_fields(value)]
    elif isinstance(value, TensorFacts) and count is not None and value.shape:
        first = value.shape[0]
        if first == count or first is None:
            return [tensors.row(state, value) for _ in range(count)]
        return None
    else:
        return None
    if items is None or (count is not None and len(items) != count):
        return None
    return [state.fresh(v) for v in items]


def unpack_star(state, value, count: int, starred: list):
    items = unpack(state, value, None)
    if items is None or not starred or len(items) < count - 1:
        return None
    star = starred[0]
    after = count - star - 1
    middle = items[star:len(items) - after]
    return items[:star] + [TupleValue(tuple(middle))] + items[len(items) - after:]


def compare(op, left, right) -> Tri:
    """The value of `left op right` when the analysis knows it."""
    if isinstance(op, (ast.Is, ast.IsNot)):
        found = _is(left, right)
        if found is None:
            return None
        return found if isinstance(op, ast.Is) else not found
    if isinstance(op, (ast.Eq, ast.NotEq)):
        found = _equal(left, right)
        if found is None:
            return None
        return found if isinstance(op, ast.Eq) else not found
    if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
        a, b = _number(left), _number(right)
        if a is None or b is None:
            return None
        return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b}[type(op)]
    return None


def _is(left, right) -> Tri:
    if right is NONE or isinstance(right, NoneValue):
        return _is_none(left)
    if left is NONE or isinstance(left, NoneValue):
        return _is_none(right)
    return None


def _is_none(value) -> Tri:
    if value is NONE or isinstance(value, NoneValue):
        return True
    if isinstance(value, GradAttr):
        state = value.owner.grad
        return True if state == "none" else False if state in ("set", "graph", "zero", "summed") else None
    if isinstance(value, (TensorFacts, NumberValue, StrValue, TupleValue, FunctionValue,
                          BoundMethod, ClassValue, TorchName, BuiltinName, MethodOf)):
        return False
    if isinstance(value, ObjectRef):
        return False
    return None


def _equal(left, right) -> Tri:
    for a, b in ((left, right), (right, left)):
        if isinstance(a, StrValue) and isinstance(b, StrValue):
            if a.value is None or b.value is None:
                return None
            return a.value == b.value
        if isinstance(a, NumberValue) and isinstance(b, NumberValue):
            if a.value is None or b.value is None:
                return None
            return a.value == b.value
    if (left is NONE) != (right is NONE) and not isinstance(left, Unknown) \
            and not isinstance(right, Unknown) and not isinstance(left, GradAttr) \
            and not isinstance(right, GradAttr):
        return False
    return None


def _number(value):
    if isinstance(value, NumberValue) and isinstance(value.value, (int, float)):
        return value.value
    return None


def havoc(call: Call) -> None:
    """A call the analysis cannot see into: what it was handed may have changed.
    A tensor's `.grad` may now be filled (it may run backward); a list or dict may
    hold other items; a module's or optimizer's gradients may have been cleared."""
    from autograd_lsp.analysis.semantics import autograd, containers, nn
    state = call.state
    if call.method == "backward":
        # A backward through a graph we do not know may fill any leaf's .grad.
        autograd.any_leaf_may_have_grad(call)
    values = list(call.args) + list(call.kwargs.values())
    if call.receiver is not None and not isinstance(call.receiver, (TorchName, ObjectRef)):
        # (An object the analysis knows is not handed to `obj.attr(...)` when the
        # attribute holds something unknown: `self.blocks(x)` calls the blocks.)
        values.append(call.receiver)
    for value in values:
        value = state.fresh(value)
        if isinstance(value, Partial):
            # It may be called: what it holds is handed on too.
            values.extend([*value.args, *(v for _, v in value.kwargs)])
        elif isinstance(value, TensorFacts):
            if value.grad is not None:
                state.update_tensor(replace(value, grad=None))
        elif isinstance(value, ObjectRef):
            if value.kind in ("list", "dict"):
                containers.forget(state, value)
            elif value.kind in ("module", "optimizer"):
                for t in nn.parameters_of(state, value)[0]:
                    if t.grad is not None:
                        state.update_tensor(replace(t, grad=None))




# -- the builtins --------------------------------------------------------------------------

# The longest list of alike items (`list(range(n))`) kept item by item, for its
# length: d2l's 1,000 examples fit; longer ones are joined item by item, at every
# join of states, for nothing more than their length.
MAX_SIZED_LIST = 1_024

@builtin("range")
def _range(call: Call):
    numbers = [call.number(i) for i in range(len(call.args))]
    if call.starred or not call.args:
        return RangeValue()
    start = 0 if len(numbers) == 1 else numbers[0]
    first = int(start) if isinstance(start, int) and not isinstance(start, bool) else None
    if any(n is None for n in numbers):
        return RangeValue(first=first)
    stop, step = (numbers[0], 1) if len(numbers) == 1 else (numbers[1], numbers[2] if len(numbers) > 2 else 1)
    if not step:
        return RangeValue()
    return RangeValue(max(0, len(range(int(start), int(stop), int(step)))), first)


@builtin("len")
def _len(call: Call):
    from autograd_lsp.analysis.semantics import containers
    value = call.arg(0)
    if isinstance(value, TupleValue):
        return NumberValue("int", len(value.items))
    if isinstance(value, ObjectRef) and value.kind == "list":
        items = containers.known_items(call.state, value)
        return NumberValue("int", len(items) if items is not None else None)
    if isinstance(value, ObjectRef) and value.kind == "module":
        # nn.Sequential / nn.ModuleList / nn.ModuleDict whose layers are known.
        attrs = call.state.attrs(value)
        layers = attrs.get("_items") if attrs.get("_items") is not None else attrs.get("_entries")
        return NumberValue("int", len(layers) if layers is not None else None)
    if isinstance(value, TensorFacts) and value.shape and isinstance(value.shape[0], int):
        return NumberValue("int", value.shape[0])
    return NumberValue("int")


@builtin("enumerate")
def _enumerate(call: Call):
    from autograd_lsp.analysis.semantics import containers
    inner = iterate(call, call.arg(0))
    if inner.elements is not None:
        return containers.new_list(call, [TupleValue((NumberValue("int", i), e))
                                          for i, e in enumerate(inner.elements)])
    ref = containers.new_list(call, None, item=TupleValue((NumberValue("int"), inner.element)),
                              nonempty=inner.nonempty, renewed=inner.renewed)
    # Whatever it counts, its first pass sees the first index (`if (step + 1) % accum
    # == 0:` is known to be false there).
    start = call.arg(1, "start", NumberValue("int", 0))
    if isinstance(start, NumberValue) and start.kind == "int" and start.value is not None:
        first = inner.first if inner.first is not None and not inner.renewed else inner.element
        call.state.set_attrs(ref, {"first": TupleValue((start, first))})
    return ref


@builtin("zip")
def _zip(call: Call):
    from autograd_lsp.analysis.semantics import containers
    if call.starred:
        if not call.args and len(call.spread) == 1 and not call.kwargs:
            return _transposed(call, iterate(call, call.spread[0]))
        return containers.new_list(call, None)
    inners = [iterate(call, a) for a in call.args]
    listed = [i.elements for i in inners if i.elements is not None]
    if inners and listed:
        # Pairs are known when some arguments list their elements and the others have
        # at least as many, all alike (`zip(self.heads, strides_tensor)`).
        count = min(len(e) for e in listed)
        columns = [i.listed(count) for i in inners]
        if all(c is not None for c in columns):
            return containers.new_list(call, [TupleValue(tuple(c[k] for c in columns)) for k in range(count)])
    nonempty = True if inners and all(i.nonempty for i in inners) else None
    return containers.new_list(call, None, item=TupleValue(tuple(i.element for i in inners)),
                               nonempty=nonempty, renewed=bool(inners) and all(i.renewed for i in inners))


def _transposed(call: Call, rows):
    """`zip(*rows)`: the columns of rows all alike. Rows that are tuples of k items
    give k columns, the j-th a tuple of the rows' j-th items (`states, actions =
    zip(*batch)` of a replay memory's transitions); their count is not known."""
    from autograd_lsp.analysis.semantics import containers
    if rows.elements is not None:
        # Known rows: the columns are known tuples when the rows are tuples of one length.
        if rows.elements and all(isinstance(r, TupleValue) for r in rows.elements) \
                and len({len(r.items) for r in rows.elements}) == 1:
            width = len(rows.elements[0].items)
            return containers.new_list(call, [TupleValue(tuple(r.items[j] for r in rows.elements))
                                              for j in range(width)])
        return containers.new_list(call, None)
    row = rows.element
    if not isinstance(row, TupleValue):
        return containers.new_list(call, None)
    # (Zero rows give no columns at all, and unpacking them raises: the columns are
    # those of the rows there are.)
    return containers.new_list(call, [containers.new_list(call, None, item=item, nonempty=rows.nonempty)
                                      for item in row.items])


@builtin("list", "tuple", "sorted", "reversed", "set", "frozenset", "iter")
def _sequence(call: Call):
    from autograd_lsp.analysis.semantics import containers
    name = call.node.func.id if isinstance(call.node.func, ast.Name) else "list"
    if not call.args:
        return TupleValue(()) if name == "tuple" else containers.new_list(call, [])
    inner = iterate(call, call.arg(0))
    if name == "iter":
        return call.arg(0)
    elements = inner.elements
    if elements is not None and name == "reversed":
        elements = list(reversed(elements))
    if name == "tuple" and elements is not None:
        return TupleValue(tuple(elements))
    if name in ("set", "frozenset"):
        return UNKNOWN
    if elements is not None and name != "sorted":
        return containers.new_list(call, list(elements))
    if inner.count is not None and inner.count <= MAX_SIZED_LIST and not inner.renewed:
        # `list(range(n))`: how many is known, each one alike (d2l's `indices`, then
        # shuffled and sliced into batches of a known size).
        return containers.new_list(call, [inner.element] * inner.count)
    return containers.new_list(call, None, item=inner.element, nonempty=inner.nonempty, renewed=inner.renewed)


@builtin("next")
def _next(call: Call):
    inner = iterate(call, call.arg(0))
    if inner.first is not None:
        # Taken: a loop over the rest no longer starts with it. (`next(range(3))`
        # raises at run time: there is no iterator to change.)
        if isinstance(call.arg(0), ObjectRef):
            call.state.set_attrs(call.arg(0), {"first": None})
        return inner.first
    return renewed(inner.element, call.state) if inner.renewed else inner.element


def renewed(value, state):
    """A batch a loader yields, taken again: new tensors, as the loader makes them
    (what was set on an earlier batch is not on this one), whose `.grad` is None."""
    if isinstance(value, TensorFacts) and value.is_leaf is True:
        return state.created(replace(value, grad="none", grad_since=None))
    if isinstance(value, TupleValue):
        return TupleValue(tuple(renewed(v, state) for v in value.items), value.names)
    return value


@builtin("dict")
def _dict(call: Call):
    from autograd_lsp.analysis.semantics import containers
    if call.args:
        if len(call.args) == 1 and not call.kwargs and not call.starred:
            return _dict_of(call, call.state.fresh(call.args[0]))
        return containers.new_dict(call, {}, False)
    return containers.new_dict(call, dict(call.kwargs), not call.starred)


def _dict_of(call: Call, source):
    """`dict(pairs)` (`dict(model.named_parameters())`, `dict(zip(names, ts))`) and
    `dict(other)`: the entries when every key is known, else what the values are."""
    from autograd_lsp.analysis.semantics import containers
    state = call.state
    if isinstance(source, ObjectRef) and source.kind == "dict":
        entries = containers.entries_of(state, source)
        if entries is not None:
            return containers.new_dict(call, entries, True)
        return containers.new_dict(call, {}, False, value=containers.item_of(state, source))
    inner = iterate(call, source)
    pairs = [state.fresh(e) for e in inner.elements] if inner.elements is not None else [state.fresh(inner.element)]
    if not all(isinstance(p, TupleValue) and len(p.items) == 2 for p in pairs):
        return containers.new_dict(call, {}, False)
    values = [state.fresh(p.items[1]) for p in pairs]
    keys = [containers.key_of(p.items[0]) for p in pairs]
    if inner.elements is not None and None not in keys:
        return containers.new_dict(call, dict(zip(keys, values)), True)
    return containers.new_dict(call, {}, False, value=join_all(values) if values else UNKNOWN)


@builtin("sum")
def _sum(call: Call):
    from autograd_lsp.analysis.semantics import tensors
    inner = iterate(call, call.arg(0))
    total = call.arg(1, "start", NumberValue("int", 0))
    values = inner.elements if inner.elements is not None else [inner.element]
    for value in values:
        total = tensors.binary(call, "add", total, call.state.fresh(value))
    return total


@builtin("min", "max")
def _min_max(call: Call):
    values = list(call.args)
    if len(values) == 1:
        inner = iterate(call, values[0])
        values = inner.elements if inner.elements is not None else [inner.element]
        if "default" in call.kwargs:
            # `max(priorities, default=1.0)`: the default when the items are none.
            values = [*values, call.kwargs["default"]]
    return join_all([call.state.fresh(v) for v in values]) if values else UNKNOWN


@builtin("abs", "round")
def _abs(call: Call):
    from autograd_lsp.analysis.semantics import tensors
    value = call.arg(0)
    if isinstance(value, TensorFacts):
        return tensors.derived(call, "abs", [value], shape=value.shape, dtype=value.dtype)
    if isinstance(value, NumberValue):
        return NumberValue(value.kind if call.node.func.id == "abs" else "int")
    return UNKNOWN


@builtin("float", "int", "bool", "complex")
def _number_of(call: Call):
    name = call.node.func.id
    value = call.arg(0)
    if isinstance(value, NumberValue) and value.value is not None:
        try:
            return NumberValue(name, {"float": float, "int": int, "bool": bool,
                                      "complex": complex}[name](value.value))
        except (TypeError, ValueError, OverflowError):
            return NumberValue(name)
    return NumberValue(name)


@builtin("str", "repr", "format", "chr", "hex", "oct", "bin", "ascii")
def _str(call: Call):
    return StrValue()


@builtin("print", "id", "hash", "input", "open", "vars", "dir", "globals", "locals", "callable",
         "hasattr", "type", "any", "all", "issubclass", "ord", "divmod", "pow", "map", "filter",
         "slice", "object", "property", "staticmethod", "classmethod", "exec", "eval", "compile",
         "breakpoint", "memoryview", "bytes", "bytearray", "delattr", "help", "aiter", "anext")
def _harmless(call: Call):
    name = call.node.func.id if isinstance(call.node.func, ast.Name) else ""
    if name in ("any", "all") and len(call.args) == 1 and not call.starred:
        return _any_all(call, name)
    if name in ("any", "all", "callable", "hasattr", "issubclass"):
        return NumberValue("bool")
    if name in ("id", "hash", "ord"):
        return NumberValue("int")
    if name in ("staticmethod", "classmethod", "property") and call.args:
        return call.arg(0)
    if name == "filter":
        return _filter(call)
    if name == "map":
        from autograd_lsp.analysis.semantics import containers
        return containers.new_list(call, None)
    return UNKNOWN


# Items a predicate is asked of, one call each, at most (a model's parameters: a
# large model's hundreds are left as "some of them").
FILTERED_LIMIT = 64


def _filter(call: Call):
    """`filter(lambda p: p.requires_grad, model.parameters())`: the items the predicate
    keeps, when each one's answer is known (the parameters an optimizer of a
    partly frozen model gets); else some of the items, which ones not known."""
    from autograd_lsp.analysis.facts import NONE, BoundMethod, FunctionValue
    from autograd_lsp.analysis.semantics import containers, truth_in
    if len(call.args) != 2 or call.kwargs or call.starred:
        return containers.new_list(call, None)
    predicate, source = call.args
    inner = iterate(call, source)
    if inner.elements is not None and len(inner.elements) <= FILTERED_LIMIT \
            and (predicate is NONE or isinstance(predicate, (FunctionValue, BoundMethod))):
        kept = []
        for index, element in enumerate(inner.elements):
            if predicate is NONE:
                answer = element
            else:
                ask = Call(call.node, [element], {}, call.state, call.ctx, call.walker, call.frame,
                           salt=call.salt + (("filter", index),))
                answer, _ = call.walker.apply(predicate, ask)
            known = truth_in(call.state, call.state.fresh(answer))
            if known is None:
                break
            if known:
                kept.append(element)
        else:
            return _one_shot(call, containers.new_list(call, kept))
    return _one_shot(call, containers.new_list(call, None, item=inner.element))


def _one_shot(call: Call, ref):
    call.state.set_attrs(ref, {"one_shot": True})
    return ref


def _any_all(call: Call, name: str):
    """`any(name.startswith(p) for p in prefixes)` over known truths."""
    from autograd_lsp.analysis.semantics import containers
    value = call.arg(0)
    items = list(value.items) if isinstance(value, TupleValue) else (
        containers.known_items(call.state, value) if isinstance(value, ObjectRef) and value.kind == "list"
        else None)
    if items is None:
        return NumberValue("bool")
    truths = [truth(call.state.fresh(i)) for i in items]
    if name == "any":
        if True in truths:
            return NumberValue("bool", True)
        return NumberValue("bool", False if None not in truths else None)
    if False in truths:
        return NumberValue("bool", False)
    return NumberValue("bool", True if None not in truths else None)


@builtin("isinstance")
def _isinstance(call: Call):
    value, classes = call.arg(0), call.arg(1)
    options = classes.items if isinstance(classes, TupleValue) else (classes,)
    answers = [_instance_of(value, c) for c in options]
    if any(a is True for a in answers):
        return NumberValue("bool", True)
    if answers and all(a is False for a in answers):
        return NumberValue("bool", False)
    return NumberValue("bool")


_PY_TYPES = {"int": ("int", "bool"), "float": ("float",), "bool": ("bool",), "complex": ("complex",)}


def _instance_of(value, cls) -> Tri:
    from autograd_lsp.analysis.semantics import nn
    if isinstance(cls, TorchName):
        name = cls.qualname
        if isinstance(value, TensorFacts):
            if name.endswith("Tensor") and name != "torch.Tensor":
                from autograd_lsp.analysis.semantics.tensors import is_legacy_type
                return is_legacy_type(value, name)
            return name in ("torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter") \
                and (name == "torch.Tensor" or value.is_param)
        if isinstance(value, ObjectRef):
            return nn.is_instance(value, name)
        if isinstance(value, (NumberValue, StrValue, NoneValue, TupleValue)):
            return False
        return None
    if isinstance(cls, BuiltinName):
        if isinstance(value, NumberValue):
            return value.kind in _PY_TYPES.get(cls.name, ())
        if isinstance(value, StrValue):
            return cls.name == "str"
        if isinstance(value, TupleValue):
            return cls.name == "tuple"
        if isinstance(value, NoneValue):
            return False
        if isinstance(value, ObjectRef) and value.kind in ("list", "dict"):
            return cls.name == value.kind
        if isinstance(value, (TensorFacts, ObjectRef)) and cls.name in ("int", "float", "str", "bool",
                                                                       "list", "dict", "tuple"):
            return False
        return None
    if isinstance(cls, ClassValue):
        if isinstance(value, ObjectRef) and isinstance(value.cls, ClassValue):
            if cls in value.cls.mro():
                return True
            return None if value.cls.has_unknown_base() else False
        if isinstance(value, (TensorFacts, NumberValue, StrValue, NoneValue)):
            return False
    return None


@builtin("super")
def _super(call: Call):
    from autograd_lsp.analysis.semantics import objects
    return objects.make_super(call)


@builtin("getattr")
def _getattr(call: Call):
    name = call.arg(1)
    if isinstance(name, StrValue) and name.value is not None:
        found = call.walker.member(call.arg(0), name.value, call.state, None, call.frame, call.ctx)
        if not isinstance(found, Unknown) or len(call.args) < 3:
            return found
    return call.arg(2) if len(call.args) > 2 else UNKNOWN


@builtin("setattr")
def _setattr(call: Call):
    from autograd_lsp.analysis.semantics import objects
    from autograd_lsp.analysis.semantics import nn
    name = call.arg(1)
    target = call.arg(0)
    known = name.value if isinstance(name, StrValue) and name.value is not None else None
    if isinstance(target, ObjectRef) and target.kind == "module":
        nn.set_child(call.state, target, known, call.arg(2))
    elif known is not None and isinstance(target, ObjectRef):
        objects.store_attribute(call.state, target, known, call.arg(2))
    elif isinstance(target, ObjectRef):
        havoc(call)
    return NONE
