"""What the walker saw, in order: the events rules read, and the queries they
ask of them.

Each event carries the values known at that point of the program and its
context: grad mode, the loops around it (across calls: a backward inside a
helper that a loop calls is inside that loop), the branches between them, the
chain of calls that led there. A loop body is walked more than once (each walk
is one iteration as the analysis sees it: `ctx.loop_pass`), so an event inside
a loop appears once per pass; the engine drops duplicate findings.

Rules use the queries of `Trace` (`backwards()`, `loops()`, `inside(loop)`,
`steps(events)`...) rather than re-deriving what a call is.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autograd_lsp.analysis.facts import GradAttr, ObjectRef, TensorFacts, Unknown, Value
from autograd_lsp.analysis.records import record

# Keywords torch's Tensor.backward takes; a `.backward(...)` with others is not torch's.
BACKWARD_KEYWORDS = frozenset({"gradient", "retain_graph", "create_graph", "inputs"})
# `retain_variables`, torch < 0.2's name of retain_graph: torch's backward all the same,
# whose call raises until the keyword is renamed (a rule says so).
OLD_BACKWARD_KEYWORDS = frozenset({"retain_variables"})


@record(eq=False)
class Loop:
    """One loop of the program as one invocation of its function runs it (a loop
    in a helper called from two places is two loops). Equal only to itself."""
    node: ast.AST                    # ast.For / ast.While / a comprehension
    source: object                   # the ParsedChunk holding it
    # Iterating over a known, finite collection: each pass is one element.
    unrolled: bool = False
    # How many graph nodes had been made when the loop began (nodes carry that count).
    start: int = 0

    def predates(self, node) -> bool:
        """A graph node made before the loop began."""
        return node[-1] <= self.start

    @property
    def body(self) -> list:
        return getattr(self.node, "body", [])

    @property
    def is_comprehension(self) -> bool:
        return not isinstance(self.node, (ast.For, ast.AsyncFor, ast.While))


@record
class CallSite:
    """A call whose callee the walker followed."""
    node: ast.Call
    source: object                   # the ParsedChunk holding it
    function: object                 # the FunctionValue called
    stmt: object = None              # the statement holding the call
    no_grad: bool | None = None      # the caller's grad mode at the call (True: grad off)


@record(eq=False)
class Choice:
    """A call of one of several callees, picked by a value the analysis does not know
    (`layers[i](x)`): what runs inside one of them may not run at all."""
    node: ast.AST
    option: int


@record
class Decided:
    """An `if` whose test was known on this pass over the loops around it, though it
    may be known otherwise on another pass (`if (i + 1) % accum == 0` in a loop
    unrolled over a known list): what it holds ran on this pass, and it is still
    conditional for `Context.always_runs_in`."""
    node: ast.If


@record
class Invariant:
    """An `if` whose test was known, and is the same on every pass over the loops of
    its own function around it (`if phase == "train":` in the batch loop of
    `run_epoch(phase, ...)`): for those loops what it holds runs on every pass; for
    the loops of its callers, which may pass another phase, it is conditional."""
    node: ast.If


@record
class Context:
    # True inside no_grad/inference_mode, False where grad is on, None unknown.
    no_grad: bool | None
    # Enclosing loops, outermost first, across calls, and which pass over each one's
    # body this is (0 is the first iteration).
    loops: tuple = ()
    passes: tuple = ()
    # Enclosing Loops, `if`s, `try`s and CallSites, outermost first: whether an
    # event runs on every iteration of a loop.
    blocks: tuple = ()
    # The statement the event belongs to, and the chunk holding it.
    stmt: ast.stmt | None = None
    source: object = None
    # The innermost function being run (a FunctionValue), None at module level.
    function: object = None
    # The calls that led here, outermost first.
    calls: tuple = ()
    # The function was run on its own, with unknown parameters.
    alone: bool = False
    # For each enclosing loop, the run's clock (see TensorFacts.birth) when this pass
    # over its body began: a value born earlier was carried in from an earlier pass.
    clocks: tuple = ()

    def at(self, stmt, source, no_grad) -> "Context":
        """This context at another statement (the walker's most frequent change, made
        without `dataclasses.replace`'s generic cost)."""
        return Context(no_grad, self.loops, self.passes, self.blocks, stmt, source, self.function,
                       self.calls, self.alone, self.clocks)

    def inside(self, block) -> "Context":
        return Context(self.no_grad, self.loops, self.passes, self.blocks + (block,), self.stmt,
                       self.source, self.function, self.calls, self.alone, self.clocks)

    @property
    def loop(self):
        return self.loops[-1] if self.loops else None

    @property
    def loop_pass(self) -> int:
        return self.passes[-1] if self.passes else 0

    def loop_pass_of(self, loop) -> int:
        return self.passes[self.loops.index(loop)] if loop in self.loops else 0

    def carried_into(self, loop, value) -> bool:
        """Whether `value` was made in an earlier pass over `loop`'s body (or before the
        loop) and reached this pass: it outlives an iteration."""
        if loop not in self.loops or self.loops.index(loop) >= len(self.clocks):
            return False
        return getattr(value, "birth", 0) <= self.clocks[self.loops.index(loop)]

    def always_runs_in(self, loop) -> bool:
        """Whether the event runs on every iteration of `loop`, as far as branches go."""
        if loop not in self.blocks:
            return False
        inner = self.blocks[self.blocks.index(loop) + 1:]
        crossed_call = False
        for b in inner:
            if isinstance(b, (ast.If, Decided, ast.Try, ast.IfExp, ast.BoolOp, Choice)):
                return False
            if isinstance(b, CallSite):
                crossed_call = True
            elif isinstance(b, Invariant) and crossed_call:
                return False
        return True

    def ran_in_pass_of(self, loop) -> bool:
        """Whether the event surely ran on this pass over `loop`'s body: no branch
        between them whose way this pass did not know (or `loop` is None and there is
        none at all)."""
        inner = self.blocks[self.blocks.index(loop) + 1:] if loop in self.blocks else \
            (self.blocks if loop is None else None)
        if inner is None:
            return False
        return not any(isinstance(b, (ast.If, ast.Try, ast.IfExp, ast.BoolOp, Choice)) for b in inner)

    def site_in(self, loop) -> object:
        """The node in `loop`'s own function through which this event happens: the
        event's statement when it is there, else the call made in that function
        that leads to it."""
        if not self.calls or loop is None:
            return self.stmt
        if loop not in self.blocks:
            return self.stmt
        after = self.blocks[self.blocks.index(loop) + 1:]
        for block in after:
            if isinstance(block, CallSite):
                return block.node
        return self.stmt


@dataclass
class CallEvent:
    node: ast.Call
    ctx: Context
    qualname: str | None          # torch qualified name of the callee, e.g. "torch.autograd.grad"
    method: str | None            # the attribute name when the callee is `<expr>.name`
    receiver: Value | None
    args: tuple                   # values of positional arguments
    kwargs: dict                  # keyword -> value
    result: Value
    used: bool                    # the call's value is used, not thrown away
    # Graph nodes freed by earlier backward calls at the time of this call -> the
    # call that freed each.
    freed: dict = field(default_factory=dict)
    # Graph nodes whose saved tensor an in-place op changed since -> that op.
    clobbered: dict = field(default_factory=dict)
    # The function or class of the analysed code that was called, if any.
    callee: object = None
    # The callee's body was walked (its events follow this one, with this call in
    # their context).
    followed: bool = False
    # What the call's transfer function found worth telling rules (e.g. "seeds": the
    # (output, gradient) pairs of torch.autograd.backward over lists).
    extra: dict = field(default_factory=dict)
    # The run's clock when the statement holding the call began: a value born later
    # was made by that statement.
    since: int = 0

    def arg_node(self, keyword: str | None = None, position: int | None = None):
        """The ast node passed for a parameter, by keyword or position."""
        if keyword is not None:
            for kw in self.node.keywords:
                if kw.arg == keyword:
                    return kw.value
        if position is not None:
            positional = [a for a in self.node.args if not isinstance(a, ast.Starred)]
            if position < len(positional):
                return positional[position]
        return None

    def has_keyword(self, keyword: str) -> bool:
        return any(kw.arg == keyword or kw.arg is None for kw in self.node.keywords)

    @property
    def receiver_node(self):
        return self.node.func.value if isinstance(self.node.func, ast.Attribute) else None


@dataclass
class AttrAssignEvent:
    """`target.attr = value` (e.g. `w.requires_grad = True`, `p.grad = None`)."""
    node: ast.Attribute
    ctx: Context
    receiver: Value
    attr: str
    value: Value
    value_node: ast.AST


@dataclass
class InplaceEvent:
    """An in-place change of a tensor: `t += 1`, `t[i] = v`, `t.add_(1)`."""
    node: ast.AST
    ctx: Context
    target: Value
    target_node: ast.AST
    op: str                        # "+=", "setitem", or the method name ("add_")
    # Made by a layer inside a container (`nn.Sequential`): no line of the user's.
    hidden: bool = False
    # The in-place layer (an ObjectRef) that made it, if a layer did.
    layer: object = None


@dataclass
class AttrReadEvent:
    """`t.grad` read (not assigned)."""
    node: ast.Attribute
    ctx: Context
    receiver: Value
    attr: str


@dataclass
class AccumulateEvent:
    """`total += x`, `total = total + x`, `totals[k] += x` with a tensor `x`; or one
    slot of `total = [a + b for a, b in zip(total, values)]` (`slot`: its index)."""
    node: ast.AST
    ctx: Context
    target_node: ast.AST
    before: Value
    operand: Value
    slot: int | None = None
    # The code of what is added, when it is not the assignment's right operand
    # (`avg = 0.05 * loss + 0.95 * avg`).
    operand_node: ast.AST | None = None


@dataclass
class StoreEvent:
    """A value kept in a container that outlives the statement: `history.append(x)`,
    `outputs[k] = x`, `self.x = x`."""
    node: ast.AST
    ctx: Context
    container: Value
    value: Value
    # A tensor the stored value holds (itself, or inside a tuple, list or dict).
    held: object = None
    # The loop whose iteration made the container (None: made before any loop).
    container_loop: object = None


@dataclass
class IndexEvent:
    """`t[i]` read on a tensor (or `t.data[i]`)."""
    node: ast.Subscript
    ctx: Context
    base: Value
    index: Value
    via_data: bool = False


@dataclass
class WithEvent:
    """`with ...:` and the values of its context expressions."""
    node: ast.With
    ctx: Context
    items: tuple


@dataclass
class BareExpressionEvent:
    """An expression statement whose value is thrown away (`opt.zero_grad`)."""
    node: ast.Expr
    ctx: Context
    value: Value


@dataclass
class LoopEvent:
    loop: Loop
    ctx: Context                   # the context around the loop

    @property
    def node(self):
        return self.loop.node


@dataclass
class Trace:
    """Everything one analysis saw: module code, the functions it called, and every
    function run on its own."""
    events: list = field(default_factory=list)
    # The local name bound to `torch` (for code that fixes insert), if any.
    torch_name: str | None = None
    # Some chunk of the module mentions `.backward(`.
    mentions_backward: bool = False
    _of: dict | None = field(default=None, repr=False, compare=False)
    _of_size: int = field(default=0, repr=False, compare=False)
    _by_loop: dict | None = field(default=None, repr=False, compare=False)
    _by_loop_size: int = field(default=0, repr=False, compare=False)

    def of(self, kind: type) -> tuple:
        # Rules ask for the same kinds again and again: each is listed once per
        # length of the trace (events are only ever appended), as a tuple that every
        # rule shares.
        cache = self._of
        if cache is None or self._of_size != len(self.events):
            cache = self._of = {}
            self._of_size = len(self.events)
        found = cache.get(kind)
        if found is None:
            found = cache[kind] = tuple(e for e in self.events if isinstance(e, kind))
        return found

    def truncate(self, length: int) -> None:
        """Forget the events after the first `length` (a call undone)."""
        if len(self.events) > length:
            del self.events[length:]
            self._of = self._by_loop = None

    # -- queries -------------------------------------------------------------------------

    def calls(self) -> tuple:
        return self.of(CallEvent)

    def differentiations(self) -> tuple:
        """Every call that backwards through a graph: `t.backward()` (and its spellings)
        and `torch.autograd.grad`, in the order they ran."""
        calls = self.calls()        # (refreshes the cache for the trace's length)
        found = self._of.get("differentiations")
        if found is None:
            found = self._of["differentiations"] = tuple(
                e for e in calls if is_backward(e) or e.qualname == "torch.autograd.grad")
        return found

    def backwards(self) -> list:
        """Every `t.backward(...)` of torch on a known tensor."""
        return [e for e in self.calls() if is_backward(e) and isinstance(e.receiver, TensorFacts)]

    def loops(self) -> list:
        """Each loop once, with the context around it."""
        seen, out = set(), []
        for event in self.of(LoopEvent):
            if event.loop not in seen:
                seen.add(event.loop)
                out.append(event)
        return out

    def inside(self, loop, first_pass: bool = True) -> list:
        """The events of an iteration of `loop` (in functions it calls too)."""
        events = self._events_by_loop().get(loop, ())
        if not first_pass:
            return list(events)
        return [e for e in events if e.ctx.loop_pass_of(loop) == 0]

    def _events_by_loop(self) -> dict:
        """Loop -> the events inside it, in order: indexed once (rules ask of every
        loop, and a file of many loops has many events)."""
        index = self._by_loop
        if index is None or self._by_loop_size != len(self.events):
            index = {}
            for e in self.events:
                for loop in set(e.ctx.loops):
                    index.setdefault(loop, []).append(e)
            self._by_loop, self._by_loop_size = index, len(self.events)
        return index


# -- what calls are -------------------------------------------------------------------------

def is_backward(event: CallEvent) -> bool:
    """`x.backward(...)` with torch's signature (on a tensor or on something unknown),
    or `torch.autograd.backward(...)`: one definition for every rule."""
    if not isinstance(event, CallEvent):
        return False
    if event.qualname == "torch.autograd.backward":
        return True
    if event.method != "backward" or event.qualname is not None:
        return False
    if any(kw.arg is not None and kw.arg not in BACKWARD_KEYWORDS | OLD_BACKWARD_KEYWORDS
           for kw in event.node.keywords):
        return False
    if len(event.node.args) > 3:
        return False
    receiver = event.receiver
    return isinstance(receiver, (TensorFacts, Unknown))


def backward_target(event: CallEvent):
    """The tensor a backward-like call differentiates: the receiver of
    `t.backward()`, the `outputs` of `torch.autograd.grad` or the `tensors` of
    `torch.autograd.backward`; else None."""
    if event.qualname in ("torch.autograd.grad", "torch.autograd.backward"):
        outputs = event.args[0] if event.args else event.kwargs.get(
            "outputs" if event.qualname.endswith("grad") else "tensors")
        if not isinstance(outputs, TensorFacts):
            outputs = event.extra.get("first_output")
        return outputs if isinstance(outputs, TensorFacts) else None
    if is_backward(event) and isinstance(event.receiver, TensorFacts):
        return event.receiver
    return None


def target_node(event: CallEvent):
    """The expression naming what is differentiated (for messages and fixes)."""
    if event.method == "backward" and isinstance(event.node.func, ast.Attribute):
        return event.node.func.value
    node = event.arg_node("outputs", 0) or event.arg_node("tensors", 0)
    return node if node is not None else event.node


def is_optimizer(value) -> bool:
    return isinstance(value, ObjectRef) and value.kind == "optimizer"


def is_module(value) -> bool:
    return isinstance(value, ObjectRef) and value.kind == "module"


def grad_owner(value):
    """The tensor whose `.grad` a value is, or None."""
    return value.owner if isinstance(value, GradAttr) else None
