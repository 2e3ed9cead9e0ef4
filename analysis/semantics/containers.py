"""Lists and dicts: objects in the heap whose items are followed.

A list's heap entry holds `items` (a tuple, when every item is known), `item`
(what any item is known to be) and `grad_item` (a tensor that requires grad and is
known to be one of the items: `states.append(cell(states[-1]))` in a loop makes a
list whose `item` may be the first state, which does not require grad, while its
stack does); a dict's holds `entries` (key -> value, when every key is a known
string or number) and `value`. Whatever the analysis
cannot follow (an unknown call handed the list, an unknown key) forgets the
items, and the joined `item` stays.
"""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, NumberValue, ObjectRef, StrValue, TensorFacts,
                            TupleValue, Unknown, join, join_all)
from autograd_lsp.analysis.semantics import Call, method
from autograd_lsp.analysis.semantics.builtins import SliceValue
from autograd_lsp.analysis.trace import StoreEvent




# -- making them ----------------------------------------------------------------------------

def new_list(call: Call, items, item=None, nonempty=None, renewed: bool = False) -> ObjectRef:
    """A list; `renewed`: its items, not listed, are distinct objects (a loader's
    batches), so iterating it gives a new one on every pass."""
    ref = ObjectRef(call.new_id(), "list", "list")
    if items is not None:
        items = tuple(items)
        item = join_all(items) if item is None else item
        nonempty = bool(items)
    attrs = {"items": items, "item": UNKNOWN if item is None else item,
             "nonempty": nonempty, "_loop": call.ctx.loop}
    if renewed and items is None:
        attrs["renewed"] = True
    call.state.new_object(ref, attrs)
    return ref


def new_dict(call: Call, entries: dict, known: bool, value=None) -> ObjectRef:
    ref = ObjectRef(call.new_id(), "dict", "dict")
    entries = {k: v for k, v in entries.items() if k is not None}
    summary = join_all(entries.values()) if value is None and entries else (value or UNKNOWN)
    call.state.new_object(ref, {"entries": entries if known else None, "value": summary,
                                "nonempty": bool(entries) or None, "_loop": call.ctx.loop})
    return ref


def store_event(state, node, ctx, container, value) -> StoreEvent:
    return StoreEvent(node, ctx, container, value, holds_tensor(state, value),
                      state.attrs(container).get("_loop") if isinstance(container, ObjectRef) else None)


def generator_of(call: Call, function, yielded=None, first=None) -> ObjectRef:
    """What calling a generator function gives: its items, all alike (`yielded`), the
    first one known apart when `first` is given."""
    ref = new_list(call, None, item=yielded if yielded is not None else UNKNOWN)
    if first is not None:
        call.state.set_attrs(ref, {"first": first})
    return ref


# -- reading them -------------------------------------------------------------------------------

def known_items(state, ref: ObjectRef):
    attrs = state.attrs(ref)
    items = attrs.get("items")
    return list(items) if isinstance(items, tuple) else None


def item_of(state, ref: ObjectRef):
    attrs = state.attrs(ref)
    if ref.kind == "dict":
        return state.fresh(attrs.get("value", UNKNOWN))
    return state.fresh(attrs.get("item", UNKNOWN))


def entries_of(state, ref: ObjectRef):
    entries = state.attrs(ref).get("entries")
    return dict(entries) if isinstance(entries, dict) else None


def iterate(call: Call, ref: ObjectRef):
    from autograd_lsp.analysis.semantics.builtins import Iteration
    state = call.state
    attrs = state.attrs(ref)
    if ref.kind == "list":
        items = attrs.get("items")
        consume(state, ref)
        if items is not None:
            items = [state.fresh(v) for v in items]
            return Iteration(items, join_all(items), bool(items), exhausted=bool(attrs.get("exhausted")))
        first = attrs.get("first")
        return Iteration(None, state.fresh(attrs.get("item", UNKNOWN)), attrs.get("nonempty"),
                         renewed=bool(attrs.get("renewed")),
                         first=state.fresh(first) if first is not None else None)
    entries = attrs.get("entries")
    if entries is not None:
        keys = [_key_value(k) for k in entries]
        return Iteration(keys, join_all(keys), bool(keys))
    return Iteration(None, UNKNOWN, attrs.get("nonempty"))


def consume(state, value) -> None:
    """An iterator (`filter(...)`) is used up by whoever iterates it (a loop, `list()`,
    an optimizer made from it): iterated again, it gives nothing."""
    if isinstance(value, ObjectRef) and value.kind == "list" and state.attrs(value).get("one_shot"):
        state.set_attrs(value, {"items": (), "nonempty": False, "first": None, "exhausted": True})


def _key_value(key):
    if isinstance(key, str):
        return StrValue(key)
    if isinstance(key, bool):
        return NumberValue("bool", key)
    if isinstance(key, int):
        return NumberValue("int", key)
    return UNKNOWN


def key_of(index):
    """A dict key or list index as a Python value, when known."""
    if isinstance(index, StrValue) and index.value is not None:
        return index.value
    if isinstance(index, NumberValue) and index.kind in ("int", "bool") and index.value is not None:
        return index.value
    return None


def getitem(walker, state, base, index, node, frame, ctx):
    from autograd_lsp.analysis.semantics import data, nn
    if isinstance(index, SliceValue) and (isinstance(base, TupleValue) or (
            isinstance(base, ObjectRef) and base.kind == "list")):
        items = list(base.items) if isinstance(base, TupleValue) else known_items(state, base)
        picked = index.indices(len(items)) if items is not None else None
        if picked is not None:
            chosen = [state.fresh(items[i]) for i in picked]
            if isinstance(base, TupleValue):
                return TupleValue(tuple(chosen))
            return new_list(walker.call_for(node, state, frame, ctx), chosen)
    if isinstance(base, TupleValue):
        key = key_of(index)
        if isinstance(key, int) and -len(base.items) <= key < len(base.items):
            return state.fresh(base.items[key])
        if isinstance(key, int):
            return UNKNOWN
        if index is not None and type(index).__name__ == "Unknown":
            return join_all(base.items) if base.items else UNKNOWN
        return UNKNOWN
    if isinstance(base, ObjectRef):
        if base.kind == "list":
            items = known_items(state, base)
            key = key_of(index)
            if items is not None and isinstance(key, int) and -len(items) <= key < len(items):
                return state.fresh(items[key])
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
                # a slice of a list is a list of the same items; `[::-1]`, `[:]` keep them all
                whole = isinstance(index, SliceValue) and index.lower in (None, NONE) \
                    and index.upper in (None, NONE)
                return new_list(walker.call_for(node, state, frame, ctx), None, item=item_of(state, base),
                                nonempty=state.attrs(base).get("nonempty") if whole else None)
            return item_of(state, base)
        if base.kind == "dict":
            entries = entries_of(state, base)
            key = key_of(index)
            factory = state.attrs(base).get("_factory")
            if factory is not None and (entries is None or key is None or key not in entries):
                # A defaultdict makes the missing entry it is asked for, and keeps it.
                made = _made_by(factory, walker.call_for(node, state, frame, ctx))
                setitem(state, base, index, made)
                # (With entries not known, the one asked for may exist already.)
                return made if key is not None and entries is not None else item_of(state, base)
            if entries is not None and key is not None:
                return state.fresh(entries.get(key, UNKNOWN))
            return item_of(state, base)
        if base.kind == "module":
            return nn.module_item(state, base, index)
        if base.kind == "dataset":
            return data.dataset_item(walker.call_for(node, state, frame, ctx), base)
    if isinstance(base, StrValue):
        return StrValue()
    return UNKNOWN


# The factories of a defaultdict whose missing entries the analysis makes itself.
DEFAULT_FACTORIES = ("list", "dict", "int", "float")


def _made_by(factory: str, call: Call):
    if factory == "list":
        return new_list(call, [])
    if factory == "dict":
        return new_dict(call, {}, True)
    return NumberValue(factory, 0 if factory == "int" else 0.0)


# -- changing them ------------------------------------------------------------------------------

def setitem(state, ref: ObjectRef, index, value) -> None:
    attrs = state.attrs(ref)
    key = key_of(index)
    if ref.kind == "list":
        items = attrs.get("items")
        if items is not None and isinstance(key, int) and -len(items) <= key < len(items):
            items = list(items)
            items[key] = value
            state.set_attrs(ref, {"items": tuple(items), "item": join_all(items)})
        else:
            state.set_attrs(ref, {"items": None, "item": join(attrs.get("item", UNKNOWN), value),
                                  "grad_item": None})
    else:
        entries = attrs.get("entries")
        if entries is not None and key is not None:
            new = {**entries, key: value}
            state.set_attrs(ref, {"entries": new, "value": join_all(new.values()), "nonempty": True})
        else:
            old = attrs.get("value", UNKNOWN)
            state.set_attrs(ref, {"entries": None,
                                  "value": value if not attrs.get("nonempty") and old is UNKNOWN
                                  else join(old, value), "nonempty": True})


def forget(state, ref: ObjectRef) -> None:
    """Someone we cannot see may have changed the items."""
    if ref.kind == "list":
        state.set_attrs(ref, {"items": None, "item": UNKNOWN, "nonempty": None, "grad_item": None})
    else:
        state.set_attrs(ref, {"entries": None, "value": UNKNOWN, "nonempty": None})


def concatenate(call: Call, left, right):
    state = call.state
    if isinstance(left, TupleValue) and isinstance(right, TupleValue):
        return TupleValue(left.items + right.items)
    if isinstance(left, ObjectRef) and isinstance(right, ObjectRef) \
            and left.kind == "list" and right.kind == "list":
        a, b = known_items(state, left), known_items(state, right)
        if a is not None and b is not None:
            return new_list(call, a + b)
        return new_list(call, None, item=join(item_of(state, left), item_of(state, right)))
    return UNKNOWN


def repeat(call: Call, value, times=None):
    """`[x] * n`: the items n times over (when n and the items are known and few)."""
    state = call.state
    count = times.value if isinstance(times, NumberValue) and isinstance(times.value, int) else None
    items = known_items(state, value) if isinstance(value, ObjectRef) and value.kind == "list" else (
        list(value.items) if isinstance(value, TupleValue) else None)
    if items is not None and count is not None and 0 <= count * len(items) <= 64:
        if isinstance(value, TupleValue):
            return TupleValue(tuple(items) * count)
        return new_list(call, items * count)
    if isinstance(value, ObjectRef) and value.kind == "list":
        return new_list(call, None, item=item_of(state, value))
    if isinstance(value, TupleValue):
        return new_list(call, None, item=join_all(value.items))
    return UNKNOWN


def is_sequence(value) -> bool:
    return isinstance(value, TupleValue) or (isinstance(value, ObjectRef) and value.kind == "list")


def as_kwargs(state, value):
    if isinstance(value, ObjectRef) and value.kind == "dict":
        entries = entries_of(state, value)
        if entries is not None and all(isinstance(k, str) for k in entries):
            return {k: state.fresh(v) for k, v in entries.items()}
    return None


# -- methods ------------------------------------------------------------------------------------

@method("list", "append")
def _append(call: Call):
    ref = call.receiver
    value = call.arg(0)
    state = call.state
    attrs = state.attrs(ref)
    items = attrs.get("items")
    first = (not attrs.get("nonempty") and items == ()) or (attrs.get("bounded") and attrs.get("nonempty") is False)
    state.set_attrs(ref, {"items": None if items is None else items + (value,),
                          "item": value if first else join(attrs.get("item", UNKNOWN), value),
                          "nonempty": True, "grad_item": _grad_item(state, ref, value)})
    call.walker.emit(store_event(state, call.node, call.ctx, ref, value))
    return NONE


@method("list", "insert")
def _insert(call: Call):
    value = call.arg(1)
    state = call.state
    attrs = state.attrs(call.receiver)
    items = attrs.get("items")
    first = not attrs.get("nonempty") and items == ()
    # (`returns.insert(0, R)`, the discounted returns built backwards.)
    at = call.number(0, "index")
    # Slicing places it as list.insert does, for any index (past either end too).
    items = items[:at] + (value,) + items[at:] if items is not None and isinstance(at, int) \
        and not call.starred else None
    state.set_attrs(call.receiver, {"items": items,
                                    "item": value if first else join(attrs.get("item", UNKNOWN), value),
                                    "nonempty": True, "grad_item": _grad_item(state, call.receiver, value)})
    call.walker.emit(store_event(state, call.node, call.ctx, call.receiver, value))
    return NONE


@method("list", "extend")
def _extend(call: Call):
    from autograd_lsp.analysis.semantics.builtins import iterate
    state = call.state
    ref = call.receiver
    inner = iterate(call, call.arg(0))
    attrs = state.attrs(ref)
    items = attrs.get("items")
    if items is not None and inner.elements is not None:
        new = items + tuple(inner.elements)
        state.set_attrs(ref, {"items": new, "item": join_all(new), "nonempty": bool(new)})
    else:
        item = inner.element if items == () else join(attrs.get("item", UNKNOWN), inner.element)
        state.set_attrs(ref, {"items": None, "item": item,
                              "nonempty": True if inner.nonempty else attrs.get("nonempty")})
    call.walker.emit(store_event(state, call.node, call.ctx, ref, inner.element))
    return NONE


@method("list", "pop")
def _pop(call: Call):
    state = call.state
    item = item_of(state, call.receiver)
    attrs = state.attrs(call.receiver)
    state.set_attrs(call.receiver, {"items": None, "nonempty": None, "item": attrs.get("item", UNKNOWN),
                                    "grad_item": None})
    return item


@method("list", "clear")
def _clear(call: Call):
    clear(call.state, call.receiver)
    return NONE


def clear(state, ref: ObjectRef) -> None:
    """The list holds nothing any more (`items.clear()`, `del items[:]`)."""
    state.set_attrs(ref, {"items": (), "item": UNKNOWN, "nonempty": False, "grad_item": None})


@method("list", "copy")
def _copy(call: Call):
    items = known_items(call.state, call.receiver)
    return new_list(call, items, item=item_of(call.state, call.receiver))


@method("list", "index", "count")
def _index(call: Call):
    return NumberValue("int")


@method("list", "sort", "reverse", "remove")
def _reorder(call: Call):
    forget_order(call.state, call.receiver, same_length=call.method != "remove")
    return NONE


def forget_order(state, ref: ObjectRef, same_length: bool = False) -> None:
    """The list's items are no longer known by position (what any item is stays).
    `same_length`: reordered in place, so there are as many as before, each any of
    them (`random.shuffle(indices)`, then batches sliced from it)."""
    attrs = state.attrs(ref)
    items = attrs.get("items")
    anyone = attrs.get("item", UNKNOWN)
    kept = (anyone,) * len(items) if same_length and isinstance(items, tuple) else None
    state.set_attrs(ref, {"items": kept, "item": anyone, "grad_item": None})


def contains(state, container, key):
    """`key in container` when it is known: a known key of a dict whose entries are
    all known, a known str or number among the known items of a list or tuple."""
    wanted = _plain(key)
    if wanted is None:
        return None
    if isinstance(container, StrValue):
        return None if container.value is None or not isinstance(wanted, str) else wanted in container.value
    if isinstance(container, ObjectRef) and container.kind == "dict":
        entries = entries_of(state, container)
        return None if entries is None else wanted in entries
    if isinstance(container, ObjectRef) and container.kind == "list":
        items = known_items(state, container)
    elif isinstance(container, TupleValue):
        items = list(container.items)
    else:
        return None
    if items is None:
        return None
    values = [_plain(state.fresh(i)) for i in items]
    if wanted in values:
        return True
    return False if None not in values else None


def _plain(value):
    """A known str or number as the Python value it is."""
    if isinstance(value, NumberValue) and isinstance(value.value, float):
        return value.value
    return key_of(value)


def _grad_item(state, ref: ObjectRef, added):
    """The list's `grad_item` once `added` is one of its items."""
    added = state.fresh(added)
    if isinstance(added, TensorFacts) and added.requires_grad is True:
        return added
    return state.attrs(ref).get("grad_item")


def grad_item(state, ref) -> TensorFacts | None:
    """A tensor that requires grad and is one of the list's items, if one is known."""
    if not isinstance(ref, ObjectRef) or ref.kind != "list":
        return None
    found = state.attrs(ref).get("grad_item")
    return state.fresh(found) if isinstance(found, TensorFacts) else None


@method("dict", "items")
def _items(call: Call):
    state = call.state
    entries = entries_of(state, call.receiver)
    if entries is not None:
        return new_list(call, [TupleValue((_key_value(k), state.fresh(v))) for k, v in entries.items()])
    return new_list(call, None, item=TupleValue((UNKNOWN, item_of(state, call.receiver))))


@method("dict", "values")
def _values(call: Call):
    state = call.state
    entries = entries_of(state, call.receiver)
    if entries is not None:
        return new_list(call, [state.fresh(v) for v in entries.values()])
    return new_list(call, None, item=item_of(state, call.receiver))


@method("dict", "keys")
def _keys(call: Call):
    entries = entries_of(call.state, call.receiver)
    if entries is not None:
        return new_list(call, [_key_value(k) for k in entries])
    return new_list(call, None)


@method("dict", "get", "pop")
def _get(call: Call):
    state = call.state
    entries = entries_of(state, call.receiver)
    key = key_of(call.arg(0))
    default = call.arg(1, None, NONE)
    if call.method == "pop":
        attrs = state.attrs(call.receiver)
        if entries is not None and key is not None:
            value = entries.pop(key, None)
            state.set_attrs(call.receiver, {"entries": entries})
            return state.fresh(value) if value is not None else default
        state.set_attrs(call.receiver, {"entries": None, "value": attrs.get("value", UNKNOWN)})
        return join(item_of(state, call.receiver), default)
    if entries is not None and key is not None:
        return state.fresh(entries[key]) if key in entries else default
    return join(item_of(state, call.receiver), default)


@method("dict", "setdefault")
def _setdefault(call: Call):
    state = call.state
    entries = entries_of(state, call.receiver)
    key = key_of(call.arg(0))
    if entries is not None and key is not None and key in entries:
        return state.fresh(entries[key])
    setitem(state, call.receiver, call.arg(0), call.arg(1, None, NONE))
    return call.arg(1, None, NONE)


@method("dict", "update")
def _update(call: Call):
    state = call.state
    other = call.arg(0, None, None)
    spread = as_kwargs(state, other) if other is not None else {}
    if spread is None:
        forget(state, call.receiver)
        return NONE
    for key, value in {**spread, **call.kwargs}.items():
        setitem(state, call.receiver, StrValue(key), value)
        call.walker.emit(store_event(state, call.node, call.ctx, call.receiver, value))
    return NONE


@method("dict", "copy")
def _dict_copy(call: Call):
    entries = entries_of(call.state, call.receiver)
    return new_dict(call, entries or {}, entries is not None, value=item_of(call.state, call.receiver))


@method("dict", "clear")
def _dict_clear(call: Call):
    call.state.set_attrs(call.receiver, {"entries": {}, "value": UNKNOWN, "nonempty": False})
    return NONE


@method("str", "format", "join", "upper", "lower", "strip", "replace", "split", "startswith",
        "endswith", "rjust", "ljust", "center")
def _str_method(call: Call):
    """String methods, computed when the string and the arguments are known (the
    names `named_parameters()` yields, tested to freeze a part of a model)."""
    text = call.receiver.value
    if call.method in ("startswith", "endswith"):
        wanted = call.arg(0)
        options = wanted.items if isinstance(wanted, TupleValue) else (wanted,)
        words = [o.value if isinstance(o, StrValue) else None for o in options]
        if text is None or None in words or len(call.args) != 1 or call.kwargs:
            return NumberValue("bool")
        return NumberValue("bool", getattr(text, call.method)(tuple(words)))
    if call.method in ("upper", "lower", "strip") and text is not None and not call.args and not call.kwargs:
        return StrValue(getattr(text, call.method)())
    return StrValue()


@method("tuple", "index", "count")
def _tuple_index(call: Call):
    return NumberValue("int")


def unknown_result(call: Call):
    return UNKNOWN


def is_container(value) -> bool:
    return isinstance(value, ObjectRef) and value.kind in ("list", "dict")


def holds_tensor(state, value, depth: int = 3):
    """A tensor kept inside `value` (a tensor itself, a tuple, a list or dict), or None."""
    if isinstance(value, TensorFacts):
        return state.fresh(value)
    if depth <= 0:
        return None
    if isinstance(value, TupleValue):
        for item in value.items:
            found = holds_tensor(state, item, depth - 1)
            if found is not None:
                return found
    if isinstance(value, ObjectRef) and value.kind in ("list", "dict"):
        attrs = state.attrs(value)
        candidates = list((attrs.get("entries") or {}).values()) + list(attrs.get("items") or ())
        candidates.append(attrs.get("item" if value.kind == "list" else "value", UNKNOWN))
        for item in candidates:
            found = holds_tensor(state, item, depth - 1)
            if found is not None:
                return found
    return None


__all__ = ["new_list", "new_dict", "getitem", "setitem", "forget", "iterate", "known_items",
           "item_of", "entries_of", "concatenate", "repeat", "as_kwargs", "holds_tensor",
           "Unknown"]
