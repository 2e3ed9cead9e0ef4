"""What a program has changed so far, at one point of its run: the store the
walker threads through statements and calls.

Names hold immutable values (analysis/facts.py). What changes in place is kept
here, by identity, so that a change made through one name (or inside a called
function) is seen through every other name:

- `tensors`: the current facts of tensors changed since they were made (an
  in-place op, a backward filling `.grad`, `requires_grad_()`...);
- `heap`: the attributes of objects (`ObjectRef`): a module's layers and
  parameters, an optimizer's parameters, a user object's fields, list items;
- `freed` and `clobbered`: graph nodes a backward freed, and nodes whose saved
  tensor an in-place op changed since;
- `no_grad`: torch's grad mode (True inside `no_grad`, None when unknown).

A State is copied at a branch and the copies are joined where the paths meet.
Dicts are never changed in place once shared: a heap object's attribute dict is
replaced, not updated, so copying a State is a handful of shallow dict copies.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass, field

from autograd_lsp.analysis.facts import (NONE, UNKNOWN, BoundMethod, ClassValue, FunctionValue, GradAttr,
                                         NumberValue, ObjectRef, StrValue, TensorFacts, TorchName, TupleValue,
                                         join, join_tensors, replace, tids_of, weakened)


_GONE = object()
# Values that hold no tensor: `State.fresh` hands them back at once (most of what
# it is asked about: objects, functions, numbers, strings).
_PLAIN = frozenset((ObjectRef, FunctionValue, ClassValue, BoundMethod, NumberValue, StrValue,
                    TorchName, type(UNKNOWN), type(NONE)))


class Layered:
    """A dict in two layers: a `base` shared (and never changed) by the copies made
    from one point, and the changes since on top. Copying costs the changes only,
    and joining two copies of one base looks at the keys either of them changed."""
    __slots__ = ("base", "top")

    # Changes a copy may carry before they are folded into a new shared base.
    FOLD = 48

    def __init__(self, base: dict | None = None, top: dict | None = None):
        self.base = base if base is not None else {}
        self.top = top if top is not None else {}

    def get(self, key, default=None):
        top = self.top
        if key in top:
            value = top[key]
            return default if value is _GONE else value
        return self.base.get(key, default)

    def __contains__(self, key) -> bool:
        if key in self.top:
            return self.top[key] is not _GONE
        return key in self.base

    def __getitem__(self, key):
        value = self.get(key, _GONE)
        if value is _GONE:
            raise KeyError(key)
        return value

    def __setitem__(self, key, value) -> None:
        self.top[key] = value

    def pop(self, key, default=None):
        value = self.get(key, _GONE)
        if key in self.base:
            self.top[key] = _GONE
        else:
            self.top.pop(key, None)
        return default if value is _GONE else value

    def update(self, other) -> None:
        for key, value in (other.items() if hasattr(other, "items") else other):
            self.top[key] = value

    def keys(self):
        return {k for k in self.base if k not in self.top} | {k for k, v in self.top.items() if v is not _GONE}

    def items(self):
        for key in self.keys():
            yield key, self.get(key)

    def __len__(self) -> int:
        return len(self.keys())

    def copy(self) -> "Layered":
        if len(self.top) > self.FOLD:
            self.fold()
        return Layered(self.base, dict(self.top))

    def fold(self) -> None:
        """Fold the changes into a new base (which the next copies share)."""
        if not self.top:
            return
        merged = dict(self.base)
        for key, value in self.top.items():
            if value is _GONE:
                merged.pop(key, None)
            else:
                merged[key] = value
        self.base, self.top = merged, {}

    def add_missing(self, other: "Layered") -> None:
        """Take `other`'s entries for the keys this one lacks (by set operations on
        the keys: another module's objects are thousands of entries)."""
        flat = {**other.base, **other.top} if other.top else other.base
        gone = [k for k, v in self.top.items() if v is _GONE]
        missing = flat.keys() - self.base.keys() - self.top.keys()
        missing.update(k for k in gone if k in flat)
        top = self.top
        for key in missing:
            value = flat[key]
            if value is not _GONE:
                top[key] = value

    def changed_keys(self, other: "Layered"):
        """The keys whose values may differ between two copies, or None when they do
        not share a base (then every key may)."""
        if self.base is other.base:
            return self.top.keys() | other.top.keys()
        return None


@dataclass
class State:
    # The names of the running frame (module globals at module level).
    names: dict = field(default_factory=dict)
    tensors: Layered = field(default_factory=Layered)
    heap: Layered = field(default_factory=Layered)
    freed: dict = field(default_factory=dict)
    clobbered: dict = field(default_factory=dict)
    no_grad: object = False
    # False after `return`, `raise`, `break` or `continue`: nothing below runs.
    reachable: bool = True
    # Every tensor as it was made, by identity: shared by all copies (what a tensor
    # was when made never changes; what changed since is in `tensors`).
    made: dict = field(default_factory=dict)
    # Counts creations, shared by all copies (see TensorFacts.birth).
    clock: list = field(default_factory=lambda: [0])
    # The clock when a backward through a graph the analysis does not know last ran
    # (0: never). It may have reached any leaf: a `.grad` set to None before it may
    # hold a gradient now. Read lazily (`_reading`) rather than written into every
    # leaf, which for a file of models costs more than the rest of the analysis.
    grads_unknown_at: int = 0
    # Entries joined so far, shared by all copies: a join costs one step per entry
    # it looks at, and a model of hundreds of layers makes every `if` of a builder
    # cost thousands. Walker budgets count it (see walker.BUDGET).
    work: list = field(default_factory=lambda: [0])

    def copy(self) -> "State":
        return State(dict(self.names), self.tensors.copy(), self.heap.copy(), self.freed,
                     self.clobbered, self.no_grad, self.reachable, self.made, self.clock,
                     self.grads_unknown_at, self.work)

    def tick(self) -> int:
        """A new time on the run's clock."""
        self.clock[0] += 1
        return self.clock[0]

    def any_grad_may_be_set(self) -> None:
        """A backward through an unknown graph ran: any leaf may have a `.grad` now."""
        self.grads_unknown_at = self.tick()

    def _reading(self, t: TensorFacts) -> TensorFacts:
        if t.grad == "none" and self.grads_unknown_at > max(t.grad_at, t.birth):
            return replace(t, grad=None)
        return t

    def become(self, other: "State") -> None:
        """Take `other`'s contents: callers hold this very object."""
        if other is not self:
            self.__dict__.update(other.__dict__)

    # -- tensors -----------------------------------------------------------------------

    def fresh(self, value):
        """`value` with the current facts of the tensors it holds."""
        kind = type(value)
        if kind is TensorFacts:
            return self._current(value)
        if kind in _PLAIN:
            return value
        if isinstance(value, TensorFacts):
            return self._current(value)
        if isinstance(value, GradAttr):
            owner = self._current(value.owner)
            return value if owner is value.owner else GradAttr(owner, value.via_data)
        if isinstance(value, TupleValue) and any(isinstance(v, (TensorFacts, TupleValue))
                                                 for v in value.items):
            return TupleValue(tuple(self.fresh(v) for v in value.items), value.names)
        return value

    def update_tensor(self, new: TensorFacts) -> None:
        self.tensors[new.tid] = new

    def _current(self, t: TensorFacts) -> TensorFacts:
        found = self.tensors.get(t.tid)
        if found is None or found.birth != t.birth:
            # Not this object's facts: an older one made at the site, or a newer one
            # (a later iteration's `feats`, while a memory still holds this one).
            return self._reading(t)
        return self._reading(found)

    def created(self, t: TensorFacts) -> TensorFacts:
        """A new tensor at an allocation site: facts kept for an earlier one made
        there (an earlier loop iteration, on this path or another) no longer apply."""
        self.clock[0] += 1
        t = replace(t, birth=self.clock[0])
        self.tensors.pop(t.tid, None)
        self.made[t.tid] = t
        return t

    def tensor(self, tid):
        """The current facts of the tensor `tid`, or None when it is not known."""
        made = self.made.get(tid)
        found = self.tensors.get(tid)
        if found is not None and (made is None or found.birth >= made.birth):
            return self._reading(found)
        return made if made is None else self._reading(made)

    def leaves(self):
        """Every leaf that requires grad, with its current facts."""
        for tid, t in self.made.items():
            if t.is_leaf and t.requires_grad is not False:
                yield self._reading(self.tensors.get(tid, t))

    # -- objects ---------------------------------------------------------------------------

    def attrs(self, ref: ObjectRef) -> dict:
        return self.heap.get(ref.oid, _EMPTY)

    def attr(self, ref: ObjectRef, name: str, default=UNKNOWN):
        return self.fresh(self.heap.get(ref.oid, _EMPTY).get(name, default))

    def set_attr(self, ref: ObjectRef, name: str, value) -> None:
        old = self.heap.get(ref.oid, _EMPTY)
        self.heap[ref.oid] = {**old, name: value}

    def set_attrs(self, ref: ObjectRef, values: dict) -> None:
        old = self.heap.get(ref.oid, _EMPTY)
        self.heap[ref.oid] = {**old, **values}

    def new_object(self, ref: ObjectRef, attrs: dict) -> ObjectRef:
        self.heap[ref.oid] = dict(attrs)
        return ref

    def clobber(self, nodes, op) -> None:
        new = {n: op for n in nodes if n not in self.clobbered}
        if new:
            self.clobbered = {**self.clobbered, **new}

    # -- graphs ------------------------------------------------------------------------------

    def free(self, nodes, call) -> None:
        """A backward without retain_graph (`call`) frees what these graph nodes saved."""
        new = {n: call for n in nodes if n not in self.freed}
        if new:
            # A new dict: events keep the one they saw.
            self.freed = {**self.freed, **new}

    def freed_by(self, t: TensorFacts):
        """The backward that freed part of `t`'s graph, or None."""
        for node in t.saved_nodes:
            call = self.freed.get(node)
            if call is not None:
                return call
        return None

    def digest(self, value, depth: int = 0, seen: set | None = None):
        """A hashable picture of `value` and of everything the heap holds for it: equal
        pictures mean a function reading it behaves the same."""
        value = self.fresh(value)
        if isinstance(value, ObjectRef):
            seen = set() if seen is None else seen
            if value.oid in seen or depth > 6:
                return ("ref", value.oid)
            seen.add(value.oid)
            attrs = self.heap.get(value.oid, _EMPTY)
            return ("object", value, tuple(sorted(
                ((name, self._attribute_digest(item, depth, seen)) for name, item in attrs.items()),
                key=lambda pair: pair[0])))
        if isinstance(value, TupleValue):
            return ("tuple",) + tuple(self.digest(v, depth + 1, seen) for v in value.items)
        return value

    def _attribute_digest(self, item, depth: int, seen):
        if isinstance(item, tuple):
            return tuple(self.digest(v, depth + 1, seen) for v in item)
        if isinstance(item, dict):
            return tuple(sorted(((k, self.digest(v, depth + 1, seen)) for k, v in item.items()),
                                key=lambda pair: repr(pair[0])))
        if isinstance(item, (frozenset, set)):
            return frozenset(item)
        return self.digest(item, depth + 1, seen)

    # -- paths ---------------------------------------------------------------------------------

    def joined(self, other: "State") -> "State":
        if not other.reachable:
            return self
        if not self.reachable:
            return other
        return State(_join_names(self.names, other.names),
                     _join_tensors(self.tensors, other.tensors, self.made, self.work),
                     _join_heaps(self.heap, other.heap, self.work),
                     # A node is freed afterwards only if it is freed on both paths.
                     common_entries(self.freed, other.freed),
                     common_entries(self.clobbered, other.clobbered),
                     self.no_grad if self.no_grad == other.no_grad else None,
                     True, self.made, self.clock, max(self.grads_unknown_at, other.grads_unknown_at),
                     self.work)


_EMPTY: dict = {}


def unreachable(state: State) -> State:
    out = state.copy()
    out.reachable = False
    return out


def join_states(states: list) -> State | None:
    live = [s for s in states if s.reachable]
    if not live:
        return unreachable(states[0]) if states else None
    out = live[0]
    for other in live[1:]:
        out = out.joined(other)
    return out


def common_entries(a: dict, b: dict) -> dict:
    """The entries on both paths (copies share the dict until one path adds to it)."""
    if a is b:
        return a
    return {n: c for n, c in a.items() if n in b}


def _join_names(a: dict, b: dict) -> dict:
    """Names bound on either path. A name bound on one path only (`output` after
    `for i in range(n): output, hidden = rnn(x[i], hidden)`) keeps its value: on the
    other, reading it raises NameError, and nothing after the read runs there. (A
    builtin's name would read the builtin there.)"""
    if a is b:
        return a
    out = {}
    for key in a.keys() | b.keys():
        x, y = a.get(key, _UNBOUND), b.get(key, _UNBOUND)
        if x is _UNBOUND or y is _UNBOUND:
            out[key] = UNKNOWN if key in _BUILTIN_NAMES else y if x is _UNBOUND else x
        else:
            out[key] = x if x is y else join(x, y)
    return out


_UNBOUND = object()
_BUILTIN_NAMES = frozenset(dir(builtins))


def _join_tensors(a: Layered, b: Layered, made: dict, work: list) -> Layered:
    if a is b:
        return a
    keys = a.changed_keys(b)
    out = Layered(a.base, {}) if keys is not None else Layered()
    if keys is None:
        keys = a.keys() | b.keys()
    work[0] += len(keys)
    for tid in keys:
        x, y = a.get(tid), b.get(tid)
        latest = made.get(tid)
        newest = latest.birth if latest is not None else _newest_member(tid, made)
        if newest is not None:
            # Facts of an earlier tensor made at the same site are no one's now.
            x = x if x is not None and x.birth >= newest else None
            y = y if y is not None and y.birth >= newest else None
        if x is None and y is None:
            out.pop(tid)
        elif x is not None and y is not None:
            # (`is` first: a record's `==` compares every field, even of one object.)
            out[tid] = x if x is y or x == y else join_tensors(x, y)
        else:
            changed = x if x is not None else y
            if latest is not None and changed.birth == latest.birth \
                    and replace(changed, saved_by=latest.saved_by) == latest:
                # Only saved by an op on one path (an index tensor an embedding kept):
                # nothing it holds changed, and only what both paths saved it for holds.
                out[tid] = replace(latest, saved_by=changed.saved_by & latest.saved_by)
                continue
            # Changed on one path only: what the change altered is unknown afterwards.
            kept = weakened(changed)
            # On the other path the tensor is as it was made: its history is bounded
            # by the changed one's only when that holds every node of it.
            if latest is None or latest.unseen_history \
                    or not latest.saved_nodes <= changed.saved_nodes:
                kept = replace(kept, unseen_history=True)
            out[tid] = kept
    return out


def _newest_member(tid, made: dict) -> int | None:
    """For a joined identity (a helper returning `x.cuda()` on one path, `x` on the
    other), when the newest of the tensors it stands for was made: facts older than
    that are of an earlier call's tensors (the last epoch's), not of this one's."""
    if not (isinstance(tid, tuple) and tid and tid[0] == "join"):
        return None
    births = [made[member].birth for member in tids_of(tid) if member in made]
    return max(births) if births else None


def _join_heaps(a: Layered, b: Layered, work: list) -> Layered:
    if a is b:
        return a
    keys = a.changed_keys(b)
    out = Layered(a.base, {}) if keys is not None else Layered()
    if keys is None:
        keys = a.keys() | b.keys()
    work[0] += len(keys)
    for oid in keys:
        x, y = a.get(oid), b.get(oid)
        if x is y:
            if x is None:
                out.pop(oid)
            else:
                out[oid] = x
        elif x is None or y is None:
            # Made on one path only: as it is on that path (the other path has no
            # reference to it).
            out[oid] = x if x is not None else y
        else:
            merged = {}
            for name in x.keys() | y.keys():
                merged[name] = _join_attribute(x.get(name, UNKNOWN), y.get(name, UNKNOWN))
            # A list (or dict) empty on one path holds nothing there: what any item is
            # is what the other path says (`feats = []` then `feats.append(x)` in a loop;
            # a bounded deque, whose items are not listed, empty at first).
            for empty, other in ((x, y), (y, x)):
                if (empty.get("items") == () or empty.get("nonempty") is False) and "item" in other:
                    merged["item"] = other["item"]
                elif empty.get("entries") == {} and "value" in other:
                    merged["value"] = other["value"]
            out[oid] = merged
    return out


def _join_attribute(a, b):
    """An attribute known on two paths: values join; the bookkeeping of lists, dicts
    and modules (tuples of items, dicts of entries, sets of parameter ids) is kept
    only when both paths agree, and is unknown (None) otherwise."""
    if a is b or a == b:
        return a
    if isinstance(a, (tuple, dict, frozenset, set, bool)) or isinstance(b, (tuple, dict, frozenset, set, bool)) \
            or a is None or b is None:
        return None
    return join(a, b)


def with_facts(t: TensorFacts, **changes) -> TensorFacts:
    return replace(t, **changes)
