"""The abstract values the analysis computes: what is known about each value a
program handles, without running it.

Every fact may be unknown (None). Rules fire only on known facts: a tensor
whose shape is unknown is never called non-scalar.

Values are immutable. What a program changes in place lives in the `State`
(analysis/state.py): the current facts of tensors changed in place, and the
attributes of objects (modules, optimizers, instances of user classes, lists,
dicts), found by the identity an `ObjectRef` carries.
"""
from __future__ import annotations

from dataclasses import field
from typing import Optional, Union

from autograd_lsp.analysis.records import record

Tri = Optional[bool]          # True / False / None (unknown)


def replace(record, **changes):
    """`dataclasses.replace` for the analysis's dataclasses, which have no
    `__post_init__` and no fields outside `__init__`: a copy of the instance dict,
    about a tenth of the generic function's cost (which the walker pays tens of
    thousands of times a file)."""
    fields = record.__dataclass_fields__
    if not changes.keys() <= fields.keys():
        raise TypeError(f"{type(record).__name__} has no field {sorted(changes.keys() - fields.keys())}")
    new = object.__new__(type(record))
    attributes = new.__dict__
    attributes.update(record.__dict__)
    attributes.update(changes)
    return new

FLOAT_DTYPES = {"float16", "bfloat16", "float32", "float64"}
COMPLEX_DTYPES = {"complex64", "complex128"}
INT_DTYPES = {"uint8", "int8", "int16", "int32", "int64"}


def dtype_kind(dtype: str | None) -> str | None:
    """'float', 'complex', 'int', 'bool' or None."""
    if dtype is None:
        return None
    if dtype in FLOAT_DTYPES:
        return "float"
    if dtype in COMPLEX_DTYPES:
        return "complex"
    if dtype in INT_DTYPES:
        return "int"
    if dtype == "bool":
        return "bool"
    return None


# -- dimensions ------------------------------------------------------------------------

@record
class Sym:
    """A dimension known by name only: the batch of a data loader. `first` is its
    size on the first batch when known (min(batch_size, len(dataset))): what the
    first iteration of a loop over the loader sees, and so what a rule may claim."""
    label: str
    first: int | None = None
    bound: int | None = None       # never larger than this (the batch size)


Dim = Union[int, Sym, None]
Shape = Optional[tuple]           # tuple of Dim; () is 0-dim; None unknown


def dim_above_one(d: Dim) -> bool:
    """The dimension has more than one element where the program first reaches it."""
    if isinstance(d, Sym):
        return d.first is not None and d.first > 1
    return d is not None and d != 1


def same_dim(a: Dim, b: Dim) -> Tri:
    if a is None or b is None:
        return None
    if isinstance(a, Sym) or isinstance(b, Sym):
        if a == b:
            return True
        first_a = a.first if isinstance(a, Sym) else a
        first_b = b.first if isinstance(b, Sym) else b
        if first_a is not None and first_b is not None and first_a != first_b:
            return False
        return None
    return a == b


# -- tensors -------------------------------------------------------------------------------

@record
class TensorFacts:
    tid: object                      # identity: aliases share it, so in-place changes reach them all
    requires_grad: Tri = None
    is_leaf: Tri = None
    dtype: str | None = None         # "float32", "int64", "bool", ...
    shape: Shape = None
    grad_fn: str | None = None       # e.g. "PowBackward0"; None when unknown or when there is none
    # Graph nodes in this tensor's history that saved tensors for backward; a
    # backward without retain_graph frees them.
    saved_nodes: frozenset = frozenset()
    # Leaves (by tid) that require grad in this tensor's history.
    leaves: frozenset = frozenset()
    # True when part of the history is not known (a parameter, an unknown call...),
    # so `saved_nodes` and `leaves` may be incomplete.
    opaque: bool = True
    # True when part of the history was never seen (an unknown value or call, a
    # module whose forward is not known, an op recorded under an unknown grad mode):
    # `saved_nodes` and `leaves` may then miss nodes of any age. Unlike `opaque`, a
    # join of histories that were all seen stays seen: its sets are then a bound
    # (every node the tensor may reach is in them), not an exact account.
    unseen_history: bool = True
    # Why it does not require grad, when it is known not to:
    # "no_grad", "inference_mode", "detach", "rewrap", "never", "grad_result", "data",
    # "sample" (drawn by a distribution's `sample()`).
    no_grad_reason: str | None = None
    # State of `.grad` for a leaf: "none" (still None), "set" (by a backward),
    # "graph" (by a backward with create_graph=True), "zero" (zeroed in place, not
    # None), "summed" (backwards of more than one loop iteration added up), or None
    # (unknown).
    grad: str | None = None
    # The iteration (loops and passes) of the backward that last filled `.grad`: a
    # backward in a later iteration adds to it.
    grad_since: object = None
    device: str | None = None
    # The loop (an analysis.trace.Loop) inside which this value was made, if any.
    made_in_loop: object = None
    # For an element taken from another tensor (`t[i]`, iteration): the parent's tid,
    # and the loop the parent was made in.
    element_of: object = None
    base_made_in: object = None
    # Graph nodes reached through an element taken from another tensor (`per_sample[i]
    # / n`, an item of iterating or unpacking it; not a slice or a view): the saved
    # nodes of the tensors elements were taken from.
    element_nodes: frozenset = frozenset()
    # A view (`w[:, 0]`, `w.view(...)`) of a leaf that requires grad.
    view_of_leaf: bool = False
    # Graph nodes that saved this very tensor for their backward: changing it in
    # place breaks a later backward through them.
    saved_by: frozenset = frozenset()
    # Modules whose forward changes in place a tensor an earlier layer saved (a
    # ReLU(inplace=True) after a Sigmoid): a backward through this tensor raises.
    corrupted_by: frozenset = frozenset()
    retains_grad: bool = False
    # For a gradient taken without create_graph=True (and what is computed from it
    # alone): the torch.autograd.grad call it comes from.
    grad_call: object = None
    # Such gradient terms added into this tensor: they count in its value but give
    # no gradient (the calls they come from).
    ungraded: frozenset = frozenset()
    # A parameter of a module (nn.Parameter, a layer's weight).
    is_param: bool = False
    # The call that made it (for fixes that rewrite the creation).
    origin: object = field(default=None, repr=False)
    # For drawing the backward graph: the tensors that require grad it was computed
    # from, and the name a leaf was first bound to. Not part of the facts' identity.
    parents: tuple = field(default=(), repr=False, compare=False)
    label: str | None = field(default=None, repr=False, compare=False)
    # Set only on the facts kept for hovers: a backward already freed part of the graph.
    graph_freed: bool = field(default=False, repr=False, compare=False)
    # When the tensor was made (a run's clock): facts kept for an earlier tensor made
    # at the same site (an earlier loop iteration) are stale for this one.
    birth: int = field(default=0, repr=False, compare=False)
    # When `.grad` was last set to None (a run's clock; the birth when made so): a
    # backward through an unknown graph after it may have filled it (see
    # State.grads_unknown_at).
    grad_at: int = field(default=0, repr=False, compare=False)

    def numel_is_not_one(self) -> bool:
        """True only when the shape proves numel != 1 (so backward() needs a gradient)."""
        if self.shape is None:
            return False
        return any(dim_above_one(d) for d in self.shape)

    def is_scalar(self) -> bool:
        return self.shape == () or (self.shape is not None and all(d == 1 for d in self.shape))

    def has_graph(self) -> bool:
        """Known to be the output of recorded ops (a non-leaf that requires grad)."""
        return self.requires_grad is True and self.is_leaf is False


@record
class GradAttr:
    """The value of `t.grad` (or `t.grad.data`): None until a backward reaches `t`."""
    owner: TensorFacts
    via_data: bool = False


# -- plain Python values --------------------------------------------------------------------

@record
class NumberValue:
    """A Python number (or bool); `value` when it is known."""
    kind: str                        # "int", "float", "bool", "complex"
    value: object = None


@record
class StrValue:
    value: str | None = None


@record
class NoneValue:
    pass


NONE = NoneValue()


@record
class TupleValue:
    """A tuple whose items are known (for unpacking and indexing); `names` for a
    named tuple (`values, indices = t.max(1)`, `t.max(1).values`)."""
    items: tuple
    names: tuple | None = None


@record
class Unknown:
    pass


UNKNOWN = Unknown()


@record
class MaybeNone(Unknown):
    """None on some paths and `value` on the others (a helper that returns None when
    it has nothing to give): unknown as it stands, but `if x is None: continue`
    leaves `value` after it."""
    value: object = None


def maybe_none(a, b):
    """`join` of None (or a MaybeNone) with a value an `is None` test can give back;
    None when there is nothing worth keeping."""
    values = [v.value if isinstance(v, MaybeNone) else v for v in (a, b) if not isinstance(v, NoneValue)]
    inner = values[0] if len(values) == 1 else join(values[0], values[1])
    return MaybeNone(value=inner) if isinstance(inner, (TupleValue, ObjectRef, TensorFacts)) else None


# -- objects with identity: their attributes live in the State's heap ---------------------

@record
class ObjectRef:
    """A mutable object. `kind` says what the analysis knows it to be:

    "module"     an nn.Module (a torch layer, or an instance of a user subclass)
    "optimizer"  a torch.optim optimizer (or a user subclass)
    "instance"   an instance of another user class
    "list", "dict"  containers whose items are followed
    "loader", "dataset"  torch.utils.data objects
    "scaler"     torch.cuda.amp.GradScaler and friends

    `cls` is the qualified torch class name ("torch.nn.Linear") or a ClassValue.
    """
    oid: object
    kind: str
    cls: object = None

    @property
    def class_name(self) -> str:
        if isinstance(self.cls, ClassValue):
            return self.cls.name
        return str(self.cls or "").rsplit(".", 1)[-1]


# -- code: functions, classes and names of libraries ----------------------------------------

@record(eq=False)
class FunctionValue:
    """A function defined in the analysed code (a `def` or a lambda), with what it
    closes over. Two are equal when they are the same definition (the same parsed
    node) with the same defaults and closure, as in two runs over unchanged code."""
    node: object                     # ast.FunctionDef / AsyncFunctionDef / Lambda
    source: object                   # the ParsedChunk holding the node
    qualname: str
    defaults: tuple = ()             # values of the positional defaults, last parameters first aligned
    kw_defaults: tuple = ()          # (name, value) of keyword-only defaults
    closure: object = None           # the enclosing Frame for nested functions
    no_grad: Tri = None              # set by @torch.no_grad() / @torch.enable_grad()
    is_static: bool = False
    is_classmethod: bool = False
    is_property: bool = False

    def __eq__(self, other):
        return self is other or (
            isinstance(other, FunctionValue) and self.node is other.node
            and self.closure is other.closure and self.qualname == other.qualname
            and self.defaults == other.defaults and self.kw_defaults == other.kw_defaults
            and self.no_grad == other.no_grad)

    def __hash__(self):
        return hash(id(self.node))


@record(eq=False)
class ClassValue:
    """A class defined in the analysed code. Two are equal when they are the same
    definition with the same bases, methods and class attributes."""
    node: object
    source: object
    name: str
    bases: tuple                     # values: ClassValue, TorchName, ExternalName, Unknown
    methods: dict                    # name -> FunctionValue
    attrs: dict                      # class-level values
    # What it derives from, through its bases: "module", "optimizer", "dataset",
    # "autograd_function" (a custom torch.autograd.Function) or "instance".
    kind: str = "instance"
    # Fields of a @dataclass / NamedTuple, in order: their __init__ is synthesised.
    fields: tuple | None = None

    def __eq__(self, other):
        return self is other or (
            isinstance(other, ClassValue) and self.node is other.node and self.bases == other.bases
            and self.methods == other.methods and self.attrs == other.attrs and self.kind == other.kind)

    def __hash__(self):
        return hash(id(self.node))

    def lookup(self, name: str):
        """A method or class attribute by Python's attribute order (local bases only)."""
        for cls in self.mro():
            if name in cls.methods:
                return cls.methods[name]
            if name in cls.attrs:
                return cls.attrs[name]
        return None

    def mro(self) -> list:
        order, stack = [], [self]
        while stack:
            cls = stack.pop(0)
            if cls not in order:
                order.append(cls)
                stack.extend(b for b in cls.bases if isinstance(b, ClassValue))
        return order

    def has_unknown_base(self) -> bool:
        """Some base is not a class of this code nor a known torch class: methods
        may come from elsewhere."""
        for cls in self.mro():
            for base in cls.bases:
                if not isinstance(base, (ClassValue, TorchName)) and not _is_object(base):
                    return True
        return False


def _is_object(base) -> bool:
    return isinstance(base, BuiltinName) and base.name == "object"


@record
class Partial:
    """`functools.partial(func, *args, **kwargs)`: a call of it calls `func` with
    these arguments first (`criterion = partial(F.cross_entropy, reduction="none")`)."""
    func: object
    args: tuple
    kwargs: tuple                    # (name, value) pairs; the call's own override them


@record
class BoundMethod:
    function: FunctionValue
    receiver: object                 # the value bound to `self` (or the class, for classmethods)


@record
class TorchName:
    """A name inside torch: `torch`, `torch.nn.Linear`, `F.mse_loss`..."""
    qualname: str


@record
class ExternalName:
    """A name from another library (`numpy.mean`, `copy.deepcopy`), or a module of
    the project that could not be read."""
    qualname: str


@record
class BuiltinName:
    """A Python builtin (`range`, `len`, `isinstance`...)."""
    name: str


@record
class ModuleNamespace:
    """A module of the project, read from its source: `import models` binds one."""
    path: str
    names: tuple                     # (name, value) pairs it exports
    # What its code made (the objects and tensors its names refer to).
    state: object = field(default=None, compare=False, repr=False)


@record
class MethodOf:
    """A builtin method of a known value, looked up but not yet called:
    `opt.zero_grad` in `register_hook(opt.zero_grad)`."""
    receiver: object
    name: str


@record
class NamedTupleType:
    """`collections.namedtuple("Out", ["loss", "logits"])`: calling it makes a tuple
    whose items have these names (`out.logits`, `loss, logits = out`)."""
    fields: tuple


@record
class ModuleChoice:
    """One of the layers of a container, picked by an index the analysis does not
    know: `net[i]` in `for i in range(len(net)): x = net[i](x)`. Calling it runs
    each layer on a path of its own, and the paths join."""
    options: tuple                   # ObjectRefs of modules


Value = Union[TensorFacts, GradAttr, NumberValue, StrValue, NoneValue, TupleValue, Unknown,
              ObjectRef, FunctionValue, ClassValue, BoundMethod, TorchName, ExternalName,
              BuiltinName, ModuleNamespace, MethodOf, ModuleChoice, NamedTupleType]


# -- joining what two paths know ------------------------------------------------------------

def join(a, b):
    """What is known about a value that is `a` on one path and `b` on another."""
    if a is b or a == b:
        return a
    if isinstance(a, TensorFacts) and isinstance(b, TensorFacts):
        return join_tensors(a, b)
    if isinstance(a, NumberValue) and isinstance(b, NumberValue):
        if a.kind == b.kind:
            return NumberValue(a.kind)
        if {a.kind, b.kind} <= {"int", "float"}:
            return NumberValue("float")
        return UNKNOWN
    if isinstance(a, StrValue) and isinstance(b, StrValue):
        return StrValue()
    # `loss = 0`, then `loss += criterion(...)` in a loop: at the loop's head it is the
    # number on the first pass and the sum after. What only a tensor can do (its
    # graph, a backward) is the tensor's; the number adds nothing to the graph.
    if isinstance(a, TensorFacts) and isinstance(b, NumberValue) and b.kind in ("int", "float"):
        return a
    if isinstance(b, TensorFacts) and isinstance(a, NumberValue) and a.kind in ("int", "float"):
        return b
    if isinstance(a, TupleValue) and isinstance(b, TupleValue) and len(a.items) == len(b.items):
        return TupleValue(tuple(join(x, y) for x, y in zip(a.items, b.items)))
    # `try: import torch` / `except ImportError: torch = None`: where the import
    # worked, the name is the library's.
    if isinstance(a, (TorchName, ExternalName)) and isinstance(b, NoneValue):
        return a
    if isinstance(b, (TorchName, ExternalName)) and isinstance(a, NoneValue):
        return b
    if isinstance(a, GradAttr) and isinstance(b, GradAttr) and a.owner.tid == b.owner.tid:
        return GradAttr(join_tensors(a.owner, b.owner), a.via_data and b.via_data)
    if isinstance(a, (NoneValue, MaybeNone)) or isinstance(b, (NoneValue, MaybeNone)):
        optional = maybe_none(a, b)
        if optional is not None:
            return optional
    return UNKNOWN


def join_all(values):
    """`join` over every value of an iterable (UNKNOWN when there are none)."""
    values = list(values)
    if not values:
        return UNKNOWN
    out = values[0]
    for v in values[1:]:
        out = join(out, v)
    return out


def tids_of(tid) -> list:
    """The tensors a (possibly joined) tensor identity stands for."""
    if isinstance(tid, tuple) and tid and tid[0] == "join":
        return list(tid[1:])
    return [tid]


def joined_tid(a, b):
    """The identity of a tensor that is `a` on one path and `b` on another: the flat
    tuple ("join", member, ...) of the tensors it may be, each once. (Nesting the
    two would double its size at every join of a loop's passes, and every lookup
    hashes it.)"""
    if a == b:
        return a
    members = tids_of(a)
    members += [m for m in tids_of(b) if m not in members]
    return ("join", *members) if len(members) > 1 else members[0]


def join_tensors(a: TensorFacts, b: TensorFacts) -> TensorFacts:
    return TensorFacts(
        # Deterministic, so that analysing the same text twice gives equal facts
        # (the engine's caches compare them).
        tid=joined_tid(a.tid, b.tid),
        requires_grad=_same(a.requires_grad, b.requires_grad),
        is_leaf=_same(a.is_leaf, b.is_leaf),
        dtype=_same(a.dtype, b.dtype),
        shape=_join_shapes(a.shape, b.shape),
        grad_fn=_same(a.grad_fn, b.grad_fn),
        saved_nodes=a.saved_nodes | b.saved_nodes,
        leaves=a.leaves | b.leaves,
        # Known exactly when both paths agree on it (an index tensor an embedding
        # saved on one loop pass and not yet on the other).
        opaque=a.opaque or b.opaque or a.requires_grad != b.requires_grad
        or a.saved_nodes != b.saved_nodes or a.leaves != b.leaves,
        unseen_history=a.unseen_history or b.unseen_history,
        no_grad_reason=_same(a.no_grad_reason, b.no_grad_reason),
        grad=_join_grad(a.grad, b.grad),
        grad_since=_same(a.grad_since, b.grad_since),
        device=_same(a.device, b.device),
        made_in_loop=_same(a.made_in_loop, b.made_in_loop),
        element_of=_same(a.element_of, b.element_of),
        base_made_in=_same(a.base_made_in, b.base_made_in),
        view_of_leaf=a.view_of_leaf and b.view_of_leaf,
        element_nodes=a.element_nodes | b.element_nodes,
        saved_by=a.saved_by & b.saved_by,
        corrupted_by=a.corrupted_by & b.corrupted_by,
        retains_grad=a.retains_grad and b.retains_grad,
        grad_call=_same(a.grad_call, b.grad_call),
        ungraded=a.ungraded & b.ungraded,
        is_param=a.is_param and b.is_param,
        origin=_same(a.origin, b.origin),
        label=a.label if a.label == b.label else None,
        birth=max(a.birth, b.birth),
        grad_at=min(a.grad_at, b.grad_at),
    )


def weakened(t: TensorFacts) -> TensorFacts:
    """`t` where an in-place change may or may not have happened: what such a change
    alters is no longer known."""
    return replace(t, grad=None, retains_grad=False, corrupted_by=frozenset(),
                   requires_grad=t.requires_grad if t.requires_grad is True else None,
                   is_leaf=None if t.is_leaf is not None and t.requires_grad is not True else t.is_leaf,
                   opaque=True)


def _join_shapes(a: Shape, b: Shape) -> Shape:
    if a == b:
        return a
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


def _same(x, y):
    return x if x == y else None


def _join_grad(x, y):
    """A `.grad` filled on both paths is filled after them, summed over iterations or
    not (a sub-iteration loop that runs once on one path and twice on another)."""
    if x == y:
        return x
    return "set" if {x, y} == {"set", "summed"} else None
