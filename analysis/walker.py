"""An abstract interpreter of Python that knows Python's flow and nothing of torch.

It runs a module's statements in order over abstract values (analysis/facts.py)
and a State of what changed in place (analysis/state.py): both branches of an
`if` whose test is not known run and are joined, a loop body runs twice (the
second pass sees what the first left behind, as the second iteration would)
or once per element when it iterates over a small known collection, and calls
into the analysed code are followed: the callee's body runs with the caller's
values (positional and keyword arguments, defaults, `self`), its return value
flows back, and what it changed stays changed. Depth is bounded and recursion
stops. A call it cannot follow goes to `analysis.semantics`, which knows torch;
anything else gives `UNKNOWN`, and what it was handed may have changed.

It reads `ast` trees (libcst is used only to build fixes), walks only the node
types it needs, and never recurses along a chain whose length the user
controls (`elif` chains, `a + b + c + ...`).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from autograd_lsp.analysis import semantics
from autograd_lsp.analysis.semantics import autograd as grad_modes
from autograd_lsp.analysis.facts import (NONE, UNKNOWN, BoundMethod, BuiltinName, ClassValue,
                            ExternalName, FunctionValue, GradAttr, MethodOf, ModuleChoice,
                            ModuleNamespace, NamedTupleType, NoneValue, NumberValue, ObjectRef, Partial, StrValue,
                            TensorFacts, TorchName, TupleValue, Unknown, MaybeNone, join, join_all, replace)
from autograd_lsp.analysis.names import canonical
from autograd_lsp.analysis.semantics import Call, truth, truth_in
from autograd_lsp.analysis.semantics import builtins as py
from autograd_lsp.analysis.semantics import containers, external, objects, tensors
from autograd_lsp.analysis.semantics import nn as nn_ops
from autograd_lsp.analysis.state import State, common_entries, join_states
from autograd_lsp.analysis.trace import (AccumulateEvent, AttrAssignEvent, BareExpressionEvent,
                            CallEvent, CallSite, Choice, Context, Decided, IndexEvent, InplaceEvent,
                            Invariant, Loop, LoopEvent, Trace, WithEvent)
from autograd_lsp.analysis.tree import nodes

MAX_DEPTH = 8
# Elements a loop over a known collection is unrolled for (one pass each).
UNROLL_LIMIT = 16
# Steps one run may take before calls are no longer followed (the calls after that
# point, and a followed call still running then, act as calls of unknown code; the
# run's own statements are still walked): statements and expressions walked, and
# entries of the state looked at by joins (`State.work`). The module's own run
# gets `BUDGET`; a function run on its own (one run per function no call reached)
# gets at most `ALONE_BUDGET` (see FILE_BUDGET): over seven public repositories the largest such run walked
# 6,400 steps, while one of a model zoo's hundreds of `_create_model` helpers follows
# its builder through every block class, 400,000 steps and a second each.
BUDGET = 400_000
ALONE_BUDGET = 8_000
# What all the runs on their own of one file may take together: a file of hundreds
# of model builders (`def vit_base(**kwargs): return _create(...)`, each following
# its builder through every block class) gives each an equal share, never less than
# ALONE_FLOOR: a run whose budget is spent still walks its own statements, with the
# calls after that point unknown, so what it says of its own code stays right.
# (Over twenty-three public repositories, 20,000, 8,000 and 3,000 give the same
# findings; since the budget binds inside followed calls, 20,000 costs 16% more CPU
# than 8,000, and 3,000 saves 6% more. A file's only run still gets ALONE_BUDGET,
# and a file of a few functions gives each a few thousand steps.)
FILE_BUDGET = 8_000
ALONE_FLOOR = 100
# Steps that the calls into the project's other modules may take together in one
# run. A script that calls a library's entry point (timm's `create_model`, run
# through its builders and every block class) followed it for seconds, and what
# its own findings need is rarely deeper than a few calls. Past this, calls into
# other modules act as calls of unknown code; the file's own functions are still
# followed. It binds inside such a call too, not only at its entry. (40,000 gave
# the same findings over seventeen public repositories at a third more time.)
PROJECT_CALLS_BUDGET = 10_000
# A run on its own spends at most this share of its budget in the project's other
# modules: a file of tests that each build a library's `Trainer` spent most of its
# runs' steps there. (A quarter: the same findings over twenty-four public
# repositories, 5% less CPU than the whole budget.)
PROJECT_SHARE = 4
# A decorator of the analysed code runs for what it does; one that took more than
# DECORATOR_STEPS steps a run on average over its first DECORATOR_RUNS applications
# in a run is not run again there: each further application acts as a call of
# unknown code, and the lists and dicts its text names (its registries) may hold
# other items. timm's `@register_model`, applied to a thousand model builders,
# each time reads and rebuilds the pretrained configurations of the module (15% of
# the library's analysis, for a registry no file's findings look into); a plain
# `REGISTRY[name] = fn` costs a few steps and always runs, so what is built from
# such a registry stays known.
DECORATOR_RUNS = 8
DECORATOR_STEPS = 200


class _OverBudget(Exception):
    """Raised at a statement of a followed call once the run's budget (or, inside the
    project's other modules, PROJECT_CALLS_BUDGET) is spent: the outermost call that
    crossed it then acts as a call of unknown code (see `Walker.invoke`)."""


def _keep_marks_of_nodes_made_in(loop, completed: State, exits: list) -> None:
    """A graph node made inside a loop that may run no pass does not exist on the
    path that skips it: what every pass agrees on about it (freed by a backward, its
    saved tensor changed in place) holds wherever it exists, after the loop too (the
    attention weights of each decoder step, changed in place after the softmax saved
    them, then one backward through the stacked outputs). A name bound both before the
    loop and in it joins the two tensors, so a backward after the loop through it is
    judged for the loop that runs, as `_keep_totals_made_tensors` judges a total."""
    live = [e for e in exits if e.reachable]
    if not completed.reachable or not live:
        return
    for field_name in ("freed", "clobbered"):
        kept = getattr(completed, field_name)
        agreed = getattr(live[0], field_name)
        for other in live[1:]:
            agreed = common_entries(agreed, getattr(other, field_name))
        extra = {n: c for n, c in agreed.items() if n not in kept and not loop.predates(n)}
        if extra:
            setattr(completed, field_name, {**kept, **extra})


def _keep_totals_made_tensors(completed: State, entry: State, exits: list) -> None:
    """A total started as a number that every pass makes a tensor (`loss = 0`, then
    `loss += criterion(out, target[t])` for each step of a sequence) is that tensor
    after the loop, though the loop may run no pass: then it would still be the
    number, and the code after it (`loss.backward()`) would fail on it. The code is
    written for the loop that runs."""
    if not completed.reachable:
        return
    ran = None
    for name, before in entry.names.items():
        if not isinstance(before, NumberValue) or not isinstance(completed.names.get(name), Unknown):
            continue
        if ran is None:
            ran = join_states(exits)
        after = ran.names.get(name)
        if isinstance(after, TensorFacts):
            completed.names = dict(completed.names)
            completed.names[name] = after


def _calls_something(comprehension) -> bool:
    """Whether the element (or key and value) of a comprehension calls anything."""
    parts = (comprehension.key, comprehension.value) if isinstance(comprehension, ast.DictComp) \
        else (comprehension.elt,)
    return any(isinstance(n, ast.Call) for part in parts for n in nodes(part))


def _through_partials(callee, args: list, kwargs: dict, state: State):
    """(function, arguments, keywords) a call of `functools.partial` objects comes to:
    their stored arguments first, the call's keywords over theirs."""
    while isinstance(callee, Partial):
        args = [state.fresh(a) for a in callee.args] + list(args)
        kwargs = {**{k: state.fresh(v) for k, v in callee.kwargs}, **kwargs}
        callee = callee.func
    return callee, args, kwargs


def alone_budget(runs: int) -> int:
    """The budget of each of a file's `runs` runs on their own."""
    return max(ALONE_FLOOR, min(ALONE_BUDGET, FILE_BUDGET // max(runs, 1)))

_BINARY_OPS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
    ast.MatMult: "matmul", ast.FloorDiv: "floor_divide", ast.Mod: "remainder",
    # On integer and bool tensors (masks, labels): no graph.
    ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
}
_AUG_SYMBOLS = {
    ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*=", ast.Div: "/=", ast.Pow: "**=",
    ast.MatMult: "@=", ast.FloorDiv: "//=", ast.Mod: "%=",
    ast.BitAnd: "&=", ast.BitOr: "|=", ast.BitXor: "^=",
}
PYTHON_BUILTINS = frozenset(dir(__import__("builtins")))


@dataclass(eq=False)
class Frame:
    """One running scope: the module, a class body or a function call."""
    function: FunctionValue | None
    source: object                       # the ParsedChunk being run
    globals: dict | None                 # the module's names (None: this is the module)
    closure: dict | None = None          # names of the enclosing function
    prefix: object = ()
    depth: int = 0
    returns: list = field(default_factory=list)
    loop_controls: list = field(default_factory=list)
    sites: dict = field(default_factory=dict)
    module: object = None                # the ModuleContext
    yields: list = field(default_factory=list)
    # A generator's first item, when known (see `_first_yield`), and how many loop
    # passes the context held when its body began.
    first_yield: object = None
    entry_passes: int = 0
    # The run's clock (see TensorFacts.birth) when the statement being run began.
    since: int = 0


@dataclass
class LoopControl:
    breaks: list = field(default_factory=list)
    continues: list = field(default_factory=list)


@dataclass
class ModuleContext:
    """What every frame of one module shares."""
    name: str = "__main__"               # `__name__` while it runs
    path: str | None = None
    # resolve(module, level, from_path) -> ModuleNamespace | None, for the project's imports
    resolve: object = None
    # reexported(module, level, from_path, name) -> (namespace, attribute, paths) | None:
    # `from package import name` without running the whole package (Workspace.reexported)
    reexported: object = None


class Walker:
    def __init__(self, trace: Trace | None = None, seen: dict | None = None, budget: int = BUDGET,
                 record_seen: bool = True):
        self.trace = trace if trace is not None else Trace()
        self.budget = budget
        # (The module's own run, with BUDGET, still gets PROJECT_CALLS_BUDGET.)
        self.project_budget = min(PROJECT_CALLS_BUDGET, budget // PROJECT_SHARE)
        # Facts of names as evaluated, for hovers: Name node -> value (joined over runs).
        self.seen = seen if seen is not None else {}
        if not record_seen:
            # No hover will ask (the command line): joining the facts of every name
            # seen, on every pass and call, costs a few percent of the run.
            self.note_seen = _ignore_seen
        self.steps = 0
        # Steps taken inside functions of the project's other modules (see
        # PROJECT_CALLS_BUDGET), and where the running such call began (None: none runs).
        self.project_steps = 0
        self._project_call_start = None
        # Followed calls running now: past the budget, their statements stop the call
        # (a budget checked only where calls begin let one call entered just before
        # it ran every loop and call of its body, ten times the budget and more).
        self._followed_depth = 0
        self._active: list = []          # functions being run (recursion stops)
        self._generations: dict = {}     # graph-node site -> how many were made there
        # `torch.set_default_dtype` anywhere: factory dtypes are no longer known.
        self.changes_default_dtype = False
        self.nodes_made = 0
        # Sources (ParsedChunks) whose functions were followed: a cached result of
        # this run stays valid only while they do not change.
        self.followed_sources: set = set()
        self.followed_functions: set = set()
        self.followed_nodes: set = set()
        self.torch_name: str | None = None
        self._decorator_runs: dict = {}  # decorator's def node -> (applications run, their steps)
        self._decorator_words: dict = {}  # decorator's def node -> the names its text reads

    # -- identities ----------------------------------------------------------------------

    def new_id(self, frame: Frame, node, part: int = 0):
        """A deterministic identity for what `node` makes in this frame: the same on
        every pass over a loop (one allocation site), different in every call."""
        index = frame.sites.get(id(node)) if node is not None else None
        if index is None:
            index = len(frame.sites)
            if node is not None:
                frame.sites[id(node)] = index
        return (frame.prefix, index, part)

    def graph_node(self, frame: Frame, node, part: int = 0):
        """A node of the backward graph: a new one each time the site runs (each
        loop pass builds a new graph), so freeing one leaves the next intact. It
        carries the time it was made (a count of the nodes made so far)."""
        site = self.new_id(frame, node, 500 + part)
        generation = self._generations.get(site, 0) + 1
        self._generations[site] = generation
        self.nodes_made += 1
        return (site, generation, self.nodes_made)

    def float_dtype(self):
        return None if self.changes_default_dtype else "float32"

    def _note_module_method(self, ref, call: Call, value) -> None:
        """`model.propagate()`, `model.encode(x)`: a method of a module that returns a
        tensor with a graph is a forward pass for the rules, in the mode the module is in."""
        outputs = value.items if isinstance(value, TupleValue) else (value,)
        if not any(isinstance(v, TensorFacts) and v.requires_grad is True and v.saved_nodes
                   for v in (call.state.fresh(o) for o in outputs)):
            return
        _note_module(ref, call)

    def call_module(self, ref, call: Call):
        """`model(x)`: what rules need to know of the module, then its forward."""
        _note_module(ref, call)
        value, followed = objects.call_module(self, ref, call)
        for index, hook in enumerate(nn_ops.forward_hooks(call.state, ref)):
            if hook is NONE:
                continue            # removed by its handle
            # `hook(module, inputs, output)`: what it returns, unless None, replaces
            # the output; a hook not known may replace it with anything.
            inner = Call(call.node, [ref, TupleValue(tuple(call.args)), value], {}, call.state, call.ctx,
                         self, call.frame, salt=call.salt + ("hook", index))
            returned, _ = self.apply(hook, inner) if not isinstance(hook, Unknown) else (UNKNOWN, False)
            if returned is not NONE and not isinstance(returned, NoneValue):
                value = returned
        return value, followed

    # -- entry points ----------------------------------------------------------------------

    def run_module(self, tree: ast.Module, state: State, frame: Frame, ctx: Context) -> None:
        self.block(tree.body, state, frame, ctx)

    def run_alone(self, function: FunctionValue, receiver, state: State, module_frame: Frame,
                  ctx: Context) -> None:
        """Run a function with unknown parameters (and `receiver` as `self`): what the
        editor shows while it has no caller."""
        node = function.node
        args = [receiver] if receiver is not None else []
        params = _parameters(node)
        positional = params["positional"]
        start = len(args)
        args += [UNKNOWN] * (len(positional) - start)
        call_ctx = replace(ctx, alone=True, no_grad=function.no_grad)
        saved = state.no_grad
        state.no_grad = function.no_grad
        self.invoke(function, args, {name: UNKNOWN for name in params["kwonly"]}, state,
                    module_frame, call_ctx, None, alone=True)
        state.no_grad = saved

    # -- statements --------------------------------------------------------------------------

    def block(self, statements, state: State, frame: Frame, ctx: Context) -> None:
        for stmt in statements:
            if not state.reachable:
                return
            self.stmt(stmt, state, frame, ctx)

    def stmt(self, node, state: State, frame: Frame, ctx: Context) -> None:
        self.steps += 1
        if self._followed_depth:
            now = self.steps + state.work[0]
            if now > self.budget or (self._project_call_start is not None and
                                     self.project_steps + now - self._project_call_start > self.project_budget):
                raise _OverBudget()
        frame.since = state.clock[0]
        ctx = ctx.at(node, frame.source, state.no_grad)
        handler = _STATEMENTS.get(type(node))
        if handler is not None:
            handler(self, node, state, frame, ctx)

    def s_expr(self, node: ast.Expr, state, frame, ctx):
        value = self.expr(node.value, state, frame, ctx, used=False)
        if isinstance(node.value, (ast.Attribute, ast.Name)):
            self.emit(BareExpressionEvent(node, ctx, value))

    def s_assign(self, node: ast.Assign, state, frame, ctx):
        discarded = all(isinstance(t, ast.Name) and t.id == "_" for t in node.targets)
        added = _zip_addition(node)
        if added is not None:
            # `self.data = [a + b for a, b in zip(self.data, args)]` (d2l's Accumulator):
            # each slot of the total adds the value given for it.
            totals = self.expr(node.targets[0], state, frame, ctx)
            given = self.expr(added, state, frame, ctx)
            slots = py.iterate(self.call_for(node, state, frame, ctx), totals)
            values = py.iterate(self.call_for(added, state, frame, ctx), given).elements or []
            befores = slots.elements if slots.elements is not None else [slots.element] * len(values)
            for slot, (before, operand) in enumerate(list(zip(befores, values))[:_MAX_SLOTS]):
                operand = state.fresh(operand)
                if isinstance(operand, TensorFacts):
                    self.emit(AccumulateEvent(node, ctx, node.targets[0], state.fresh(before), operand, slot))
        addition = _self_addition(node)
        add, side, decay = addition if addition is not None else (None, None, None)
        outer = self._watched_node, self._watched, self._added_node, self._added   # a call in the value assigns too
        self._watched_node, self._watched, self._added_node, self._added = decay, None, add, None
        value = self.expr(node.value, state, frame, ctx, used=not discarded)
        watched, added = self._watched, self._added
        self._watched_node, self._watched, self._added_node, self._added = outer
        if added is not None:
            # `total = total + loss`, `self.total = ...`, `stats["loss"] = stats["loss"] + ...`,
            # `avg = 0.05 * loss + 0.95 * avg`
            before, operand = added if side == "left" else (added[1], added[0])
            if watched is not None:
                # `avg = beta * avg + (1 - beta) * loss`: the total is what was decayed.
                before = watched[1] if _same_place(node.targets[0], decay.right) else watched[0]
            if isinstance(operand, TensorFacts):
                self.emit(AccumulateEvent(node, ctx, node.targets[0], before, operand,
                                          operand_node=add.right if side == "left" else add.left))
        for target in node.targets:
            self.assign(target, value, node.value, state, frame, ctx)

    def s_annassign(self, node: ast.AnnAssign, state, frame, ctx):
        if node.value is not None:
            value = self.expr(node.value, state, frame, ctx)
            self.assign(node.target, value, node.value, state, frame, ctx)

    def s_augassign(self, node: ast.AugAssign, state, frame, ctx):
        symbol = _AUG_SYMBOLS.get(type(node.op), "op=")
        op = _BINARY_OPS.get(type(node.op))
        target = self.expr(node.target, state, frame, ctx)
        operand = self.expr(node.value, state, frame, ctx)
        if isinstance(target, GradAttr):
            # `p.grad += g`: an in-place change of `.grad` (a TypeError while it is None).
            self.emit(InplaceEvent(node, ctx, target, node.target, symbol))
            return
        if isinstance(target, TensorFacts) and symbol != "@=" and op is not None:
            tensors.inplace(self.call_for(node, state, frame, ctx), target, node.target, symbol,
                            operand, node)
            if symbol == "+=" and isinstance(operand, TensorFacts):
                self.emit(AccumulateEvent(node, ctx, node.target, target, operand))
            return
        result = self.binary(op, target, operand, node, state, frame, ctx) if op else UNKNOWN
        if symbol == "+=" and isinstance(operand, TensorFacts) \
                and isinstance(target, (NumberValue, TensorFacts, Unknown)):
            # `total += loss` with a number total: the name now holds a tensor.
            self.emit(AccumulateEvent(node, ctx, node.target, target, operand))
        self.assign(node.target, result, node, state, frame, ctx, augmented=True)

    def s_return(self, node: ast.Return, state, frame, ctx):
        value = self.expr(node.value, state, frame, ctx) if node.value is not None else NONE
        frame.returns.append((value, state.copy()))
        state.reachable = False

    def s_raise(self, node: ast.Raise, state, frame, ctx):
        if node.exc is not None:
            self.expr(node.exc, state, frame, ctx)
        state.reachable = False

    def s_break(self, node, state, frame, ctx):
        if frame.loop_controls:
            frame.loop_controls[-1].breaks.append(state.copy())
        state.reachable = False

    def s_continue(self, node, state, frame, ctx):
        if frame.loop_controls:
            frame.loop_controls[-1].continues.append(state.copy())
        state.reachable = False

    def s_assert(self, node: ast.Assert, state, frame, ctx):
        self.expr(node.test, state, frame, ctx)

    def s_delete(self, node: ast.Delete, state, frame, ctx):
        for target in node.targets:
            if isinstance(target, ast.Name):
                state.names.pop(target.id, None)
            elif isinstance(target, ast.Attribute) and target.attr == "grad":
                owner = self.expr(target.value, state, frame, ctx)
                if isinstance(owner, TensorFacts):
                    state.update_tensor(replace(owner, grad="none", grad_at=state.tick()))
                    self.emit(AttrAssignEvent(target, ctx, owner, "grad", NONE, target))
            elif isinstance(target, ast.Subscript):
                base = self.expr(target.value, state, frame, ctx)
                whole = isinstance(target.slice, ast.Slice) and target.slice.lower is None \
                    and target.slice.upper is None and target.slice.step is None
                if isinstance(base, ObjectRef) and base.kind == "list" and whole:
                    containers.clear(state, base)           # `del items[:]`
                elif isinstance(base, ObjectRef) and base.kind in ("list", "dict"):
                    containers.forget(state, base)

    def s_global(self, node, state, frame, ctx):
        for name in node.names:
            state.names[name] = UNKNOWN

    def s_import(self, node: ast.Import, state, frame, ctx):
        for alias in node.names:
            if alias.asname:
                state.names[alias.asname] = self.imported_module(alias.name, 0, frame, state)
            else:
                # `import torch.utils.data` and `import project.data` bind the first
                # name (`data` is reached through it).
                head = alias.name.split(".")[0]
                if "." in alias.name:
                    self.imported_module(alias.name, 0, frame, state)   # read it: its objects
                state.names[head] = self.imported_module(head, 0, frame, state)

    def s_importfrom(self, node: ast.ImportFrom, state, frame, ctx):
        base = node.module or ""
        module = None       # the whole module, run only when a name needs it
        for alias in node.names:
            local = alias.asname or alias.name
            if alias.name != "*":
                value = self.reexported(base, node.level, alias.name, frame, state)
                if value is not None:
                    state.names[local] = value
                    continue
            if module is None:
                module = self.imported_module(base, node.level, frame, state) if base or node.level \
                    else UNKNOWN
            if alias.name == "*":
                if isinstance(module, ModuleNamespace):
                    for name, value in module.names:
                        state.names[name] = value
                continue
            value = self.member(module, alias.name, state)
            if isinstance(module, ModuleNamespace) and isinstance(value, Unknown):
                # `from package import module`
                sub = self.imported_module(f"{base}.{alias.name}" if base else alias.name, node.level,
                                           frame, state)
                value = sub if isinstance(sub, ModuleNamespace) else value
            state.names[local] = value

    def imported_module(self, name: str, level: int, frame: Frame, state: State | None = None):
        if level == 0:
            head = name.split(".")[0]
            if head == "torch":
                return TorchName(canonical(name))
        resolve = frame.module.resolve if frame.module is not None else None
        if resolve is not None:
            found = resolve(name, level, frame.module.path)
            if found is not None:
                if state is not None:
                    _reach_module_objects(state, found)
                return found
        return ExternalName(name) if level == 0 else UNKNOWN

    def reexported(self, name: str, level: int, member: str, frame: Frame, state: State):
        """`from name import member` of a project package, read from the submodule that
        binds `member` (None: not known that way; the whole module runs)."""
        lookup = frame.module.reexported if frame.module is not None else None
        if lookup is None or not (name or level) or (level == 0 and name.split(".")[0] == "torch"):
            return None
        found = lookup(name, level, frame.module.path, member)
        if found is None:
            return None
        namespace, attribute, _ = found
        value = namespace if attribute is None else self.member(namespace, attribute, state)
        if isinstance(value, Unknown):
            return None
        _reach_module_objects(state, namespace)
        return value

    def s_if(self, node: ast.If, state, frame, ctx):
        outs = []
        current, pending = node, state
        # While every test so far was known, and known the same on every pass of the
        # loops around it (see `_same_every_time`), the branch taken is certain: rules
        # asking whether an event is conditional (`Context.always_runs_in`) do not see
        # this `if` around it.
        decided = True
        # Every test so far known on this pass: the branch taken ran on it (`Decided`);
        # and known the same on every pass of the function's own loops (`Invariant`).
        known_so_far = invariant = True
        while True:
            test_ctx = ctx.at(current, ctx.source, ctx.no_grad)
            known = truth_in(pending, self.expr(current.test, pending, frame, test_ctx))
            known_so_far = known_so_far and known is not None
            invariant = invariant and known_so_far and _invariant_in_own_loops(current.test, ctx)
            inner = ctx.inside(Invariant(current) if invariant else Decided(current) if known_so_far else current)
            decided = decided and known is not None and _same_every_time(current.test)
            tested = _none_test(current.test) if known is None else None
            if known is not False:
                then = pending if known is True else pending.copy()
                if tested is not None:
                    _narrow(then, tested[0], tested[1])
                self.block(current.body, then, frame, ctx if known is True and decided else inner)
                outs.append(then)
                if known is True:
                    break
            if tested is not None:
                _narrow(pending, tested[0], not tested[1])
            if len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
                # `elif`: walked in a loop, not by recursion (chains can be long).
                ctx = ctx if decided else inner
                current = current.orelse[0]
                continue
            self.block(current.orelse, pending, frame, ctx if decided else inner)
            outs.append(pending)
            break
        state.become(join_states(outs))

    def s_with(self, node, state, frame, ctx):
        values = []
        mode = state.no_grad
        for item in node.items:
            value = self.expr(item.context_expr, state, frame, ctx)
            values.append(value)
            found = grad_modes.grad_mode_of(value)
            if found is not None:
                mode = found if found != "unknown" else None
            if item.optional_vars is not None:
                self.assign(item.optional_vars, grad_modes.entered(value), node, state,
                            frame, ctx)
        self.emit(WithEvent(node, ctx, tuple(values)))
        saved = state.no_grad
        state.no_grad = mode
        self.block(node.body, state, frame, ctx)
        state.no_grad = saved

    def s_try(self, node, state, frame, ctx):
        inner = ctx.inside(node)
        entry = state.copy()
        self.block(node.body, state, frame, inner)
        outs = []
        if node.orelse:
            self.block(node.orelse, state, frame, inner)
        outs.append(state.copy())
        for handler in node.handlers:
            h_state = entry.copy()
            h_state.reachable = True
            if handler.name:
                h_state.names[handler.name] = UNKNOWN
            self.block(handler.body, h_state, frame, inner)
            outs.append(h_state)
        joined = join_states(outs)
        state.become(joined)
        if node.finalbody:
            was = state.reachable
            state.reachable = True
            self.block(node.finalbody, state, frame, inner)
            state.reachable = state.reachable and was

    def s_match(self, node, state, frame, ctx):
        self.expr(node.subject, state, frame, ctx)
        outs = []
        for case in node.cases:
            branch = state.copy()
            for name in _names_bound_by_pattern(case.pattern):
                branch.names[name] = UNKNOWN
            self.block(case.body, branch, frame, replace(ctx, blocks=ctx.blocks + (node,)))
            outs.append(branch)
        outs.append(state.copy())
        state.become(join_states(outs))

    def s_functiondef(self, node, state, frame, ctx):
        state.names[node.name] = self.make_function(node, state, frame, ctx)

    def s_classdef(self, node: ast.ClassDef, state, frame, ctx):
        state.names[node.name] = objects.make_class(self, node, state, frame, ctx)

    # -- loops ------------------------------------------------------------------------------

    def s_for(self, node, state, frame, ctx):
        iterable = self.expr(node.iter, state, frame, ctx)
        iteration = py.iterate(self.call_for(node.iter, state, frame, ctx), iterable,
                               small_ranges=frame.source.trains_nothing(node))
        self.run_loop(node, state, frame, ctx, iteration, node.target, None)

    def s_while(self, node: ast.While, state, frame, ctx):
        self.run_loop(node, state, frame, ctx, None, None, node.test)

    def run_loop(self, node, state: State, frame: Frame, ctx: Context, iteration, target, test):
        if iteration is not None and iteration.exhausted:
            if node.orelse:
                self.block(node.orelse, state, frame, ctx)
            return
        unrolled = iteration is not None and iteration.elements is not None \
            and 0 < len(iteration.elements) <= UNROLL_LIMIT
        loop = Loop(node, frame.source, unrolled=unrolled, start=self.nodes_made)
        self.emit(LoopEvent(loop, ctx))
        entry = state.copy()
        control = LoopControl()
        frame.loop_controls.append(control)
        exits = []
        passes = len(iteration.elements) if unrolled else 2
        current = state.copy()
        for index in range(passes):
            inner = replace(ctx, loops=ctx.loops + (loop,), passes=ctx.passes + (index,),
                            blocks=ctx.blocks + (loop,), clocks=ctx.clocks + (current.clock[0],))
            if test is not None:
                known = truth_in(current, self.expr(test, current, frame, replace(inner, stmt=node)))
                if known is False:
                    exits.append(current)
                    break
            if target is not None:
                element = iteration.elements[index] if unrolled else \
                    iteration.first if index == 0 and iteration.first is not None else iteration.element
                element = _made_by_iteration(element, loop)
                if iteration.renewed:
                    element = py.renewed(element, current)
                self.assign(target, element, node, current, frame, replace(inner, stmt=node))
            self.block(node.body, current, frame, inner)
            end = join_states([current] + control.continues)
            control.continues = []
            exits.append(end)
            if not end.reachable:
                break
            current = end.copy()
            if not unrolled:
                _widen_counters(current, entry)
        frame.loop_controls.pop()
        runs_once = iteration is not None and iteration.nonempty is True
        if test is not None:
            runs_once = truth_in(entry, self.expr(test, entry.copy(), frame, ctx)) is True
        if unrolled and exits:
            # One pass per element, in order: the loop ends where the last one does.
            completed = exits[-1]
        else:
            completed = join_states(exits if runs_once or not exits else [entry] + exits)
            if not runs_once and exits:
                _keep_totals_made_tensors(completed, entry, exits)
                _keep_marks_of_nodes_made_in(loop, completed, exits)
        if test is not None and isinstance(test, ast.Constant) and test.value is True:
            completed = None            # `while True:` ends only by break
        if node.orelse and completed is not None and completed.reachable:
            self.block(node.orelse, completed, frame, ctx)
        outs = control.breaks + ([completed] if completed is not None else [])
        joined = join_states(outs) if outs else None
        if joined is None:
            joined = entry
            joined.reachable = False
        state.become(joined)

    # -- definitions ---------------------------------------------------------------------------

    def make_function(self, node, state, frame, ctx, qualname: str | None = None) -> FunctionValue:
        args = node.args
        defaults = tuple(self.expr(d, state, frame, ctx) for d in args.defaults)
        kw_defaults = tuple((a.arg, self.expr(d, state, frame, ctx))
                            for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
        no_grad = None
        is_static = is_class = is_property = False
        own_decorators = []
        for deco in getattr(node, "decorator_list", ()):
            value = self.expr(deco, state, frame, ctx)
            if isinstance(value, (FunctionValue, BoundMethod)):
                own_decorators.append(value)
            mode = grad_modes.grad_mode_of(value)
            if mode is not None:
                no_grad = None if mode == "unknown" else mode
            elif isinstance(value, BuiltinName):
                is_static |= value.name == "staticmethod"
                is_class |= value.name == "classmethod"
                is_property |= value.name == "property"
        closure = state.names if frame.function is not None else None
        name = getattr(node, "name", "<lambda>")
        function = FunctionValue(node, frame.source, qualname or name, defaults, kw_defaults, closure,
                                 no_grad, is_static, is_class, is_property)
        for decorator in reversed(own_decorators):
            self.apply_decorator(decorator, function, node, state, frame, ctx)
        return function

    def apply_decorator(self, decorator, target, node, state: State, frame: Frame, ctx: Context) -> None:
        """Run a decorator of the analysed code on a function or class for what it does
        (`@register("mlp")` filling a registry of encoders); the name stays bound to
        `target`, whatever the decorator is seen to return. A costly one stops
        running after DECORATOR_RUNS applications and acts as unknown code."""
        call = Call(node, [target], {}, state, ctx, self, frame)
        function = decorator.function if isinstance(decorator, BoundMethod) else decorator
        runs, spent = self._decorator_runs.get(function.node, (0, 0))
        if runs < DECORATOR_RUNS or spent <= DECORATOR_STEPS * runs:
            before = self.steps + state.work[0]
            self.apply(decorator, call)
            self._decorator_runs[function.node] = (runs + 1, spent + self.steps + state.work[0] - before)
            return
        py.havoc(call)
        globals_ = getattr(function.source, "module_names", None)
        if globals_ is None:
            globals_ = frame.globals if frame.globals is not None else state.names
        words = self._decorator_words.get(function.node)
        if words is None:
            words = self._decorator_words[function.node] = frozenset(
                n.id for n in nodes(function.node) if isinstance(n, ast.Name))
        named = [scope[word] for scope in (function.closure or {}, globals_) for word in words if word in scope]
        if isinstance(decorator, BoundMethod):
            named.append(decorator.receiver)
        # A registry object's own lists and dicts (`@MODELS.register`, or `self` in the
        # closure of what `@MODELS.register_module()` returned).
        named.extend(item for value in named if isinstance(value, ObjectRef) and value.kind == "instance"
                     for item in state.attrs(value).values())
        for value in named:
            if isinstance(value, ObjectRef) and value.kind in ("list", "dict"):
                containers.forget(state, value)

    # -- binding ------------------------------------------------------------------------------

    def assign(self, target, value, value_node, state: State, frame: Frame, ctx: Context,
               augmented: bool = False) -> None:
        if isinstance(target, ast.Name):
            self.bind_name(target, value, state)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elements = target.elts
            items = py.unpack(state, value, len(elements))
            starred = [i for i, e in enumerate(elements) if isinstance(e, ast.Starred)]
            if items is not None and not starred:
                for element, item in zip(elements, items):
                    self.assign(element, item, value_node, state, frame, ctx)
            else:
                whole = py.unpack_star(state, value, len(elements), starred)
                for index, element in enumerate(elements):
                    item = whole[index] if whole is not None else UNKNOWN
                    self.assign(element.value if isinstance(element, ast.Starred) else element,
                                item, value_node, state, frame, ctx)
        elif isinstance(target, ast.Attribute):
            receiver = self.expr(target.value, state, frame, ctx)
            objects.set_attribute(self, target, receiver, target.attr, value, value_node, state,
                                  frame, ctx)
        elif isinstance(target, ast.Subscript):
            base = self.expr(target.value, state, frame, ctx)
            index = self.subscript_index(target, state, frame, ctx)
            if isinstance(base, TensorFacts):
                if not augmented:
                    tensors.setitem(self.call_for(target, state, frame, ctx), base, target, value)
            elif isinstance(base, ObjectRef) and base.kind in ("list", "dict"):
                containers.setitem(state, base, index, value)
                # `state["last"] = loss` fills the same slot in every iteration: it keeps
                # the newest value only, not one per iteration.
                if not isinstance(target.slice, ast.Constant):
                    self.emit(containers.store_event(state, target, ctx, base, value))
            elif isinstance(base, ObjectRef) and base.kind == "module":
                # `model.classifier[6] = nn.Linear(...)`: a layer of a container replaced.
                nn_ops.set_child(state, base, nn_ops.child_name(index), value)
            elif isinstance(base, GradAttr):
                self.emit(InplaceEvent(target, ctx, base, target.value, "setitem"))
        elif isinstance(target, ast.Starred):
            self.assign(target.value, UNKNOWN, value_node, state, frame, ctx)

    def bind_name(self, target: ast.Name, value, state: State) -> None:
        if isinstance(value, TensorFacts) and value.label is None and value.is_leaf \
                and value.requires_grad:
            # how the backward graph names this leaf (torch's AccumulateGrad)
            value = replace(value, label=target.id)
            if value.tid in state.tensors:
                state.update_tensor(value)
        state.names[target.id] = value
        self.note_seen(target, value)

    def note_seen(self, node, value) -> None:
        old = self.seen.get(node)
        self.seen[node] = value if old is None else join(old, value)

    # -- expressions --------------------------------------------------------------------------

    # The operands of two BinOp nodes, when s_assign asks for them: the addition of
    # `total = total + loss` (`_added`) and the product that decays the total in a
    # moving average (`_watched`).
    _watched_node = _watched = None
    _added_node = _added = None

    def expr(self, node, state: State, frame: Frame, ctx: Context, used: bool = True):
        if node is None:
            return UNKNOWN
        self.steps += 1
        kind = type(node)
        if kind is ast.Name:
            value = self.lookup(node.id, state, frame)
            if state.freed and isinstance(value, TensorFacts) and state.freed_by(value) is not None:
                self.note_seen(node, replace(value, graph_freed=True))
            else:
                self.note_seen(node, value)
            return value
        if kind is ast.Call:
            return self.call(node, state, frame, ctx, used)
        if kind is ast.Attribute:
            return self.attribute(node, state, frame, ctx)
        if kind is ast.Constant:
            return _constant(node.value)
        if kind is ast.BinOp:
            return self.binop_chain(node, state, frame, ctx)
        if kind is ast.UnaryOp:
            return self.unary(node, state, frame, ctx)
        if kind is ast.Subscript:
            return self.subscript(node, state, frame, ctx)
        if kind is ast.Compare:
            return self.compare(node, state, frame, ctx)
        if kind is ast.BoolOp:
            return self.boolop(node, state, frame, ctx)
        if kind is ast.Tuple:
            items = self.elements(node.elts, state, frame, ctx)
            return TupleValue(tuple(items)) if items is not None else UNKNOWN
        if kind is ast.List:
            items = self.elements(node.elts, state, frame, ctx)
            return containers.new_list(self.call_for(node, state, frame, ctx), items)
        if kind is ast.Set:
            self.elements(node.elts, state, frame, ctx)
            return UNKNOWN
        if kind is ast.Dict:
            return self.dict_display(node, state, frame, ctx)
        if kind is ast.IfExp:
            known = truth_in(state, self.expr(node.test, state, frame, ctx))
            if known is True:
                return self.expr(node.body, state, frame, ctx)
            if known is False:
                return self.expr(node.orelse, state, frame, ctx)
            other = state.copy()
            a = self.expr(node.body, state, frame, ctx.inside(node))
            b = self.expr(node.orelse, other, frame, ctx.inside(node))
            state.become(state.joined(other))
            return join(state.fresh(a), state.fresh(b))
        if kind in (ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp):
            return self.comprehension(node, state, frame, ctx, used)
        if kind is ast.Lambda:
            return self.make_function(node, state, frame, ctx)
        if kind is ast.JoinedStr:
            for part in node.values:
                if isinstance(part, ast.FormattedValue):
                    self.expr(part.value, state, frame, ctx)
            return StrValue()
        if kind is ast.NamedExpr:
            value = self.expr(node.value, state, frame, ctx)
            self.bind_name(node.target, value, state)
            return value
        if kind is ast.Starred:
            return self.expr(node.value, state, frame, ctx)
        if kind in (ast.Yield, ast.YieldFrom):
            value = self.expr(node.value, state, frame, ctx) if node.value is not None else NONE
            if kind is ast.Yield:
                if not frame.yields and node is _first_yield(frame) \
                        and not any(ctx.passes[frame.entry_passes:]):
                    frame.first_yield = state.fresh(value)
                frame.yields.append(state.fresh(value))
            else:
                frame.yields.append(py.iterate(self.call_for(node, state, frame, ctx), value).element)
            return UNKNOWN
        if kind is ast.Await:
            self.expr(node.value, state, frame, ctx)
            return UNKNOWN
        if kind is ast.Slice:
            return py.SliceValue(*(self.expr(part, state, frame, ctx) if part is not None else None
                                   for part in (node.lower, node.upper, node.step)))
        return UNKNOWN

    def elements(self, nodes, state, frame, ctx):
        """Values of a display's elements; None when a `*x` hides how many there are."""
        items = []
        known = True
        for element in nodes:
            value = self.expr(element, state, frame, ctx)
            if isinstance(element, ast.Starred):
                spread = py.unpack(state, value, None)
                if spread is None:
                    known = False
                else:
                    items.extend(spread)
                continue
            items.append(value)
        return items if known else None

    def dict_display(self, node: ast.Dict, state, frame, ctx):
        entries = {}
        known = True
        for key, value_node in zip(node.keys, node.values):
            value = self.expr(value_node, state, frame, ctx)
            if key is None:
                known = False
                continue
            k = self.expr(key, state, frame, ctx)
            if isinstance(k, StrValue) and k.value is not None:
                entries[k.value] = value
            elif isinstance(k, NumberValue) and k.value is not None:
                entries[k.value] = value
            else:
                known = False
                entries.setdefault(None, value)
        return containers.new_dict(self.call_for(node, state, frame, ctx), entries, known)

    def lookup(self, name: str, state: State, frame: Frame):
        names = state.names
        if name in names:
            return state.fresh(names[name])
        if frame.closure is not None:
            scope = frame.closure
            if name in scope:
                return state.fresh(scope[name])
        if frame.function is not None and frame.function.closure is not None:
            if name in frame.function.closure:
                return state.fresh(frame.function.closure[name])
        if frame.globals is not None and name in frame.globals:
            return state.fresh(frame.globals[name])
        if name == "__name__":
            return StrValue(frame.module.name if frame.module is not None else "__main__")
        if name in PYTHON_BUILTINS:
            return BuiltinName(name)
        return UNKNOWN

    def attribute(self, node: ast.Attribute, state, frame, ctx):
        receiver = self.expr(node.value, state, frame, ctx)
        return self.member(receiver, node.attr, state, node, frame, ctx)

    def member(self, receiver, name: str, state: State, node=None, frame=None, ctx=None):
        """`receiver.name` as a value."""
        if isinstance(receiver, TorchName):
            qualname = canonical(f"{receiver.qualname}.{name}")
            return external.constant(qualname) or TorchName(qualname)
        if isinstance(receiver, ExternalName):
            qualname = f"{receiver.qualname}.{name}"
            return external.constant(qualname) or ExternalName(qualname)
        if isinstance(receiver, ModuleNamespace):
            for key, value in receiver.names:
                if key == name:
                    return value
            return UNKNOWN
        if isinstance(receiver, TensorFacts):
            return tensors.attribute(self, receiver, name, state, node, frame, ctx)
        if isinstance(receiver, GradAttr):
            if name == "data":
                return GradAttr(receiver.owner, via_data=True)
            return MethodOf(receiver, name)
        if isinstance(receiver, ObjectRef):
            return objects.get_attribute(self, receiver, name, state, node, frame, ctx)
        if isinstance(receiver, ClassValue):
            found = receiver.lookup(name)
            if found is not None:
                return found
            if semantics.find_method(receiver, name) is not None:
                return MethodOf(receiver, name)      # `Fn.apply` of a custom autograd Function
            return UNKNOWN
        if isinstance(receiver, objects.SuperValue):
            return objects.super_attribute(receiver, name)
        if isinstance(receiver, TupleValue) and receiver.names and name in receiver.names:
            return state.fresh(receiver.items[receiver.names.index(name)])
        if isinstance(receiver, external.NdArray):
            found = external.array_attribute(receiver, name)
            return found if found is not None else MethodOf(receiver, name)
        if isinstance(receiver, (StrValue, NumberValue, TupleValue, NoneValue)):
            return MethodOf(receiver, name)
        return UNKNOWN

    def subscript_index(self, node: ast.Subscript, state, frame, ctx):
        return self.expr(node.slice, state, frame, ctx)

    def subscript(self, node: ast.Subscript, state, frame, ctx):
        base = self.expr(node.value, state, frame, ctx)
        index = self.subscript_index(node, state, frame, ctx)
        if isinstance(base, TensorFacts):
            via_data = isinstance(node.value, ast.Attribute) and node.value.attr == "data"
            self.emit(IndexEvent(node, ctx, base, index, via_data))
            return tensors.getitem(self.call_for(node, state, frame, ctx), base, node.slice, index)
        if isinstance(base, GradAttr):
            return UNKNOWN
        return containers.getitem(self, state, base, index, node, frame, ctx)

    def unary(self, node: ast.UnaryOp, state, frame, ctx):
        operand = self.expr(node.operand, state, frame, ctx)
        if isinstance(node.op, ast.Not):
            known = truth_in(state, operand)
            return NumberValue("bool", None if known is None else not known)
        if isinstance(operand, TensorFacts):
            if isinstance(node.op, ast.USub):
                return tensors.derived(self.call_for(node, state, frame, ctx), "neg", [operand],
                                       shape=operand.shape, dtype=operand.dtype)
            return operand
        if isinstance(operand, NumberValue):
            if isinstance(node.op, ast.USub) and isinstance(operand.value, (int, float)):
                return NumberValue(operand.kind, -operand.value)
            return NumberValue(operand.kind)
        return UNKNOWN

    def binop_chain(self, node: ast.BinOp, state, frame, ctx):
        # `a + b + c + ...` is a left-deep tree: walk it with a list, not recursion.
        chain = []
        current = node
        while isinstance(current, ast.BinOp):
            chain.append(current)
            current = current.left
        value = self.expr(current, state, frame, ctx)
        for op_node in reversed(chain):
            right = self.expr(op_node.right, state, frame, ctx)
            if op_node is self._watched_node:
                self._watched = (value, right)
            if op_node is self._added_node:
                self._added = (value, right)
            value = self.binary(_BINARY_OPS.get(type(op_node.op)), value, right, op_node, state,
                                frame, ctx)
        return value

    def binary(self, op, left, right, node, state, frame, ctx):
        if op is None:
            return UNKNOWN
        if op == "mul" and isinstance(right, NumberValue) and containers.is_sequence(left):
            return containers.repeat(self.call_for(node, state, frame, ctx), left, right)
        if op == "mul" and isinstance(left, NumberValue) and containers.is_sequence(right):
            return containers.repeat(self.call_for(node, state, frame, ctx), right, left)
        array = external.array_arithmetic(op, left, right)
        if array is not None:
            return array
        if isinstance(left, (TensorFacts, NumberValue)) or isinstance(right, (TensorFacts, NumberValue)):
            return tensors.binary(self.call_for(node, state, frame, ctx), op, left, right)
        if op == "add":
            return containers.concatenate(self.call_for(node, state, frame, ctx), left, right)
        if isinstance(left, StrValue) or isinstance(right, StrValue):
            return StrValue()
        return UNKNOWN

    def compare(self, node: ast.Compare, state, frame, ctx):
        values = [self.expr(node.left, state, frame, ctx)]
        values += [self.expr(c, state, frame, ctx) for c in node.comparators]
        tensors_seen = [v for v in values if isinstance(v, TensorFacts)]
        if tensors_seen and all(isinstance(v, (TensorFacts, NumberValue)) for v in values):
            return tensors.comparison(self.call_for(node, state, frame, ctx), values)
        result = True
        for op, left, right in zip(node.ops, values, values[1:]):
            if isinstance(op, (ast.In, ast.NotIn)):
                known = containers.contains(state, right, left)
                known = known if known is None or isinstance(op, ast.In) else not known
            else:
                known = py.compare(op, left, right)
            if known is False:
                return NumberValue("bool", False)
            if known is None:
                result = None
        return NumberValue("bool", result)

    def boolop(self, node: ast.BoolOp, state, frame, ctx):
        is_and = isinstance(node.op, ast.And)
        values = []
        branches = []
        result_known = True
        inner = ctx.inside(node)
        for index, value_node in enumerate(node.values):
            value = self.expr(value_node, state, frame, ctx if index == 0 else inner)
            values.append(value)
            if index == len(node.values) - 1:
                break                # the last value is the result, whatever its truth
            known = truth_in(state, value)
            if known is (not is_and):
                # short-circuit: the rest never runs
                return value if result_known else join(value, UNKNOWN)
            if known is None:
                result_known = False
                branches.append(state.copy())
        if branches:
            state.become(join_states(branches + [state]))
        if result_known:
            return values[-1]
        if all(isinstance(v, NumberValue) and v.kind == "bool" for v in values):
            return NumberValue("bool")
        return UNKNOWN

    def comprehension(self, node, state, frame, ctx, used: bool = True):
        """A list/set/dict comprehension or generator: its generators are loops (unrolled
        over small known collections); the result is a list of what it makes."""
        saved_names = state.names
        state.names = dict(saved_names)
        results = []
        complete = [True]
        self._comprehend(node, node.generators, 0, state, frame, ctx, results, complete, used)
        state.names = saved_names
        call = self.call_for(node, state, frame, ctx)
        if isinstance(node, ast.DictComp):
            keys = [containers.key_of(k) for k, _ in results]
            if complete[0] and None not in keys:
                # every pass known, every key a known str or number: the entries are known
                return containers.new_dict(call, dict(zip(keys, (v for _, v in results))), True)
            return containers.new_dict(call, {}, False,
                                       value=join_all([v for _, v in results]) if results else UNKNOWN)
        items = [v for v in results]
        if complete[0]:
            return containers.new_list(call, items)
        return containers.new_list(call, None, item=join_all(items) if items else UNKNOWN)

    def _comprehend(self, node, generators, index, state, frame, ctx, results, complete, used=True):
        if index == len(generators):
            if isinstance(node, ast.DictComp):
                key = self.expr(node.key, state, frame, ctx)
                results.append((key, state.fresh(self.expr(node.value, state, frame, ctx, used))))
            else:
                results.append(state.fresh(self.expr(node.elt, state, frame, ctx, used)))
            return
        gen = generators[index]
        iterable = self.expr(gen.iter, state, frame, ctx)
        iteration = py.iterate(self.call_for(gen.iter, state, frame, ctx), iterable, small_ranges=True)
        unrolled = iteration.elements is not None and len(iteration.elements) <= UNROLL_LIMIT
        loop = Loop(gen, frame.source, unrolled=unrolled, start=self.nodes_made)
        self.emit(LoopEvent(loop, ctx))
        elements = iteration.elements if unrolled else [iteration.element]
        if not unrolled:
            complete[0] = False
            if self.trace.mentions_backward and _calls_something(node):
                # A second pass sees what the first left behind, as a loop's does:
                # `[train_step(x, y) for x, y in loader]` steps on the sum of every
                # earlier batch's gradients when nothing clears them. (Only where the
                # text backwards somewhere: model code builds its blocks in
                # comprehensions, and walking them twice finds nothing there.)
                elements = [iteration.element, iteration.element]
        for pass_index, element in enumerate(elements):
            inner = replace(ctx, loops=ctx.loops + (loop,), passes=ctx.passes + (pass_index,),
                            blocks=ctx.blocks + (loop,), clocks=ctx.clocks + (state.clock[0],))
            self.assign(gen.target, element, gen, state, frame, inner)
            keep = True
            for cond in gen.ifs:
                known = truth_in(state, self.expr(cond, state, frame, inner))
                if known is False:
                    keep = False
                elif known is None:
                    complete[0] = False
            if keep:
                self._comprehend(node, generators, index + 1, state, frame,
                                 replace(inner, blocks=inner.blocks + tuple(gen.ifs)), results, complete,
                                 used)

    # -- calls ----------------------------------------------------------------------------------

    def call_for(self, node, state, frame, ctx, **extra) -> Call:
        """The `Call` a transfer function receives for an operator or display at `node`."""
        return Call(node, [], {}, state, ctx, self, frame, **extra)

    def call(self, node: ast.Call, state: State, frame: Frame, ctx: Context, used: bool = True):
        func = node.func
        method = None
        receiver = None
        if isinstance(func, ast.Attribute):
            receiver = self.expr(func.value, state, frame, ctx)
            method = func.attr
            callee = self.member(receiver, method, state, func, frame, ctx)
        else:
            callee = self.expr(func, state, frame, ctx)
        args, kwargs, starred, spreads = [], {}, False, []
        for arg in node.args:
            value = self.expr(arg, state, frame, ctx)
            if isinstance(arg, ast.Starred):
                spread = py.unpack(state, value, None)
                if spread is None:
                    starred = True
                    spreads.append(value)
                else:
                    args.extend(spread)
                continue
            args.append(value)
        for kw in node.keywords:
            value = self.expr(kw.value, state, frame, ctx)
            if kw.arg is None:
                spread = containers.as_kwargs(state, value)
                if spread is None:
                    starred = True
                else:
                    kwargs.update(spread)
            else:
                kwargs[kw.arg] = value
        # `criterion(out, y)` of `partial(F.cross_entropy, reduction="none")`: the
        # event names the function and every argument it gets.
        callee, args, kwargs = _through_partials(callee, args, kwargs, state)
        qualname = callee.qualname if isinstance(callee, (TorchName, ExternalName)) else None
        call = Call(node, args, kwargs, state, ctx, self, frame,
                    receiver=receiver if method is not None else None, qualname=qualname,
                    method=method, starred=starred, spread=tuple(spreads))
        freed, clobbered = state.freed, state.clobbered
        result, followed = self.apply(callee, call)
        if not state.reachable:
            result = UNKNOWN
        result = state.fresh(result)
        if isinstance(result, TensorFacts) and result.origin is None:
            result = replace(result, origin=node)
        user_callee = callee.function if isinstance(callee, BoundMethod) else callee
        event = CallEvent(node, ctx, qualname, method, state.fresh(receiver) if receiver is not None else None,
                          tuple(state.fresh(a) for a in args),
                          {k: state.fresh(v) for k, v in kwargs.items()}, result, used,
                          freed, clobbered,
                          user_callee if isinstance(user_callee, (FunctionValue, ClassValue)) else None,
                          followed, call.extra, frame.since)
        self.emit(event)
        grad_modes.after_call(call, event)
        return result

    def apply(self, callee, call: Call):
        """(result, whether a body of the analysed code was walked)."""
        if isinstance(callee, Partial):
            # A partial handed to a library that calls it (`model.apply(partial(init, std=0.02))`).
            callee, call.args, call.kwargs = _through_partials(callee, call.args, call.kwargs, call.state)
            if isinstance(callee, (TorchName, ExternalName)):
                call.qualname = callee.qualname
        if isinstance(callee, TorchName):
            fn = semantics.find_function(callee.qualname)
            if fn is not None:
                return fn(call), False
            return tensors.unknown_torch_call(call), False
        if isinstance(callee, MethodOf):
            call.receiver = callee.receiver
            call.method = callee.name
            fn = semantics.find_method(callee.receiver, callee.name)
            if fn is not None:
                return fn(call), False
            py.havoc(call)
            return UNKNOWN, False
        if isinstance(callee, BoundMethod):
            receiver = callee.receiver
            if isinstance(receiver, ObjectRef) and receiver.kind == "module" \
                    and getattr(callee.function.node, "name", None) == "forward" \
                    and (not isinstance(receiver.cls, ClassValue) or receiver.cls.lookup("forward") == callee.function):
                # `model.forward(x)`: a forward pass like `model(x)`, without the hooks.
                # (`super().forward(x)` runs the base class's forward, this one.)
                return self.call_module(receiver, call)
            value = self.invoke_user(callee.function, [receiver, *call.args], call)
            if isinstance(receiver, ObjectRef) and receiver.kind == "module" \
                    and not getattr(callee.function.node, "name", "__").startswith("__"):
                self._note_module_method(receiver, call, value)
            return value, True
        if isinstance(callee, FunctionValue):
            return self.invoke_user(callee, list(call.args), call), True
        if isinstance(callee, ClassValue):
            return objects.instantiate(self, callee, call), True
        if isinstance(callee, ObjectRef):
            return objects.call_object(self, callee, call)
        if isinstance(callee, BuiltinName):
            fn = semantics.BUILTINS.get(callee.name)
            if fn is not None:
                return fn(call), False
            py.havoc(call)
            return UNKNOWN, False
        if isinstance(callee, ExternalName):
            fn = semantics.find_function(callee.qualname)
            if fn is not None:
                return fn(call), False
        if isinstance(callee, objects.SuperMethod):
            return objects.call_super(self, callee, call)
        if isinstance(callee, ModuleChoice):
            return self.call_choice(callee, call)
        if isinstance(callee, NamedTupleType):
            return external.make_named_tuple(call, callee), False
        py.havoc(call)
        return UNKNOWN, False

    def call_choice(self, choice: ModuleChoice, call: Call):
        """`layers[i](x)` with `i` unknown: each layer runs on a path of its own (with
        identities of its own), and the paths join as after an `if`."""
        outcomes, followed = [], False
        for index, layer in enumerate(choice.options):
            state = call.state.copy()
            inner = Call(call.node, list(call.args), dict(call.kwargs), state,
                         call.ctx.inside(Choice(call.node, index)), self, call.frame,
                         starred=call.starred, salt=call.salt + (("choice", index),))
            value, walked = objects.call_object(self, layer, inner)
            followed = followed or walked
            outcomes.append((value, state))
        joined = join_states([s for _, s in outcomes])
        value = UNKNOWN
        if joined.reachable:
            value = join_all([joined.fresh(v) for v, s in outcomes if s.reachable])
        call.state.become(joined)
        return value, followed

    def invoke_user(self, function: FunctionValue, args: list, call: Call):
        value, _ = self.invoke(function, args, call.kwargs, call.state, call.frame, call.ctx,
                               call.node, starred=call.starred, salt=call.salt)
        return value

    def invoke(self, function: FunctionValue, args: list, kwargs: dict, state: State,
               caller: Frame, ctx: Context, node, starred: bool = False, alone: bool = False,
               salt: tuple = ()):
        """Run `function`'s body with these arguments; (return value, followed)."""
        depth = caller.depth + 1
        in_project = self._project_call_start is not None
        enters_project = not in_project and getattr(function.source, "module_names", None) is not None
        now = self.steps + state.work[0]
        # The project budget binds inside a call into another module as well: one
        # call (an `Accelerator()` whose `__init__` reaches half the library) would
        # otherwise spend the whole run's budget before the check at its entry.
        project_spent = self.project_steps + (now - self._project_call_start if in_project else 0)
        if depth > MAX_DEPTH or (function in self._active and not self._reentered_by_a_constructor(function)) \
                or now > self.budget or function.node is None \
                or ((enters_project or in_project) and project_spent > self.project_budget):
            py.havoc(Call(node, args, kwargs, state, ctx, self, caller))
            return UNKNOWN, False
        if alone:
            return self._invoke(function, args, kwargs, state, caller, ctx, node, starred, alone, salt, depth)
        # What the call changes is undone if the budget runs out inside it.
        entry, events, followed = state.copy(), len(self.trace.events), function.node in self.followed_nodes
        if enters_project:
            self._project_call_start = now
        self._followed_depth += 1
        try:
            return self._invoke(function, args, kwargs, state, caller, ctx, node, starred, alone, salt, depth)
        except _OverBudget:
            state.become(entry)
            self.trace.truncate(events)
            if not followed:
                # Not walked to its end: its own run, if it gets one, checks it.
                self.followed_nodes.discard(function.node)
                self.followed_functions.discard(function)
            py.havoc(Call(node, args, kwargs, state, ctx, self, caller))
            return UNKNOWN, False
        finally:
            self._followed_depth -= 1
            if enters_project:
                self._project_call_start = None
                self.project_steps += self.steps + state.work[0] - now

    def _reentered_by_a_constructor(self, function) -> bool:
        """Whether `function`, already running, may run once more: a registry's
        `build(cfg)` makes a model whose `__init__` builds its parts with `build`
        again. Recursion of any other kind is not followed (unknown below it)."""
        if self._active.count(function) > 1:
            return False
        since = self._active[self._active.index(function) + 1:]      # what it called, down to here
        return any(getattr(f.node, "name", None) == "__init__" for f in since)

    def _invoke(self, function, args, kwargs, state, caller, ctx, node, starred, alone, salt, depth):
        source = function.source
        self.followed_sources.add(source)
        if not alone:
            self.followed_functions.add(function)
            self.followed_nodes.add(function.node)
        globals_ = caller.globals if caller.globals is not None else state.names
        if function.source is not caller.source and getattr(source, "module_names", None) is not None:
            globals_ = source.module_names
        frame = Frame(function, source, globals_, None,
                      # (The call site's identity holds the caller's prefix already: nesting
                      # it again would double the identity's size, and its hashing, per level.)
                      prefix=self.new_id(caller, node, ("call",) + salt) if node is not None
                      else ("alone", function.qualname, source.key),
                      depth=depth, module=caller.module, entry_passes=len(ctx.passes))
        site = CallSite(node, caller.source, function, ctx.stmt, state.no_grad) if node is not None else None
        no_grad = function.no_grad if function.no_grad is not None else state.no_grad
        if alone and function.no_grad is None:
            no_grad = None
        inner = replace(ctx, function=function, no_grad=no_grad,
                        calls=ctx.calls + ((site,) if site else ()),
                        blocks=ctx.blocks + ((site,) if site else ()))
        saved_names, saved_mode = state.names, state.no_grad
        made_at = Call(node, [], {}, state, inner, self, frame, salt=("kwargs",)) if node is not None else None
        state.names = self.bind_arguments(function, args, kwargs, starred, made_at)
        state.no_grad = no_grad
        self._active.append(function)
        try:
            if isinstance(function.node, ast.Lambda):
                value = self.expr(function.node.body, state, frame, replace(inner, stmt=function.node,
                                                                            source=source))
                frame.returns.append((value, state.copy()))
                state.reachable = False
            else:
                self.block(function.node.body, state, frame, replace(inner, source=source))
        finally:
            self._active.pop()
        outcomes = list(frame.returns)
        generator = bool(frame.yields) or _is_generator(function)
        if state.reachable or generator:
            # A generator's body runs as it is iterated: calling one returns at once,
            # even when its body never ends (`while True: yield batch`).
            outcomes.append((NONE, state.copy()))
            outcomes[-1][1].reachable = True
        if outcomes:
            joined = join_states([s for _, s in outcomes])
            value = join_all([joined.fresh(v) for v, _ in outcomes])
        else:
            # It always raises: nothing after the call runs.
            joined = state.copy()
            joined.reachable = False
            value = UNKNOWN
        state.become(joined)
        state.names = saved_names
        state.no_grad = saved_mode
        if generator:
            value = containers.generator_of(self.call_for(node, state, caller, ctx), function,
                                            join_all(frame.yields) if frame.yields else None,
                                            first=frame.first_yield)
        return value, True

    def bind_arguments(self, function: FunctionValue, args: list, kwargs: dict, starred: bool,
                       made_at: Call | None = None) -> dict:
        """The names a call binds in the callee. `made_at`: the call, which makes the
        dict a `**kwargs` parameter holds (a run on its own has none: unknown)."""
        node = function.node
        params = _parameters(node)
        positional = params["positional"]
        names = {}
        defaults = dict(zip(positional[len(positional) - len(function.defaults):], function.defaults))
        defaults.update(dict(function.kw_defaults))
        extra = list(args[len(positional):])
        for index, name in enumerate(positional):
            if index < len(args):
                names[name] = args[index]
            elif name in kwargs:
                names[name] = kwargs[name]
            elif starred:
                names[name] = UNKNOWN
            else:
                names[name] = defaults.get(name, UNKNOWN)
        for name in params["kwonly"]:
            names[name] = kwargs.get(name, UNKNOWN if starred else defaults.get(name, UNKNOWN))
        if params["vararg"]:
            names[params["vararg"]] = TupleValue(tuple(extra)) if not starred else UNKNOWN
        if params["kwarg"]:
            rest = {k: v for k, v in kwargs.items() if k not in names}
            # `def make(**kwargs): return Block(**kwargs)`: the keywords it was given,
            # known entries the body can pass on.
            names[params["kwarg"]] = containers.new_dict(made_at, rest, True) \
                if made_at is not None and not starred else UNKNOWN
        for name, value in names.items():
            self.seen_param(node, name, value)
        return names

    def seen_param(self, node, name, value) -> None:
        args = node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.arg == name:
                self.note_seen(arg, value)
                return

    # -- events ---------------------------------------------------------------------------------

    def emit(self, event) -> None:
        self.trace.events.append(event)


# -- helpers ---------------------------------------------------------------------------------

def _ignore_seen(node, value) -> None:
    return None


_STATEMENTS = {
    ast.Expr: Walker.s_expr,
    ast.Assign: Walker.s_assign,
    ast.AnnAssign: Walker.s_annassign,
    ast.AugAssign: Walker.s_augassign,
    ast.Return: Walker.s_return,
    ast.Raise: Walker.s_raise,
    ast.Break: Walker.s_break,
    ast.Continue: Walker.s_continue,
    ast.Assert: Walker.s_assert,
    ast.Delete: Walker.s_delete,
    ast.Global: Walker.s_global,
    ast.Nonlocal: Walker.s_global,
    ast.Import: Walker.s_import,
    ast.ImportFrom: Walker.s_importfrom,
    ast.If: Walker.s_if,
    ast.With: Walker.s_with,
    ast.AsyncWith: Walker.s_with,
    ast.Try: Walker.s_try,
    ast.For: Walker.s_for,
    ast.AsyncFor: Walker.s_for,
    ast.While: Walker.s_while,
    ast.FunctionDef: Walker.s_functiondef,
    ast.AsyncFunctionDef: Walker.s_functiondef,
    ast.ClassDef: Walker.s_classdef,
}
if hasattr(ast, "TryStar"):
    _STATEMENTS[ast.TryStar] = Walker.s_try
if hasattr(ast, "Match"):
    _STATEMENTS[ast.Match] = Walker.s_match


def _widen_counters(state: State, entry: State) -> None:
    """The second pass of a loop that runs an unknown number of times stands for
    every later iteration: a number the first pass changed (`steps += 1`) may hold
    any value there, or `if steps % print_every == 0:` would never be taken."""
    for name, value in state.names.items():
        if isinstance(value, NumberValue) and value.value is not None:
            before = entry.names.get(name)
            if isinstance(before, NumberValue) and before.value != value.value:
                state.names[name] = NumberValue(value.kind, None)
    # Likewise an object's counter (`self.t_step += 1`) and the length of a list the
    # first pass added to (a replay buffer: `if len(self.memory) >= batch:` is taken
    # on some later iteration).
    keys = state.heap.changed_keys(entry.heap)
    for oid in list(state.heap.keys() if keys is None else keys):
        attrs, before = state.heap.get(oid), entry.heap.get(oid)
        if attrs is None or before is None or attrs is before:
            continue
        widened = {}
        for key, value in attrs.items():
            old = before.get(key)
            if isinstance(value, NumberValue) and value.value is not None and isinstance(old, NumberValue) \
                    and old.value != value.value:
                widened[key] = NumberValue(value.kind, None)
        items, earlier = attrs.get("items"), before.get("items")
        if isinstance(items, tuple) and (not isinstance(earlier, tuple) or len(items) != len(earlier)):
            widened["items"] = None
        if widened:
            state.heap[oid] = {**attrs, **widened}


def _made_by_iteration(value, loop):
    """An element a loop takes out of a tensor is made in that loop."""
    if isinstance(value, TensorFacts) and value.element_of is not None:
        return replace(value, made_in_loop=loop)
    if isinstance(value, TupleValue):
        return TupleValue(tuple(_made_by_iteration(v, loop) for v in value.items))
    return value



def _none_test(test):
    """(name, whether the test is true when it is None) of `x is None`, `x is not
    None`, `x == None`, `x != None`; else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(left, ast.Constant) and left.value is None:
        left, right = right, left
    if not (isinstance(left, ast.Name) and isinstance(right, ast.Constant) and right.value is None):
        return None
    op = test.ops[0]
    if isinstance(op, (ast.Is, ast.Eq)):
        return left.id, True
    if isinstance(op, (ast.IsNot, ast.NotEq)):
        return left.id, False
    return None


def _narrow(state: State, name: str, is_none: bool) -> None:
    """On a path where `name` is known to be None or not: a value that was None on
    some paths only (`selected = select_hard(...)`; `if selected is None: continue`)
    is what it is on the others."""
    value = state.names.get(name)
    if isinstance(value, MaybeNone):
        state.names[name] = NONE if is_none else state.fresh(value.value)


def _parameters(node) -> dict:
    args = node.args
    return {
        "positional": [a.arg for a in (*args.posonlyargs, *args.args)],
        "kwonly": [a.arg for a in args.kwonlyargs],
        "vararg": args.vararg.arg if args.vararg else None,
        "kwarg": args.kwarg.arg if args.kwarg else None,
    }


def _constant(value):
    if value is None:
        return NONE
    if isinstance(value, bool):
        return NumberValue("bool", value)
    if isinstance(value, int):
        return NumberValue("int", value)
    if isinstance(value, float):
        return NumberValue("float", value)
    if isinstance(value, complex):
        return NumberValue("complex", value)
    if isinstance(value, str):
        return StrValue(value)
    return UNKNOWN




# Slots of a total summed element-wise that are looked at.
_MAX_SLOTS = 8


def _zip_addition(assign: ast.Assign):
    """`x = [a + b for a, b in zip(x, values)]`: the `values` node, else None."""
    value = assign.value
    if len(assign.targets) != 1 or not isinstance(value, ast.ListComp) or len(value.generators) != 1:
        return None
    gen = value.generators[0]
    iterable, elt = gen.iter, value.elt
    if gen.ifs or not isinstance(gen.target, ast.Tuple) or len(gen.target.elts) != 2 \
            or not all(isinstance(t, ast.Name) for t in gen.target.elts) \
            or not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)
                    and iterable.func.id == "zip" and len(iterable.args) == 2 and not iterable.keywords) \
            or not (isinstance(elt, ast.BinOp) and isinstance(elt.op, ast.Add)
                    and isinstance(elt.left, ast.Name) and isinstance(elt.right, ast.Name)):
        return None
    first, second = (t.id for t in gen.target.elts)
    if (elt.left.id, elt.right.id) != (first, second) or not _same_place(assign.targets[0], iterable.args[0]) \
            or not _is_place(iterable.args[1]):
        return None
    return iterable.args[1]


def _is_place(node) -> bool:
    """A name, or attributes and constant subscripts of one: reading it again (as the
    slot-by-slot total does) has no effect."""
    return _same_place(node, node)


def _note_module(ref, call: Call) -> None:
    """What rules need to know of a forward pass of the module `ref`: the module, its
    mode, whether it has a trainable parameter, and its parameters."""
    from autograd_lsp.analysis.semantics import nn
    params, _ = nn.parameters_of(call.state, ref)
    call.extra["module"] = ref
    call.extra["training"] = truth(call.state.attr(ref, "training"))
    call.extra["trainable"] = any(p.requires_grad is True for p in params)
    call.extra["params"] = frozenset(p.tid for p in params if isinstance(p, TensorFacts))


def _self_addition(assign: ast.Assign):
    """`x = x + y`, where x is a name, an attribute of one (`self.total`) or a slot with
    a constant key (`stats["loss"]`); or a moving average of y, `x = beta * x + y`
    (`x * beta`, and the total on the right, alike), possibly started on the first
    pass (`... if step else loss`): the new total holds the old one. (the addition,
    the side the total is on, the product that decays it or None), or None."""
    value = assign.value
    if isinstance(value, ast.IfExp) and isinstance(value.body, ast.BinOp):
        value = value.body
    if len(assign.targets) != 1 or not isinstance(value, ast.BinOp) or not isinstance(value.op, ast.Add):
        return None
    target = assign.targets[0]
    for side, part in (("left", value.left), ("right", value.right)):
        decay = None
        if isinstance(part, ast.BinOp) and isinstance(part.op, ast.Mult):
            decay = part
            part = part.right if _same_place(target, part.right) else part.left
        if _same_place(target, part):
            return value, side, decay
    return None


def _same_place(a, b) -> bool:
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):
        return a.attr == b.attr and _same_place(a.value, b.value)
    if isinstance(a, ast.Subscript) and isinstance(b, ast.Subscript):
        return isinstance(a.slice, ast.Constant) and isinstance(b.slice, ast.Constant) \
            and a.slice.value == b.slice.value and type(a.slice.value) is type(b.slice.value) \
            and _same_place(a.value, b.value)
    return False


def _is_generator(function) -> bool:
    """Whether a function's body yields (found once per definition)."""
    node = function.node
    if isinstance(node, ast.Lambda):
        return False
    cache = function.source._generators if function.source is not None else {}
    found = cache.get(id(node))
    if found is None:
        # Most functions never say `yield`: their text answers without a walk.
        segment = getattr(function.source, "segment", None)
        text = segment(node) if segment is not None else None
        found = cache[id(node)] = False if text is not None and "yield" not in text else _yields(node)
    return found


def _first_yield(frame: Frame):
    """The `yield` whose first value is the generator's first item: its only one,
    reached from the body through loops and `with`s only (no branch may skip it),
    so that the first pass of those loops yields first (d2l's `data_iter`, whose
    first batch has the full batch size)."""
    function = frame.function
    if function is None or isinstance(function.node, ast.Lambda) or frame.source is None:
        return None
    cache = frame.source._generators
    key = ("first", id(function.node))
    if key not in cache:
        cache[key] = _unconditional_yield(function.node)
    return cache[key]


def _unconditional_yield(function_node):
    # (Anything that may skip the yield on the first pass, or end the body before it,
    # or a nested definition whose own yields would be counted here: no first item.)
    found = [n for n in nodes(function_node) if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await,
                                                              ast.Continue, ast.Break, ast.Return))
             or (n is not function_node and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                           ast.Lambda, ast.ClassDef)))]
    if len(found) != 1 or not isinstance(found[0], ast.Yield):
        return None
    body = function_node.body
    while True:
        statement = next((s for s in body if found[0] in nodes(s)), None)
        if isinstance(statement, ast.Expr) and statement.value is found[0]:
            return found[0]
        if isinstance(statement, (ast.For, ast.While, ast.With)) and not getattr(statement, "orelse", None):
            if isinstance(statement, (ast.For, ast.While)) and any(n is found[0] for n in nodes(
                    statement.iter if isinstance(statement, ast.For) else statement.test)):
                return None
            body = statement.body
            continue
        return None


def _yields(node) -> bool:
    stack = list(node.body)
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return False


def _names_bound_by_pattern(pattern) -> list:
    names = []
    for node in ast.walk(pattern):
        for attr in ("name", "rest"):
            value = getattr(node, attr, None)
            if isinstance(value, str):
                names.append(value)
    return names


# Tests whose answer is about what a value is, not about how far a loop has gone.
_TYPE_TESTS = frozenset({"isinstance", "issubclass", "hasattr", "callable"})


def _invariant_in_own_loops(test, ctx: Context) -> bool:
    """Whether a test reads only names (and constants) that no loop of its own function
    around it binds: `if phase == "train":` in the batch loop of `run_epoch(phase, ...)`
    is decided once per call. Attributes and calls may change from pass to pass."""
    calls = [i for i, b in enumerate(ctx.blocks) if isinstance(b, CallSite)]
    own = [b for b in ctx.blocks[calls[-1] + 1 if calls else 0:] if isinstance(b, Loop)
           and not b.is_comprehension]
    if not own:
        return False
    names = set()
    for n in ast.walk(test):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif not isinstance(n, (ast.Compare, ast.BoolOp, ast.UnaryOp, ast.Constant, ast.Load, ast.cmpop,
                                ast.boolop, ast.unaryop)):
            return False
    # (Remembered per loop by the chunk holding it: a loop's `if`s ask on every pass.)
    return not any(not names.isdisjoint(loop.source.bound_names(loop.node)) for loop in own)


def _same_every_time(test) -> bool:
    """Whether a test known on one pass of a loop is known the same on every pass.
    A loop over a list of known length runs pass by pass with its counter known
    (`if (i + 1) % accum == 0` is true on every other pass), so only tests of a
    value's type (`isinstance(updater, torch.optim.Optimizer)`) and constants count."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _same_every_time(test.operand)
    if isinstance(test, ast.BoolOp):
        return all(_same_every_time(v) for v in test.values)
    if isinstance(test, ast.Constant):
        return True
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in _TYPE_TESTS


def _reach_module_objects(state: State, module: ModuleNamespace) -> None:
    """What an imported module's code made is reachable through its names."""
    if module.state is None:
        return
    # Once is enough: a model zoo's functions import from the same modules again and
    # again, and each copy walked thousands of entries. (The mark joins like any
    # object made on one path.)
    mark = ("module objects", id(module.state))
    if mark in state.heap:
        return
    state.heap[mark] = {}
    state.heap.add_missing(module.state.heap)
    made = module.state.made
    if made is not state.made:
        state.made.update({k: made[k] for k in made.keys() - state.made.keys()})
    state.tensors.add_missing(module.state.tensors)
