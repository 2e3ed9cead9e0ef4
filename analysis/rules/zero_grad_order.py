"""AG202 zero-grad-order: `zero_grad()` between `backward()` and `step()`, or
`step()` right after `zero_grad()` and before the iteration's backward; by hand,
`w.grad.zero_()` between the backward and the update that reads `w.grad`."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import sole_statement, source_of
from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.call_sites import call_toward, said_at_call
from autograd_lsp.analysis.trace import AttrReadEvent, CallEvent, Decided, Invariant, is_backward


# A model, its weights before training and its optimizer (`before` shows whether it moved).
_PRELUDE = (
    "import torch\n"
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "model = nn.Linear(3, 1)\n"
    "before = model.weight.detach().clone()\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
)


# Gradient accumulation: the branch that steps every `accum` batches clears the
# gradients either just before the step (they are lost) or just after it.
_ACCUMULATION = _PRELUDE + (
    "accum = 2\n"
    "for i in range(6):\n"
    "    loss = model(torch.randn(4, 3)).pow(2).mean() / accum\n"
    "    loss.backward()\n"
    "    if (i + 1) % accum == 0:\n"
    "{clear_and_step}"
)


# Clearing and stepping each in a branch of its own, over a known list of batches.
_TWO_BRANCHES = _PRELUDE + (
    "batches = [torch.randn(4, 3) for _ in range(4)]\n"
    "accum = 1\n"
    "for i, x in enumerate(batches):\n"
    "    if i % accum == 0:\n"
    "        optimizer.zero_grad()\n"
    "    loss = model(x).pow(2).mean()\n"
    "{rest}"
)


# A trainer that runs its callbacks between the backward and the step.
_CALLBACKS = (
    "import torch\n"
    "from torch import nn\n"
    "class GradNormLogger:\n"
    "    def __init__(self):\n"
    "        self.norms = []\n"
    "    def on_after_backward(self, trainer):\n"
    "        self.norms.append(trainer.model.weight.grad.norm().item())\n"
    "{after_logging}"
    "class Trainer:\n"
    "    def __init__(self, model, callbacks):\n"
    "        self.model, self.callbacks = model, list(callbacks)\n"
    "        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    def train_step(self, x, y):\n"
    "        self.optimizer.zero_grad()\n"
    "        loss = nn.functional.mse_loss(self.model(x), y)\n"
    "        loss.backward()\n"
    "        for callback in self.callbacks:\n"
    "            callback.on_after_backward(self)\n"
    "        self.optimizer.step()\n"
    "model = nn.Linear(3, 1)\n"
    "start = model.weight.detach().clone()\n"
    "trainer = Trainer(model, [GradNormLogger()])\n"
    "for step in range(3):\n"
    "    trainer.train_step(torch.randn(4, 3), torch.randn(4, 1))\n"
)


# Micro-batches of a batch, a step every `accum` of them (`{clear}`: where the
# gradients are cleared; `{after_step}`: what follows the step).
_CLEARED_EACH_TIME = (
    "import torch\n"
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "model = nn.Linear(4, 2)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "accum = 4\n"
    "same = []\n"
    "for step, x in enumerate(torch.randn(8, 3, 4)):\n"
    "{clear}"
    "    (model(x).pow(2).mean() / accum).backward()\n"
    "    if (step + 1) % accum == 0:\n"
    "        alone = torch.autograd.grad(model(x).pow(2).mean() / accum, model.weight)[0]\n"
    "        same.append(torch.allclose(model.weight.grad, alone))\n"
    "        opt.step()\n"
    "{after_step}"
)


class ZeroGradOrder(Rule):
    code = "AG202"
    name = "zero-grad-order"
    severity = "warning"
    summary = {
        "en": "zero_grad() between backward() and step(): the step sees no gradients",
        "zh": "zero_grad() 位于 backward() 与 step() 之间：step 看不到梯度",
    }
    explanation = {
        "en": (
            "`optimizer.step()` updates the parameters from their `.grad`. Calling "
            "`optimizer.zero_grad()` after `loss.backward()` and before `step()` throws the fresh "
            "gradients away (since torch 2.0 it sets them to None, and the step skips those "
            "parameters): the model never learns, silently. Likewise a `step()` placed after "
            "`zero_grad()` but before the iteration's `backward()` steps on cleared gradients. "
            "The order is: `zero_grad()`, forward, `backward()`, `step()` (or `zero_grad()` last)."
        ),
        "zh": (
            "`optimizer.step()` 依据参数的 `.grad` 更新参数。在 `loss.backward()` 之后、`step()` 之前调用 "
            "`optimizer.zero_grad()` 会丢掉刚算出的梯度（torch 2.0 起设为 None，step 会跳过这些参数）："
            "模型悄无声息地学不到东西。同样，放在 `zero_grad()` 之后、本次迭代 `backward()` 之前的 `step()` "
            "用的是已清空的梯度。正确顺序是：`zero_grad()`、前向、`backward()`、`step()`（或把 `zero_grad()` 放最后）。"
        ),
    }
    messages = {
        "en": {"between": "`{zero}` runs after backward() and before `{step}`: the step sees "
                          "cleared gradients and the parameters do not move",
               "early": "`{step}` runs after `{zero}` and before this iteration's backward(): "
                        "it steps on cleared gradients",
               "fix_between": "Move {zero} before the backward",
               "fix_after_step": "Move {zero} after {step}",
               "fix_early": "Move {step} after the backward",
               "manual": "`{grad}` was zeroed after the backward that filled it: this update "
                         "subtracts zeros and `{name}` does not move",
               "accumulation": "`{zero}` runs on every iteration but `{step}` only on some: the "
                               "gradients of the iterations before a step are cleared before it "
                               "uses them, so each step sees only its own iteration's"},
        "zh": {"between": "`{zero}` 在 backward() 之后、`{step}` 之前执行：step 看到的是已清空的梯度，参数不会更新",
               "early": "`{step}` 在 `{zero}` 之后、本次迭代的 backward() 之前执行：它用的是已清空的梯度",
               "fix_between": "把 {zero} 移到 backward 之前",
               "fix_after_step": "把 {zero} 移到 {step} 之后",
               "fix_early": "把 {step} 移到 backward 之后",
               "manual": "`{grad}` 在填充它的 backward 之后已被清零：这次更新减去的是零，`{name}` 不会改变",
               "accumulation": "`{zero}` 每次迭代都执行，而 `{step}` 只在部分迭代执行：step 之前那些迭代的梯度"
                               "在被使用前就已清空，每次 step 只看到本次迭代的梯度"},
    }

    bad = (
        # A hand-written update, with the clearing pasted right after the backward.
        Example(
            "import torch\n"
            "torch.manual_seed(0)\n"
            "x = torch.randn(16, 2)\n"
            "y = x @ torch.tensor([[1.5], [-2.0]])\n"
            "w = torch.zeros(2, 1, requires_grad=True)\n"
            "start = w.detach().clone()\n"
            "for step in range(5):\n"
            "    loss = (x @ w - y).pow(2).mean()\n"
            "    loss.backward()\n"
            "    w.grad.data.zero_()\n"
            "    w.data -= 0.1 * w.grad.data\n",
            Silent("torch.equal(w.detach(), start)", "the update subtracts zeros"), line=11),
        # Accumulation whose clear sits before the condition instead of inside it.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "moved = []\n"
            "for i in range(4):\n"
            "    loss = model(torch.randn(8, 4)).pow(2).mean() / 2\n"
            "    loss.backward()\n"
            "    opt.zero_grad()\n"
            "    if (i + 1) % 2 == 0:\n"
            "        before = model.weight.detach().clone()\n"
            "        opt.step()\n"
            "        moved.append(not torch.equal(before, model.weight))\n",
            Silent("not any(moved)", "every step sees cleared gradients"), line=10),
        # The discriminator's backward (of `fake.detach()`) fills none of the
        # generator's gradients: the generator's step comes before its own backward.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "G, D = nn.Linear(2, 2), nn.Linear(2, 1)\n"
            "opt_G = torch.optim.SGD(G.parameters(), lr=0.1)\n"
            "opt_D = torch.optim.SGD(D.parameters(), lr=0.1)\n"
            "bce = nn.BCEWithLogitsLoss()\n"
            "moved = []\n"
            "for it in range(3):\n"
            "    fake = G(torch.randn(8, 2))\n"
            "    opt_D.zero_grad()\n"
            "    d_loss = bce(D(fake.detach()), torch.zeros(8, 1))\n"
            "    d_loss.backward()\n"
            "    opt_D.step()\n"
            "    opt_G.zero_grad()\n"
            "    before = G.weight.detach().clone()\n"
            "    opt_G.step()\n"
            "    moved.append(not torch.equal(before, G.weight))\n"
            "    g_loss = bce(D(fake), torch.ones(8, 1))\n"
            "    g_loss.backward()\n",
            Silent("not any(moved)", "the generator's step always sees cleared gradients"), line=17),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(2, 1)\n"
            "before = model.weight.detach().clone()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "x, y = torch.randn(10, 2), torch.randn(10, 1)\n"
            "for epoch in range(3):\n"
            "    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.zero_grad()\n"
            "    optimizer.step()\n",
            Silent("torch.equal(before, model.weight.detach())", "the weights never move"), line=11),
        Example(_TWO_BRANCHES.format(rest="    if (i + 1) % accum == 0:\n        optimizer.step()\n"
                                          "    loss.backward()\n"),
                Silent("torch.equal(before, model.weight.detach())", "the weights never move"), line=14),
        # Gradient accumulation undone: the clear at the top of every micro-batch throws
        # away what the micro-batches before a step backwarded.
        Example(_CLEARED_EACH_TIME.format(clear="    opt.zero_grad()\n", after_step=""),
                Silent("len(same) == 2 and all(same)", "each step uses only its own micro-batch's gradient"),
                line=9,
                fixed=_CLEARED_EACH_TIME.format(clear="", after_step="        opt.zero_grad()\n")),
        Example(_ACCUMULATION.format(clear_and_step="        optimizer.zero_grad()\n        optimizer.step()\n"),
                Silent("torch.equal(before, model.weight.detach())", "the weights never move"), line=12,
                fixed=_ACCUMULATION.format(clear_and_step="        optimizer.step()\n"
                                                          "        optimizer.zero_grad()\n")),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "net = nn.Linear(3, 1)\n"
            "start = net.weight.detach().clone()\n"
            "opt = torch.optim.Adam(net.parameters(), lr=0.01)\n"
            "def train_step(xb, yb):\n"
            "    opt.zero_grad()\n"
            "    opt.step()\n"
            "    loss = nn.functional.mse_loss(net(xb), yb)\n"
            "    loss.backward()\n"
            "train_step(torch.randn(4, 3), torch.randn(4, 1))\n",
            Silent("torch.equal(start, net.weight.detach())", "the step had no gradients"), line=8),
        # The step comes first in a trainer's step method and the clearing last: every
        # step sees what the previous iteration cleared.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "class Trainer:\n"
            "    def __init__(self, model):\n"
            "        self.model = model\n"
            "        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)\n"
            "    def train_step(self, x, y):\n"
            "        loss = nn.functional.mse_loss(self.model(x), y)\n"
            "        self.optimizer.step()\n"
            "        loss.backward()\n"
            "        self.optimizer.zero_grad()\n"
            "        return loss.item()\n"
            "model = nn.Linear(3, 1)\n"
            "start = model.weight.detach().clone()\n"
            "trainer = Trainer(model)\n"
            "for step in range(3):\n"
            "    trainer.train_step(torch.randn(4, 3), torch.randn(4, 1))\n",
            Silent("torch.equal(start, model.weight.detach())", "the weights never move"), line=9),
        # The clearing is a helper's (both networks of a GAN at once), called between
        # the discriminator's backward and its step: reported at that call.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "class GAN:\n"
            "    def __init__(self):\n"
            "        self.G, self.D = nn.Linear(2, 3), nn.Linear(3, 1)\n"
            "        self.g_opt = torch.optim.SGD(self.G.parameters(), lr=0.1)\n"
            "        self.d_opt = torch.optim.SGD(self.D.parameters(), lr=0.1)\n"
            "    def reset_grad(self):\n"
            "        self.g_opt.zero_grad()\n"
            "        self.d_opt.zero_grad()\n"
            "    def train_step(self, real):\n"
            "        fake = self.G(torch.randn(4, 2)).detach()\n"
            "        d_loss = self.D(real).mean() - self.D(fake).mean()\n"
            "        d_loss.backward()\n"
            "        self.reset_grad()\n"
            "        self.d_opt.step()\n"
            "gan = GAN()\n"
            "start = gan.D.weight.detach().clone()\n"
            "gan.train_step(torch.randn(4, 3))\n",
            Silent("torch.equal(start, gan.D.weight.detach())", "the discriminator never moves"), line=15),
        # A callback the trainer runs after each backward clears the gradients it logs,
        # before the step reads them: reported at the loop over the callbacks.
        Example(_CALLBACKS.format(after_logging="        trainer.model.zero_grad()\n"),
                Silent("torch.equal(start, model.weight.detach())", "the weights never move"), line=18),
    )
    good = (
        # Accumulation done right: cleared at the start of each window only.
        Example(_CLEARED_EACH_TIME.format(clear="    if step % accum == 0:\n        opt.zero_grad()\n",
                                          after_step="")),
        # A warm-up that backwards without stepping (to gather gradient statistics):
        # each step is meant to use its own iteration's gradient.
        Example(_CLEARED_EACH_TIME.replace("(step + 1) % accum == 0", "step >= 3").format(
            clear="    opt.zero_grad()\n", after_step="")),
        Example(_CALLBACKS.format(after_logging="")),
        # The same updates, each clearing after it has read the gradient.
        Example(
            "import torch\n"
            "x = torch.randn(16, 2)\n"
            "y = x @ torch.tensor([[1.5], [-2.0]])\n"
            "w = torch.zeros(2, 1, requires_grad=True)\n"
            "b = torch.zeros(1, requires_grad=True)\n"
            "for step in range(5):\n"
            "    loss = (x @ w + b - y).pow(2).mean()\n"
            "    loss.backward()\n"
            "    w.data -= 0.1 * w.grad.data\n"
            "    w.grad.data.zero_()\n"
            "    with torch.no_grad():\n"
            "        b -= 0.1 * b.grad\n"
            "    b.grad.zero_()\n"
            "    print(w.grad)\n"),
        Example(_TWO_BRANCHES.format(rest="    loss.backward()\n    if (i + 1) % accum == 0:\n"
                                          "        optimizer.step()\n")),
        Example(_ACCUMULATION.format(clear_and_step="        optimizer.step()\n        optimizer.zero_grad()\n")),
        # A delayed step: each iteration steps on the previous one's gradients, then
        # clears them before its own backward.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for step in range(3):\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n"
            "    loss = nn.functional.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))\n"
            "    loss.backward()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(2, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "x, y = torch.randn(10, 2), torch.randn(10, 1)\n"
            "for epoch in range(3):\n"
            "    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n"
            "for epoch in range(3):\n"
            "    optimizer.step()\n"
            "    optimizer.zero_grad()\n"
            "    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "G, D = nn.Linear(2, 4), nn.Linear(4, 1)\n"
            "opt_g = torch.optim.Adam(G.parameters())\n"
            "opt_d = torch.optim.Adam(D.parameters())\n"
            "for step in range(2):\n"
            "    fake = G(torch.randn(8, 2))\n"
            "    opt_d.zero_grad()\n"
            "    loss_d = D(fake.detach()).mean() - D(torch.randn(8, 4)).mean()\n"
            "    loss_d.backward()\n"
            "    opt_d.step()\n"
            "    opt_g.zero_grad()\n"
            "    loss_g = -D(fake).mean()\n"
            "    loss_g.backward()\n"
            "    opt_g.step()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(2, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for i in range(4):\n"
            "    loss = model(torch.randn(3, 2)).pow(2).mean()\n"
            "    loss.backward()\n"
            "    if i % 2 == 1:\n"
            "        optimizer.step()\n"
            "        optimizer.zero_grad()\n"),
    )

    def check(self, trace, locale):
        yield from self._manual_updates(trace, locale)
        if not any(e.method == "zero_grad" for e in trace.calls()):
            return                  # every finding here is about a clear
        yield from self._accumulation_cleared(trace, locale)
        # One straight-line sequence per loop body (or function body without loop) of
        # each run of a function: the first pass over it, with every pass of the loops
        # over known collections it holds (see _body_loop).
        # Outside loops, a function's sequence holds what the helpers it calls do
        # (`d_loss.backward(); self.reset_grad(); self.d_opt.step()`).
        groups: dict = {}
        for event in trace.calls():
            loop, index = _body_loop(event.ctx)
            if any(event.ctx.passes[:index + 1]):
                continue
            if loop is None:
                for depth in range(len(event.ctx.calls) + 1):
                    groups.setdefault((event.ctx.calls[:depth], None), []).append(event)
            else:
                groups.setdefault(((), loop), []).append(event)
        said = set()
        for (_, loop), events in groups.items():
            steady = [e for e in events if _unconditional(e, loop)]
            for report in self._check_sequence(steady, locale):
                if (report.node, report.message) not in said:
                    said.add((report.node, report.message))
                    yield report
            if loop is not None:
                yield from self._check_wrapped(steady, locale)
        # A `zero_grad()` in a branch: when the branch runs, what runs every time and
        # what else the branch holds run around it (`if (i + 1) % accum == 0:` holding
        # both the clear and the step). A loop unrolled over a known list knows which
        # branches each pass takes: what surely ran on a pass is a sequence of its own.
        runs: dict = {}
        for event in trace.calls():
            loop, index = _body_loop(event.ctx)
            runs.setdefault((event.ctx.calls if loop is None else (), loop, event.ctx.passes[:index + 1]),
                            []).append(event)
        for (_, loop, _), events in runs.items():
            if not any(e.method == "zero_grad" for e in events):
                continue
            for blocks in dict.fromkeys(e.ctx.blocks for e in events if e.method == "zero_grad"
                                        and not _unconditional(e, loop)):
                yield from self._check_sequence(
                    [e for e in events if e.ctx.blocks == blocks or (
                        _unconditional(e, loop) and _encloses(e.ctx.blocks, blocks))], locale, branch=True)
            ran = [e for e in events if e.ctx.ran_in_pass_of(loop)]
            if any(not _unconditional(e, loop) for e in ran):
                yield from self._check_sequence(ran, locale, branch=True)
            # A step under a condition after a clear that surely ran (`backward();
            # zero_grad(); if (i + 1) % k == 0: step()`): whenever it runs, it steps on
            # cleared gradients. (Backwards that may run between them are kept.)
            maybe = [e for e in events if e.ctx.ran_in_pass_of(loop) or (
                not _unconditional(e, loop) and (e.method == "step" or is_backward(e)))]
            if any(e.method == "step" and not e.ctx.ran_in_pass_of(loop) for e in maybe):
                yield from self._check_sequence(maybe, locale, branch=True)

    def _accumulation_cleared(self, trace, locale):
        """Gradient accumulation undone: a clear on every iteration before the backward,
        the step under a condition that was false on the first iteration (`if (step +
        1) % accum == 0`). The first iteration's gradients never reach a step: the next
        iteration clears them, and so on between any two steps."""
        calls = trace.calls()
        said = set()
        for zero in calls:
            loop = zero.ctx.loop
            if zero.method != "zero_grad" or zero.node.args or "cleared" not in zero.extra \
                    or loop is None or zero.ctx.loop_pass_of(loop) != 0 or not zero.ctx.always_runs_in(loop) \
                    or zero.node in said:
                continue
            depth = zero.ctx.loops.index(loop)
            # The same run of the loop: the same passes over the loops around it.
            run = [e for e in calls if loop in e.ctx.loops and e.ctx.loops.index(loop) == depth
                   and e.ctx.passes[:depth] == zero.ctx.passes[:depth]]
            steps = [e for e in run if e.method == "step" and _same_parameters(zero, e)]
            if not steps or any(e.ctx.loop_pass_of(loop) == 0 for e in steps):
                continue        # no step, or one that may run on the first iteration
            step = steps[0]
            if not _every_few_iterations(step, loop):
                continue        # a step that starts later (a warm-up) is not accumulation
            first = [e for e in run if e.ctx.loop_pass_of(loop) == 0]
            if not any(is_backward(e) and _reaches(e, step) for e in first[first.index(zero) + 1:]):
                continue
            # On the pass where the step runs, this clear ran before it.
            later = [e for e in run if e.ctx.loop_pass_of(loop) == step.ctx.loop_pass_of(loop)]
            if not any(e.node is zero.node for e in later[:later.index(step)]):
                continue
            said.add(zero.node)
            names = dict(zero=source_of(zero.node, zero), step=source_of(step.node, step))
            fix = _moved(self.text("fix_after_step", locale, **names), zero, "line_after", step)
            own = sole_statement(zero) is not None and step.ctx.stmt is not None
            yield Report(zero.node, self.text("accumulation", locale, **names), (fix,) if own else (), zero)

    def _manual_updates(self, trace, locale):
        """`w.data -= lr * w.grad.data` (or `w -= ...` under no_grad) reading a gradient
        zeroed since the backward that filled it: the update subtracts zeros."""
        for event in trace.of(AttrReadEvent):
            if event.attr != "grad" or not isinstance(event.receiver, TensorFacts) \
                    or event.receiver.grad != "zero":
                continue
            stmt = event.ctx.stmt
            if not isinstance(stmt, ast.AugAssign) or not isinstance(stmt.op, (ast.Sub, ast.Add)) \
                    or ast.dump(_without_data(stmt.target)) != ast.dump(_without_data(event.node.value)):
                continue
            yield Report(event.node, self.text("manual", locale, grad=source_of(event.node, event),
                                               name=source_of(_without_data(stmt.target), event)), (), event)

    def _check_sequence(self, events, locale, branch: bool = False):
        for i, zero in enumerate(events):
            if zero.method != "zero_grad" or zero.node.args or "cleared" not in zero.extra:
                continue
            for j in range(i + 1, len(events)):
                step = events[j]
                if is_backward(step):
                    break
                if step.method != "step" or not _same_parameters(zero, step):
                    continue
                before = [e for e in events[:i] if is_backward(e) and _reaches(e, step)]
                after = [e for e in events[j + 1:] if is_backward(e) and _reaches(e, step)]
                names = dict(zero=source_of(zero.node, zero), step=source_of(step.node, step))
                if before and branch:
                    # Clearing before the backward would undo the accumulation the branch
                    # waits for: clear after the step instead.
                    fix = _moved(self.text("fix_after_step", locale, **names), zero, "line_after", step)
                    own = sole_statement(zero) is not None and step.ctx.stmt is not None \
                        and zero.ctx.blocks == step.ctx.blocks
                    yield from _between(zero, step, before[-1], self.text("between", locale, **names),
                                        (fix,) if own else (), locale)
                elif before:
                    fix = _moved(self.text("fix_between", locale, **names), zero, "line_before", before[-1])
                    own = sole_statement(zero) is not None and before[-1].ctx.stmt is not None
                    yield from _between(zero, step, before[-1], self.text("between", locale, **names),
                                        (fix,) if own else (), locale)
                elif after:
                    fix = _moved(self.text("fix_early", locale, **names), step, "line_after", after[0])
                    # (Moved out of its branch, the step would leave it empty or change when it runs.)
                    own = sole_statement(step) is not None and after[0].ctx.stmt is not None \
                        and (not branch or step.ctx.blocks == after[0].ctx.blocks)
                    yield Report(step.node, self.text("early", locale, **names), (fix,) if own else (), step)
                break

    def _check_wrapped(self, events, locale):
        """A loop body that steps before its backward and clears after it: each step
        sees what the previous iteration's `zero_grad()` left (or, the first time, no
        gradient at all), so the parameters never move."""
        for j, step in enumerate(events):
            if is_backward(step):
                return            # a backward before the step: the usual order
            if step.method != "step":
                continue
            after = [k for k in range(j + 1, len(events)) if is_backward(events[k])]
            if not after:
                continue
            zero = next((e for e in events[after[-1] + 1:] if e.method == "zero_grad"
                         and not e.node.args and "cleared" in e.extra and _same_parameters(e, step)), None)
            if zero is None:
                continue
            backward = events[after[0]]
            names = dict(zero=source_of(zero.node, zero), step=source_of(step.node, step))
            fix = _moved(self.text("fix_early", locale, **names), step, "line_after", backward)
            own = sole_statement(step) is not None and backward.ctx.stmt is not None \
                and backward.ctx.calls == step.ctx.calls
            yield Report(step.node, self.text("early", locale, **names), (fix,) if own else (), step)
            return


def _between(zero: CallEvent, step: CallEvent, backward: CallEvent, message: str, fixes: tuple, locale: str):
    """The reports of a clear between a backward and its step. A clear in a helper
    the step's function calls is said at that call; one in a helper that steps too
    (`def update(opt): opt.zero_grad(); opt.step()`, called after the loop's
    backward) is said inside it and at its call beside the backward."""
    at_call = _at_callers_line(zero, step, message, locale)
    if at_call is not None:
        yield at_call
        return
    yield Report(zero.node, message, fixes, zero)
    beside = _at_callers_line(zero, backward, message, locale)
    if beside is not None:
        yield beside


def _at_callers_line(zero: CallEvent, step: CallEvent, message: str, locale: str) -> Report | None:
    """A clear made in a helper (`self.reset_grad()` between the backward and the
    step) reported at the call of that helper in the step's function, where the
    order is wrong; None when the clear is in the step's own function."""
    site = call_toward(zero, step)
    return said_at_call(site, message, locale) if site is not None else None


def _body_loop(ctx) -> tuple:
    """(loop, its index in `ctx.loops`) whose body's sequence an event belongs to: the
    innermost loop around it, unless that loop runs over a known collection inside
    another loop (`for cb in self.callbacks: cb.on_after_backward(self)` in a training
    step): each of its passes surely runs, in order, as part of the enclosing body.
    (None, -1) outside loops."""
    index = len(ctx.loops) - 1
    while index > 0 and ctx.loops[index].unrolled:
        index -= 1
    return (ctx.loops[index] if index >= 0 else None), index


def _every_few_iterations(step: CallEvent, loop) -> bool:
    """The step is under an `if` of `loop`'s body whose test takes a remainder
    (`if (step + 1) % accum == 0:`): it runs every few iterations."""
    blocks = step.ctx.blocks
    inner = blocks[blocks.index(loop) + 1:] if loop in blocks else ()
    tests = [b.test if isinstance(b, ast.If) else b.node.test for b in inner
             if isinstance(b, (ast.If, Decided, Invariant))]
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for test in tests for n in ast.walk(test))


def _unconditional(event: CallEvent, loop) -> bool:
    if loop is not None:
        return event.ctx.always_runs_in(loop)
    return not any(isinstance(b, (ast.If, Decided, Invariant, ast.Try, ast.For, ast.While))
                   for b in event.ctx.blocks)


def _moved(title: str, call: CallEvent, where: str, anchor: CallEvent) -> FixSpec:
    """The fix that moves the statement of `call` to a line before or after (`where`)
    the statement of `anchor`."""
    return FixSpec(title, (Edit("delete_line", call.ctx.stmt, "", call),
                           Edit(where, anchor.ctx.stmt, source_of(call.node, call), anchor)), safe=False)


def _encloses(outer: tuple, inner: tuple) -> bool:
    """Whether code in the blocks `outer` runs around (before or after) code in `inner`."""
    return inner[:len(outer)] == outer


def _reaches(backward: CallEvent, step: CallEvent) -> bool:
    """Whether a backward may fill the gradients `step` uses: not a GAN's discriminator
    loss, made from `fake.detach()`, before the generator's step."""
    from autograd_lsp.analysis.facts import TensorFacts
    leaves = backward.extra.get("leaves")
    target = backward.receiver
    if leaves is None or not isinstance(target, TensorFacts) or target.opaque or target.unseen_history:
        return True
    return bool(leaves & step.extra.get("params", frozenset()))


def _same_parameters(zero: CallEvent, step: CallEvent) -> bool:
    stepped = step.extra.get("params")
    cleared = zero.extra.get("cleared")
    if not stepped or not cleared or not step.extra.get("complete"):
        return False
    return stepped <= cleared


def _without_data(node):
    """`w.data` -> `w`: the tensor whose values an update changes."""
    while isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return node
