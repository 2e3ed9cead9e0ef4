"""What the interpreter saw, in order: the events rules read.

Each event carries the facts known at that point of the program and its
context (inside `no_grad`? inside which loops?). A loop body is walked twice,
so an event inside a loop appears once per pass (`ctx.loop_pass`); rules see
both and the engine drops duplicate findings.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from analysis.facts import TensorFacts, Value


@dataclass(frozen=True)
class Context:
    # True inside no_grad/inference_mode, False where grad is on, None unknown.
    no_grad: bool | None
    # Enclosing loops, outermost first.
    loops: tuple = ()
    # Which pass over the innermost loop's body (0 or 1).
    loop_pass: int = 0
    # Enclosing loops, ifs and trys, outermost first: whether an event runs on every
    # iteration of a loop (nothing conditional between them).
    blocks: tuple = ()
    # The statement the event belongs to (a SimpleStatementLine or compound statement).
    stmt: cst.CSTNode | None = None
    function: cst.FunctionDef | None = None

    @property
    def loop(self):
        return self.loops[-1] if self.loops else None

    def always_runs_in(self, loop) -> bool:
        """Whether the event runs on every iteration of `loop`, as far as branches go."""
        if loop not in self.blocks:
            return False
        inner = self.blocks[self.blocks.index(loop) + 1:]
        return not any(isinstance(b, (cst.If, cst.Try)) for b in inner)


@dataclass(frozen=True)
class GradAttr:
    """The value of `t.grad` (or `t.grad.data`): None until a backward reaches `t`."""
    owner: TensorFacts
    via_data: bool = False


@dataclass
class CallEvent:
    node: cst.Call
    ctx: Context
    qualname: str | None          # resolved torch name of the callee, e.g. "torch.autograd.grad"
    method: str | None            # the attribute name when the callee is `<expr>.name`
    receiver: Value | GradAttr | None
    args: tuple                   # values of positional arguments
    kwargs: dict                  # keyword -> value
    result: Value
    used: bool                    # the call's value is used, not thrown away
    # Graph nodes freed by earlier backward calls at the time of this call -> the
    # call that freed each.
    freed: dict = field(default_factory=dict)
    # For calls to functions defined in this module: that function's summary.
    callee_summary: object = None
    # For a tensor's backward: names bound to the leaves of its graph.
    leaf_names: tuple = ()
    # Graph nodes whose saved tensor an in-place op changed since -> that op.
    clobbered: dict = field(default_factory=dict)
    # For `name(...)`: what `name` was bound to (a module being called).
    callee: object = None

    def arg_node(self, keyword: str | None = None, position: int | None = None) -> cst.Arg | None:
        pos = 0
        for arg in self.node.args:
            if arg.keyword is not None:
                if keyword is not None and arg.keyword.value == keyword:
                    return arg
            elif arg.star == "":
                if position is not None and pos == position:
                    return arg
                pos += 1
        return None


@dataclass
class AttrAssignEvent:
    """`target.attr = value` (e.g. `w.requires_grad = True`, `p.grad = None`)."""
    node: cst.Attribute
    ctx: Context
    receiver: Value
    attr: str
    value: Value
    value_node: cst.BaseExpression


@dataclass
class InplaceEvent:
    """An in-place change of a tensor: `t += 1`, `t[i] = v`, `t.add_(1)`."""
    node: cst.CSTNode
    ctx: Context
    target: Value
    target_node: cst.BaseExpression
    op: str                        # "+=", "setitem", or the method name ("add_")


@dataclass
class AttrReadEvent:
    """`t.grad` read (not assigned)."""
    node: cst.Attribute
    ctx: Context
    receiver: Value
    attr: str


@dataclass
class AccumulateEvent:
    """`total += x` or `total = total + x` with a tensor `x`."""
    node: cst.CSTNode
    ctx: Context
    target_node: cst.BaseExpression
    before: Value
    operand: Value


@dataclass
class LoopEvent:
    node: cst.CSTNode              # the For or While
    ctx: Context                   # the context around the loop


@dataclass
class Trace:
    """Everything seen in one chunk, module code and function bodies alike."""
    events: list = field(default_factory=list)
    # The local name bound to `torch` (for code that fixes insert), if any.
    torch_name: str | None = None
    # Some chunk of the module mentions `.backward(`.
    mentions_backward: bool = False

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]
