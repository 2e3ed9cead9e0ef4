"""AG302 loss-accumulation: summing losses that still hold their graph across iterations."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import NumberValue, TensorFacts, Unknown
from autograd_lsp.analysis.rule import Example, FixSpec, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import after_operand, operand_text, source_of
from autograd_lsp.analysis.trace import AccumulateEvent, StoreEvent, is_backward

# The model, loss and optimizer of the classic tutorial loop, for the examples.
_TUTORIAL_HEAD = (
    "import torch\n"
    "import torch.nn as nn\n"
    "net = nn.Linear(4, 2)\n"
    "criterion = nn.CrossEntropyLoss()\n"
    "optimizer = torch.optim.SGD(net.parameters(), lr=0.01)\n"
)


# A loss total kept by a callback object, from the outputs the loop hands it.
_CALLBACK_TOTAL = (
    "import torch\n"
    "from torch import nn\n"
    "class LossHistory:\n"
    "    def __init__(self):\n"
    "        self.total = 0.0\n"
    "    def on_batch_end(self, outputs):\n"
    "        self.total += outputs['loss']\n"
    "model = nn.Linear(3, 1)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "history = LossHistory()\n"
    "for step in range(4):\n"
    "    opt.zero_grad()\n"
    "    loss = model(torch.randn(8, 3)).pow(2).mean()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    history.on_batch_end({'loss': loss})\n"
)


# A meter whose sums start at 0 for every key (collections.defaultdict(float)).
_METER = (
    "from collections import defaultdict\n"
    "import torch\n"
    "from torch import nn\n"
    "class Meter:\n"
    "    def __init__(self):\n"
    "        self.sums = defaultdict(float)\n"
    "    def update(self, **values):\n"
    "        for name, value in values.items():\n"
    "            self.sums[name] += value\n"
    "net = nn.Linear(3, 1)\n"
    "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    "meter = Meter()\n"
    "for x in torch.randn(4, 2, 3):\n"
    "    loss = net(x).pow(2).mean()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    meter.update(loss={value})\n"
)


# d2l's Accumulator: a total summed slot by slot.
_ACCUMULATOR = (
    "import torch\n"
    "from torch import nn\n"
    "class Accumulator:\n"
    "    def __init__(self, n):\n"
    "        self.data = [0.0] * n\n"
    "    def add(self, *args):\n"
    "        self.data = [a + b for a, b in zip(self.data, args)]\n"
    "net = nn.Linear(4, 2)\n"
    "updater = torch.optim.SGD(net.parameters(), lr=0.1)\n"
    "metric = Accumulator(2)\n"
    "for X in torch.randn(3, 5, 4):\n"
    "    l = net(X).pow(2).sum(1)\n"
    "    updater.zero_grad()\n"
    "    l.mean().backward()\n"
    "    updater.step()\n"
    "    metric.add({value}, l.numel())\n"
)


# A trainer showing an exponential moving average of the loss.
_SMOOTHED = (
    "import torch\n"
    "from torch import nn\n"
    "class Trainer:\n"
    "    def __init__(self, model, beta=0.9):\n"
    "        self.model, self.beta, self.smooth = model, beta, None\n"
    "        self.opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "    def step(self, x, y):\n"
    "        loss = nn.functional.mse_loss(self.model(x), y)\n"
    "        self.opt.zero_grad()\n"
    "        loss.backward()\n"
    "        self.opt.step()\n"
    "        if self.smooth is None:\n"
    "            self.smooth = {loss}\n"
    "        else:\n"
    "            self.smooth = self.beta * self.smooth + (1 - self.beta) * {loss}\n"
    "trainer = Trainer(nn.Linear(3, 1))\n"
    "for i in range(4):\n"
    "    trainer.step(torch.randn(8, 3), torch.randn(8, 1))\n"
)


class LossAccumulation(Rule):
    code = "AG302"
    name = "loss-accumulation"
    severity = "info"
    summary = {
        "en": "total += loss keeps every iteration's graph alive; add loss.item()",
        "zh": "total += loss 会让每次迭代的计算图都保持存活；请累加 loss.item()",
    }
    explanation = {
        "en": (
            "A loss that was just backwarded is still a tensor with a `grad_fn`. Adding it to a "
            "running total (`total += loss`) makes the total a tensor whose history reaches every "
            "iteration's graph, so none of them can be freed: memory grows with every step, and "
            "printing the total later is slow. For logging, add the number: `total += "
            "loss.item()` (or `loss.detach()`)."
        ),
        "zh": (
            "刚做完 backward 的损失仍是带 `grad_fn` 的张量。把它加到累计值上（`total += loss`）会使累计值成为"
            "历史连着每次迭代计算图的张量，这些图都无法释放：显存随每一步增长，之后打印累计值也很慢。"
            "用于记录时请累加数值：`total += loss.item()`（或 `loss.detach()`）。"
        ),
    }
    messages = {
        "en": {"message": "`{total}` accumulates `{loss}`, a tensor with a graph: every iteration's "
                          "graph stays alive; add `{loss}.item()` or `{loss}.detach()` instead",
               "message_reset": "`{total}` accumulates `{loss}`, a tensor with a graph: the graph of "
                                "every iteration until the total is reset stays alive; add "
                                "`{loss}.item()` or `{loss}.detach()` instead",
               "store": "`{container}` keeps `{loss}`, a tensor with a graph, from every iteration: "
                        "every graph stays alive; keep `{loss}.item()` or `{loss}.detach()` instead",
               "store_holding": "`{container}` keeps `{loss}`, which holds a tensor with a graph, from "
                                "every iteration: every graph stays alive; keep its tensors' `.item()` "
                                "or `.detach()` instead",
               "fix": "Accumulate the number: {loss}.item()",
               "fix_detach": "Accumulate without the graph: {loss}.detach()"},
        "zh": {"message": "`{total}` 累加的 `{loss}` 是带计算图的张量：每次迭代的图都会保持存活；"
                          "请改为累加 `{loss}.item()` 或 `{loss}.detach()`",
               "message_reset": "`{total}` 累加的 `{loss}` 是带计算图的张量：直到累计值被重置之前，每次迭代的图"
                                "都会保持存活；请改为累加 `{loss}.item()` 或 `{loss}.detach()`",
               "store": "`{container}` 保存了每次迭代的 `{loss}`（带计算图的张量）：所有的图都会保持存活；"
                        "请改为保存 `{loss}.item()` 或 `{loss}.detach()`",
               "store_holding": "`{container}` 保存了每次迭代的 `{loss}`，其中含有带计算图的张量：所有的图都会"
                                "保持存活；请改为保存其中张量的 `.item()` 或 `.detach()`",
               "fix": "累加数值：{loss}.item()",
               "fix_detach": "累加时去掉计算图：{loss}.detach()"},
    }

    bad = (
        # A learning-rate finder's smoothed loss: the moving average is started from
        # the first loss and updated with each tensor loss, chaining every graph.
        Example(
            _TUTORIAL_HEAD +
            "history = []\n"
            "avg = 0.0\n"
            "for it in range(4):\n"
            "    optimizer.zero_grad()\n"
            "    loss = criterion(net(torch.randn(8, 4)), torch.randint(0, 2, (8,)))\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    avg = 0.05 * loss + 0.95 * avg if it else loss\n"
            "    history.append(avg.item())\n",
            Silent("avg.grad_fn is not None and avg.grad_fn.next_functions[1][0] is not None",
                   "the average holds every iteration's graph"), line=13),
        # Sequences of random lengths, each step's loss added to a total started at 0:
        # the helper returns that sum, still a graph, and the caller sums the sums.
        Example(
            "import random\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "random.seed(0)\n"
            "torch.manual_seed(0)\n"
            "rnn = nn.GRUCell(3, 3)\n"
            "opt = torch.optim.SGD(rnn.parameters(), lr=0.01)\n"
            "def train_sequence(seq):\n"
            "    opt.zero_grad()\n"
            "    h = torch.zeros(1, 3)\n"
            "    loss = 0\n"
            "    for t in range(seq.size(0) - 1):\n"
            "        h = rnn(seq[t:t + 1], h)\n"
            "        loss += (h - seq[t + 1:t + 2]).pow(2).mean()\n"
            "    loss.backward()\n"
            "    opt.step()\n"
            "    return loss / seq.size(0)\n"
            "total = 0\n"
            "for _ in range(4):\n"
            "    total += train_sequence(torch.randn(random.randint(3, 6), 3))\n",
            Silent("total.grad_fn is not None", "the total holds every sequence's graph"), line=20),
        # Summed in a callback from what the loop hands it: reported, and fixed, there.
        Example(_CALLBACK_TOTAL, Silent("history.total.grad_fn is not None",
                                        "the callback's total keeps every batch's graph"),
                line=7, fixed=_CALLBACK_TOTAL.replace("outputs['loss']\n", "outputs['loss'].detach()\n")),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "criterion = nn.MSELoss()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "total_loss = 0\n"
            "for i in range(5):\n"
            "    x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
            "    optimizer.zero_grad()\n"
            "    loss = criterion(model(x), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    total_loss += loss\n"
            "print('mean loss', total_loss / 5)\n",
            Silent("isinstance(total_loss, torch.Tensor) and total_loss.grad_fn is not None",
                   "total_loss holds the graphs of all five iterations"), line=13),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "running = 0.0\n"
            "for step in range(4):\n"
            "    loss = (w ** 2).sum()\n"
            "    loss.backward()\n"
            "    running = running + loss\n",
            Silent("running.grad_fn is not None", "the sum keeps each loss's graph"), line=7),
        # A per-batch loss weighted into per-name totals that live for the whole epoch.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "totals = {'a': 0.0, 'b': 0.0}\n"
            "for step in range(3):\n"
            "    parts = {'a': (w ** 2).sum(), 'b': w.abs().sum()}\n"
            "    sum(parts.values()).backward()\n"
            "    for name, part in parts.items():\n"
            "        totals[name] += part * 4\n",
            Silent("totals['a'].grad_fn is not None", "each total keeps every step's graph"), line=8,
            fixed="import torch\n"
                  "w = torch.randn(3, requires_grad=True)\n"
                  "totals = {'a': 0.0, 'b': 0.0}\n"
                  "for step in range(3):\n"
                  "    parts = {'a': (w ** 2).sum(), 'b': w.abs().sum()}\n"
                  "    sum(parts.values()).backward()\n"
                  "    for name, part in parts.items():\n"
                  "        totals[name] += (part * 4).detach()\n"),
        # The running loss of the classic tutorial loop, printed and reset every few
        # batches, summed as a tensor.
        Example(
            _TUTORIAL_HEAD +
            "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(7)]\n"
            "running_loss = 0.0\n"
            "for i, (inputs, labels) in enumerate(loader):\n"
            "    optimizer.zero_grad()\n"
            "    loss = criterion(net(inputs), labels)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    running_loss += loss\n"
            "    if i % 5 == 4:\n"
            "        print(i, running_loss / 5)\n"
            "        running_loss = 0.0\n",
            Silent("running_loss.grad_fn is not None", "the total keeps the graphs since the last reset"),
            line=13),
        # A dict slot summed by assignment: `stats["loss"] = stats["loss"] + loss`.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "stats = {'loss': 0.0}\n"
            "for step in range(3):\n"
            "    loss = (w * step).sum()\n"
            "    loss.backward()\n"
            "    stats['loss'] = stats['loss'] + loss\n",
            Silent("stats['loss'].grad_fn is not None", "the total keeps every step's graph"), line=7,
            fixed="import torch\n"
                  "w = torch.randn(3, requires_grad=True)\n"
                  "stats = {'loss': 0.0}\n"
                  "for step in range(3):\n"
                  "    loss = (w * step).sum()\n"
                  "    loss.backward()\n"
                  "    stats['loss'] = stats['loss'] + loss.detach()\n"),
        # d2l's Accumulator, fed the loss tensor instead of a number: each slot of the
        # total adds the value given, graph and all.
        Example(_ACCUMULATOR.format(value="l.sum()"),
                Silent("metric.data[0].grad_fn is not None", "the total keeps every batch's graph"),
                line=16),
        # The meter is handed the loss tensor: its sum keeps every step's graph.
        Example(_METER.format(value="loss"),
                Silent("meter.sums['loss'].grad_fn is not None", "the sum keeps every step's graph"),
                line=9),
        # A smoothed loss for the progress bar, kept on the trainer as a tensor.
        Example(_SMOOTHED.format(loss="loss"),
                Silent("trainer.smooth.grad_fn is not None", "the smoothed loss holds every step's graph"),
                line=15),
    )
    good = (
        Example(_SMOOTHED.format(loss="loss.item()")),
        # The same meter handed numbers.
        Example(_METER.format(value="loss.item()")),
        # The same Accumulator fed numbers.
        Example(_ACCUMULATOR.format(value="l.sum().item()")),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "criterion = nn.MSELoss()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "total_loss = 0.0\n"
            "for i in range(5):\n"
            "    x, y = torch.randn(4, 3), torch.randn(4, 1)\n"
            "    optimizer.zero_grad()\n"
            "    loss = criterion(model(x), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    total_loss += loss.item()\n"
            "print('mean loss', total_loss / 5)\n"),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "total = 0\n"
            "for k in range(3):\n"
            "    total += (w * k).sum()\n"
            "total.backward()\n"),
        # Losses kept for a backward of their mean every few batches: what they are
        # kept for.
        Example(
            _TUTORIAL_HEAD +
            "loader = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(6)]\n"
            "window_losses = []\n"
            "for i, (inputs, labels) in enumerate(loader):\n"
            "    window_losses.append(criterion(net(inputs), labels))\n"
            "    if i % 3 == 2:\n"
            "        optimizer.zero_grad()\n"
            "        torch.stack(window_losses).mean().backward()\n"
            "        optimizer.step()\n"
            "        window_losses = []\n"),
        # A sum backwarded every few steps, then started again: truncated backprop.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "loss = 0\n"
            "for t in range(6):\n"
            "    loss = loss + (w * t).sum()\n"
            "    if (t + 1) % 3 == 0:\n"
            "        loss.backward()\n"
            "        loss = 0\n"),
        # A slot with a constant key is overwritten in every step: it keeps the
        # newest loss only (one graph), not one per step.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "state = {}\n"
            "def train_step(x):\n"
            "    per_sample = (w * x) ** 2\n"
            "    per_sample.sum().backward()\n"
            "    state['last'] = per_sample\n"
            "for step in range(3):\n"
            "    train_step(torch.randn(3))\n"),
        # The batch's loss is summed over heads in an inner loop, starting from 0 in
        # every batch, and backwarded: no total outlives its batch.
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "def fit(batches):\n"
            "    for x in batches:\n"
            "        loss = 0\n"
            "        for head in range(2):\n"
            "            loss += (w * x * head).sum()\n"
            "        loss.backward()\n"
            "fit([torch.randn(3) for _ in range(3)])\n"),
        # `x = x + f(x)` in a forward: a residual, made afresh in every call.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "class Block(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.f = nn.Linear(3, 3)\n"
            "    def forward(self, x):\n"
            "        x = x + self.f(x)\n"
            "        return x\n"
            "block = Block()\n"
            "for step in range(3):\n"
            "    block(torch.randn(2, 3)).sum().backward()\n"),
    )

    def check(self, trace, locale):
        seen = set()
        for event in trace.of(AccumulateEvent):
            operand = event.operand
            if not isinstance(operand, TensorFacts) or operand.requires_grad is not True:
                continue
            # The loop whose iterations backward the value: a sum built to be backwarded
            # after the loop keeps its graphs on purpose.
            loop = _training_loop(trace, event, operand)
            if loop is None or (event.node, loop.node) in seen:
                continue
            # A later pass adds to the total an earlier pass made: the total outlives
            # the iteration, and with it every graph added in. A total started afresh
            # in the iteration (`total = 0` in the body, a helper's local) does not.
            before = event.before
            later_pass = event.ctx.loop_pass_of(loop) > 0
            # (A total whose graph a backward in the loop differentiates, every few
            # iterations before it is reset, is kept for that backward.)
            carried = isinstance(before, TensorFacts) and before.requires_grad is True \
                and later_pass and event.ctx.carried_into(loop, before) \
                and not _total_backwarded_in(trace, loop, before, event.ctx.loop_pass_of(loop))
            # A total reset on some iterations only (`if i % 100 == 99: running = 0.0`)
            # reaches a later pass as the earlier pass's graph on one path and a number
            # on another, which the analysis joins to unknown. It counts when the loss
            # summed is what was backwarded (or was computed from it); a sum backwarded
            # every few steps and then reset (truncated backprop) keeps its graphs for
            # that backward.
            reset_sometimes = isinstance(before, Unknown) and later_pass \
                and _graph_summed_earlier(trace, event, loop) \
                and _backwarded_in(trace, loop, operand, kept=True)
            if not (carried or reset_sometimes):
                continue
            message = "message" if carried else "message_reset"
            seen.add((event.node, loop.node))
            site = event.ctx.site_in(loop)
            operand_node = event.operand_node or _operand_node(event.node)
            if operand_node is None:
                continue
            # `a * b` takes the method call inside parentheses.
            loss = operand_text(operand_node, event)
            fixes = ()
            if site is not event.ctx.stmt and not _sums_a_parameter(operand_node, event):
                # The summed loss is computed in the callee (`outputs["loss"]` in a
                # callback): the fix goes where it is summed, not at the call.
                site = event.ctx.stmt
            if site is event.ctx.stmt:
                # Detaching keeps the total a tensor, as the code after the loop expects;
                # `.item()` makes it a float, which is what logging usually wants but may
                # break a later `total.item()`: offered, not applied by fix-all.
                fixes = (FixSpec(self.text("fix_detach", locale, loss=loss),
                                 after_operand(operand_node, ".detach()", event)),)
                if operand.is_scalar():
                    fixes += (FixSpec(self.text("fix", locale, loss=loss),
                                      after_operand(operand_node, ".item()", event), safe=False),)
                yield Report(event.node, self.text(message, locale, total=source_of(event.target_node, event),
                                                   loss=loss), fixes, event)
            else:
                at = _event_of(trace, site) or event
                if event.slot is not None and isinstance(site, ast.Call) and event.slot < len(site.args) \
                        and not any(isinstance(a, ast.Starred) for a in site.args) and at is not event:
                    # `metric.add(l.sum(), n)` into a total summed slot by slot: name the argument.
                    loss = operand_text(site.args[event.slot], at)
                yield Report(site, self.text(message, locale, total=source_of(event.target_node, event),
                                             loss=loss), (), at)
        for event in trace.of(StoreEvent):
            held = event.held
            if not isinstance(held, TensorFacts) or held.requires_grad is not True:
                continue
            loop = _training_loop(trace, event, held, kept=True)
            if loop is None or event.ctx.loop_pass_of(loop) != 0 \
                    or event.container_loop in event.ctx.loops[event.ctx.loops.index(loop):]:
                continue
            stmt = event.ctx.stmt
            if isinstance(stmt, ast.AugAssign) and stmt.target is event.node:
                continue          # `totals[k] += loss`: an accumulation, reported as one
            target = event.node.func.value if isinstance(event.node, ast.Call) \
                and isinstance(event.node.func, ast.Attribute) else getattr(event.node, "value", event.node)
            message = "store" if isinstance(event.value, TensorFacts) else "store_holding"
            yield Report(event.node, self.text(message, locale, container=source_of(target, event),
                                               loss=_loss_name(event)), (), event)


def _training_loop(trace, event, value, kept=False):
    """The innermost loop around the event whose iterations backward a graph `value`
    is part of. `kept`: `value` is kept whole (appended, stored, or summed into a
    total reset now and then), so only a backward of `value` or of what it was
    computed from counts; one of a sum made from the kept values
    (`torch.stack(window).mean().backward()`) is what they were kept for."""
    for loop in reversed(event.ctx.loops):
        if not loop.is_comprehension and _backwarded_in(trace, loop, value, kept):
            return loop
    return None


def _backwarded_in(trace, loop, value: TensorFacts, kept=False) -> bool:
    """`value` is (or is computed from) a tensor that a backward in the same
    iteration of `loop` differentiated."""
    for e in trace.inside(loop, first_pass=False):
        if not is_backward(e) or not isinstance(e.receiver, TensorFacts):
            continue
        loss = e.receiver
        # The value is (part of) a graph that was backwarded: keeping it keeps the graph.
        if loss.tid == value.tid:
            return True
        if kept and loss.saved_nodes and loss.saved_nodes <= value.saved_nodes \
                and loss.birth <= value.birth:
            return True       # the value was computed from the loss backwarded
        if not kept and loss.saved_nodes & value.saved_nodes:
            return True
    return False


def _total_backwarded_in(trace, loop, total: TensorFacts, since: int = 0) -> bool:
    """A backward in `loop`, on pass `since` or later, goes through the whole graph
    of `total`: the sum is what the loop differentiates (`loss = loss + step_loss`,
    backwarded every k steps and then reset). (An earlier pass's backward of the
    loss that then became the total, `self.avg = loss` as a moving average's first
    value, is not one.)"""
    if not total.saved_nodes:
        return False
    return any(is_backward(e) and isinstance(e.receiver, TensorFacts)
               and total.saved_nodes <= e.receiver.saved_nodes and e.receiver.birth >= total.birth
               and e.ctx.loop_pass_of(loop) >= since
               for e in trace.inside(loop, first_pass=False))


def _graph_summed_earlier(trace, event, loop) -> bool:
    """The same statement, in the same run of its function, added a tensor with a
    graph to a number or a tensor in an earlier pass over `loop`: its total was a
    graph tensor when that iteration ended, unless every path reset it."""
    pass_now = event.ctx.loop_pass_of(loop)
    for e in trace.of(AccumulateEvent):
        if e.node is event.node and e.ctx.calls == event.ctx.calls \
                and e.ctx.loop_pass_of(loop) < pass_now \
                and isinstance(e.operand, TensorFacts) and e.operand.requires_grad is True \
                and isinstance(e.before, (NumberValue, TensorFacts)):
            return True
    return False


def _sums_a_parameter(operand, event) -> bool:
    """Whether the summed expression is a parameter of the function it is in, or a
    product or quotient of one (`self.sum += val * n` in an average meter): the loss
    is the caller's, and so is the fix."""
    while isinstance(operand, ast.BinOp) and isinstance(operand.op, (ast.Mult, ast.Div)):
        operand = operand.left if isinstance(operand.left, ast.Name) else operand.right
    function = event.ctx.function
    node = getattr(function, "node", None)
    if not isinstance(operand, ast.Name) or node is None or not hasattr(node, "args"):
        return False
    args = node.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    return operand.id in names


def _operand_node(node):
    if isinstance(node, ast.AugAssign):
        return node.value
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
        return node.value.right
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.ListComp):
        return node.value.generators[0].iter.args[1]      # zip(total, values): the values
    return None


def _loss_name(event) -> str:
    """The stored value as code the message can put `.item()` after."""
    node = event.node
    if isinstance(node, ast.Call) and node.args:
        return operand_text(node.args[0], event)
    return "loss"


def _event_of(trace, node):
    for e in trace.events:
        if getattr(e, "node", None) is node:
            return e
    return None
