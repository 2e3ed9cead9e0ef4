"""AG201 missing-zero-grad: backward in a loop whose gradients are never cleared."""
from __future__ import annotations

import libcst as cst

from analysis.events import AttrAssignEvent, CallEvent, GradAttr, InplaceEvent, LoopEvent
from analysis.facts import ModuleValue, OptimizerValue, TensorFacts, Unknown
from analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent
from analysis.rulekit import BACKWARD_KEYWORDS, code_of


class MissingZeroGrad(Rule):
    code = "AG201"
    name = "missing-zero-grad"
    severity = "warning"
    summary = {
        "en": "backward in a loop, gradients never cleared: they accumulate across iterations",
        "zh": "循环中 backward 但从不清零梯度：梯度会跨迭代累加",
    }
    explanation = {
        "en": (
            "`backward()` adds into `.grad`; it never overwrites it. A training loop that "
            "backwards and updates every iteration without `optimizer.zero_grad()` (or "
            "`model.zero_grad()`, `p.grad = None`, `p.grad.zero_()`) updates with the sum of all "
            "past gradients: 2, 4, 6... The step sizes grow and training diverges, silently. Clear "
            "the gradients once per iteration, before the backward (or after the step). Gradient "
            "accumulation on purpose clears under a condition (`if (i + 1) % k == 0:`), and is "
            "not reported."
        ),
        "zh": (
            "`backward()` 是把梯度加到 `.grad` 上，而不是覆盖。训练循环每次迭代都 backward 并更新参数，却没有 "
            "`optimizer.zero_grad()`（或 `model.zero_grad()`、`p.grad = None`、`p.grad.zero_()`），"
            "就会用所有历史梯度之和来更新：2、4、6……步长越来越大，训练悄无声息地发散。请每次迭代清零一次梯度"
            "（在 backward 之前或 step 之后）。有意的梯度累积会在条件下清零（`if (i + 1) % k == 0:`），不会被报告。"
        ),
    }
    messages = {
        "en": {"optimizer": "gradients are never cleared in this loop: each backward adds to the "
                            "previous ones and `{optimizer}.step()` uses their running sum",
               "wrong": "this loop clears `{cleared}` but `{optimizer}` steps other parameters: "
                        "their gradients add up across iterations",
               "manual": "gradients are never cleared in this loop: `{leaf}.grad` sums the "
                         "gradients of every iteration",
               "fix_optimizer": "Insert {optimizer}.zero_grad() at the start of the loop body",
               "fix_leaf": "Insert {leaf}.grad = None at the start of the loop body"},
        "zh": {"optimizer": "这个循环从不清零梯度：每次 backward 都累加到之前的梯度上，"
                            "`{optimizer}.step()` 用的是它们的累计和",
               "wrong": "这个循环清零的是 `{cleared}`，而 `{optimizer}` 更新的是别的参数：它们的梯度会跨迭代累加",
               "manual": "这个循环从不清零梯度：`{leaf}.grad` 是每次迭代梯度的总和",
               "fix_optimizer": "在循环体开头插入 {optimizer}.zero_grad()",
               "fix_leaf": "在循环体开头插入 {leaf}.grad = None"},
    }

    bad = (
        Example(
            "import torch\n"
            "torch.manual_seed(0)\n"
            "X = torch.randn(30, 3)\n"
            "y = X @ torch.tensor([1.0, 2.0, -1.0])\n"
            "w = torch.zeros(3, requires_grad=True)\n"
            "for step in range(6):\n"
            "    loss = ((X @ w - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w -= 0.01 * w.grad\n",
            Silent("w.grad.norm() > 3 * torch.autograd.grad(((X @ w - y) ** 2).mean(), w)[0].norm()",
                   "w.grad is the sum of six steps' gradients"), line=8),
        Example(
            "import torch\n"
            "w = torch.tensor([1.0], requires_grad=True)\n"
            "for _ in range(3):\n"
            "    loss = w * 2\n"
            "    loss.backward()\n"
            "    print(w.grad)\n",
            Silent("w.grad.item() == 6.0", "grads 2, 4, 6"), line=5, source="seed:000 2.3"),
        Example(
            "import torch\n"
            "x = torch.tensor(1.0, requires_grad=True)\n"
            "for _ in range(3):\n"
            "    y = x**2\n"
            "    y.backward()\n"
            "    print(x.grad)\n"
            "x.grad.zero_()\n"
            "for _ in range(3):\n"
            "    y = x**2\n"
            "    y.backward(retain_graph=True)\n"
            "    print(x.grad)\n",
            Silent("x.grad.item() == 6.0", "the article says 'always 2.0'; it is 2, 4, 6"),
            line=10, source="seed:002 4.3"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "torch.manual_seed(0)\n"
            "teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)\n"
            "teacher.requires_grad_(False)\n"
            "optimizer = torch.optim.SGD(student.parameters(), lr=1e-3)\n"
            "x = torch.randn(16, 4)\n"
            "for step in range(6):\n"
            "    teacher.zero_grad()\n"
            "    with torch.no_grad():\n"
            "        soft_targets = teacher(x).softmax(dim=-1)\n"
            "    loss = F.kl_div(student(x).log_softmax(dim=-1), soft_targets, reduction='batchmean')\n"
            "    loss.backward()\n"
            "    optimizer.step()\n",
            Silent("student.weight.grad.norm() > 3 * torch.autograd.grad(F.kl_div(student(x)"
                   ".log_softmax(dim=-1), soft_targets, reduction='batchmean'), student.weight)[0].norm()",
                   "the student's gradients add up"), line=14),
        Example(
            "import torch\n"
            "from torch import nn, optim\n"
            "model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))\n"
            "opt = optim.Adam(model.parameters(), lr=1e-2)\n"
            "loss_fn = nn.MSELoss()\n"
            "x, y = torch.randn(32, 3), torch.randn(32, 1)\n"
            "for epoch in range(4):\n"
            "    loss = loss_fn(model(x), y)\n"
            "    loss.backward()\n"
            "    opt.step()\n"
            "g = model[0].weight.grad.clone()\n"
            "model.zero_grad()\n"
            "loss_fn(model(x), y).backward()\n",
            Silent("not torch.allclose(g, model[0].weight.grad)", "the stepped gradient is a sum"),
            line=9),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "def train_step(model, batch, optimizer):\n"
            "    x, y = batch\n"
            "    loss = nn.functional.mse_loss(model(x), y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "net = nn.Linear(2, 1)\n"
            "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "batch = (torch.randn(8, 2), torch.randn(8, 1))\n"
            "for epoch in range(3):\n"
            "    train_step(net, batch, opt)\n"
            "g = net.weight.grad.clone()\n"
            "net.zero_grad()\n"
            "nn.functional.mse_loss(net(batch[0]), batch[1]).backward()\n",
            Silent("not torch.allclose(g, net.weight.grad)", "the helper's gradients add up"),
            line=12),
        Example(
            "import copy\n"
            "import torch\n"
            "from torch import nn\n"
            "wrapped = copy.deepcopy(nn.Linear(4, 1))\n"
            "opt = torch.optim.SGD(wrapped.parameters(), lr=0.0)\n"
            "history = []\n"
            "for it in range(3):\n"
            "    wrapped(torch.ones(2, 4)).sum().backward()\n"
            "    opt.step()\n"
            "    history.append(wrapped.bias.grad.item())\n",
            Silent("history == [2.0, 4.0, 6.0]", "the bias gradient grows 2, 4, 6"), line=8),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(1, 1)\n"
            "criterion = nn.MSELoss()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.03)\n"
            "x = torch.linspace(0, 1, 20).unsqueeze(1)\n"
            "y = 2 * x + 1\n"
            "for epoch in range(50):\n"
            "    optimizer.zero_grad()\n"
            "    pred = model(x)\n"
            "    loss = criterion(pred, y)\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.05)\n"
            "accum = 2\n"
            "batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(6)]\n"
            "for i, (xb, yb) in enumerate(batches):\n"
            "    loss = nn.functional.mse_loss(model(xb), yb) / accum\n"
            "    loss.backward()\n"
            "    if (i + 1) % accum == 0:\n"
            "        optimizer.step()\n"
            "        optimizer.zero_grad()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "def reset(m):\n"
            "    m.zero_grad(set_to_none=True)\n"
            "for step in range(3):\n"
            "    loss = model(torch.randn(4, 3)).pow(2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    reset(model)\n"
            "for step in range(3):\n"
            "    loss = model(torch.randn(4, 3)).pow(2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "    for p in model.parameters():\n"
            "        p.grad = None\n"
            "def train_step(batch, optimizer):\n"
            "    optimizer.zero_grad()\n"
            "    model(batch).pow(2).mean().backward()\n"
            "    optimizer.step()\n"
            "for step in range(3):\n"
            "    train_step(torch.randn(4, 3), optimizer)\n"
            "import copy\n"
            "wrapped = copy.deepcopy(nn.Linear(4, 1))\n"
            "opt = torch.optim.SGD(wrapped.parameters(), lr=0.1)\n"
            "for it in range(3):\n"
            "    wrapped.zero_grad()\n"
            "    wrapped(torch.ones(2, 4)).sum().backward()\n"
            "    opt.step()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "optimizer.zero_grad()\n"
            "for micro in range(4):\n"
            "    loss = model(torch.randn(2, 3)).pow(2).mean() / 4\n"
            "    loss.backward()\n"
            "optimizer.step()\n"
            "def train(model, optimizer, batches):\n"
            "    for x, y in batches:\n"
            "        loss = (model(x) - y).pow(2).mean()\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"),
        Example(
            "import torch\n"
            "grads = []\n"
            "for k in range(3):\n"
            "    x = torch.tensor(float(k), requires_grad=True)\n"
            "    (x ** 2).backward()\n"
            "    grads.append(x.grad.item())\n"
            "w = torch.tensor(5.0, requires_grad=True)\n"
            "for step in range(10):\n"
            "    loss = (w - 3) ** 2\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w -= 0.1 * w.grad\n"
            "    w.grad.zero_()\n"),
    )

    def check(self, trace, locale):
        loops = [e.node for e in trace.of(LoopEvent)]
        for loop in loops:
            inside = [e for e in trace.events if loop in e.ctx.loops and e.ctx.loop_pass == 0]
            if not inside:
                continue
            backwards = [e for e in inside if isinstance(e, CallEvent) and _is_backward(e)]
            if not backwards:
                continue
            # Report at the innermost loop only: an outer loop sees the same backward.
            if any(b.ctx.loop is not loop and self._has_consumer(trace, b.ctx.loop, b)
                   for b in backwards):
                continue
            first = backwards[0]
            found = self._diagnose(inside, first, locale, trace)
            if found is not None:
                yield found

    def _has_consumer(self, trace, loop, backward) -> bool:
        inside = [e for e in trace.events if loop in e.ctx.loops and e.ctx.loop_pass == 0]
        return bool(_steps(inside)) or bool(_manual_leaves(inside, backward))

    def _diagnose(self, inside, backward: CallEvent, locale, trace) -> Report | None:
        clearing = [e for e in inside if _clears(e)]
        if any(_clears_anything(e) for e in clearing):
            return None
        loop = backward.ctx.loop
        first_stmt = loop.body.body[0] if isinstance(loop.body, cst.IndentedBlock) else None
        steps = _steps(inside)
        if steps:
            if len({optimizer.oid for _, optimizer, _ in steps}) != 1:
                return None
            _, optimizer, name_node = steps[0]
            if optimizer.opaque and clearing:
                # Its parameters are not known: any clearing may be of them.
                return None
            name = code_of(name_node)
            cleared = [e for e in clearing if isinstance(e, CallEvent)]
            if any(_may_clear(e, optimizer) for e in clearing):
                return None
            fixes = ()
            if first_stmt is not None:
                fixes = (FixSpec(self.text("fix_optimizer", locale, optimizer=name),
                                 (Edit("line_before", first_stmt, f"{name}.zero_grad()"),)),)
            if cleared:
                message = self.text("wrong", locale, optimizer=name,
                                    cleared=code_of(cleared[0].node.func.value))
            else:
                message = self.text("optimizer", locale, optimizer=name)
            return Report(backward.node, message, fixes)
        leaves = _manual_leaves(inside, backward)
        if not leaves or clearing:
            return None
        leaf = leaves[0]
        fixes = ()
        if first_stmt is not None:
            fixes = (FixSpec(self.text("fix_leaf", locale, leaf=leaf),
                             (Edit("line_before", first_stmt, f"{leaf}.grad = None"),)),)
        return Report(backward.node, self.text("manual", locale, leaf=leaf), fixes)


def _is_backward(event: CallEvent) -> bool:
    """A backward, or a call of a function of this module that runs one."""
    if event.callee_summary is not None and event.callee_summary.calls_backward:
        return True
    if event.method != "backward" or set(event.kwargs) - BACKWARD_KEYWORDS:
        return False
    if isinstance(event.receiver, TensorFacts):
        return True
    return type(event.receiver) is Unknown and not event.args


def _steps(events) -> list:
    """(event, optimizer, node naming it) for each `optimizer.step()`, and for each
    call of a function of this module that steps the one optimizer it is given."""
    found = []
    for e in events:
        if not isinstance(e, CallEvent):
            continue
        if e.method == "step" and isinstance(e.receiver, OptimizerValue):
            found.append((e, e.receiver, e.node.func.value))
        elif e.callee_summary is not None and e.callee_summary.steps:
            given = [(v, a.value) for v, a in zip(e.args, [a for a in e.node.args if a.keyword is None])
                     if isinstance(v, OptimizerValue)]
            given += [(v, e.arg_node(k).value) for k, v in e.kwargs.items()
                      if isinstance(v, OptimizerValue)]
            if len(given) == 1:
                found.append((e, given[0][0], given[0][1]))
    return found


def _manual_leaves(events, backward: CallEvent) -> list[str]:
    """Leaves of the backward's graph, made before the loop, whose `.grad` the loop
    reads (an update or a print): the evidence that the sum is used."""
    target = backward.receiver
    if not isinstance(target, TensorFacts):
        return []
    loop = backward.ctx.loop
    names = []
    for event in events:
        owner = None
        if isinstance(event, CallEvent) and isinstance(event.receiver, GradAttr):
            owner = event.receiver.owner
        elif isinstance(event, CallEvent):
            owner = next((a.owner for a in event.args if isinstance(a, GradAttr)), None)
        if owner is None or owner.tid not in target.leaves or owner.made_in_loop == id(loop):
            continue
        name = _owner_name(event)
        if name and name not in names:
            names.append(name)
    for event in events:
        if isinstance(event, InplaceEvent) and isinstance(event.target, TensorFacts) \
                and event.target.tid in target.leaves and event.ctx.no_grad \
                and event.target.made_in_loop != id(loop):
            name = code_of(event.target_node)
            if name not in names and "grad" in code_of(event.node):
                names.append(name)
    return names


def _owner_name(event: CallEvent) -> str | None:
    for node in (event.node.func, *[a.value for a in event.node.args]):
        while isinstance(node, cst.Attribute):
            if node.attr.value == "grad":
                return code_of(node.value)
            node = node.value
    return None


def _clears(event) -> bool:
    if isinstance(event, CallEvent):
        if event.method == "zero_grad":
            return True
        if isinstance(event.receiver, GradAttr) and event.method in ("zero_", "fill_", "mul_", "copy_"):
            return True
        if event.method == "zero_" and code_of(event.node.func.value).endswith((".grad", ".grad.data")):
            return True
        summary = event.callee_summary
        if summary is not None and summary.clears_grads:
            return True
        # An unknown function handed the model or optimizer may clear their grads.
        if event.qualname is None and event.method is None and event.callee_summary is None \
                and any(isinstance(a, (ModuleValue, OptimizerValue)) for a in event.args):
            return True
        return False
    if isinstance(event, AttrAssignEvent) and event.attr == "grad":
        return True
    return False


def _clears_anything(event) -> bool:
    """A clearing we cannot tie to a parameter set: assume it covers everything."""
    if isinstance(event, CallEvent) and event.method == "zero_grad":
        return not isinstance(event.receiver, (ModuleValue, OptimizerValue))
    return True if not isinstance(event, CallEvent) or event.method != "zero_grad" else False


def _may_clear(event, optimizer: OptimizerValue) -> bool:
    if optimizer.opaque:
        return True
    receiver = event.receiver if isinstance(event, CallEvent) else None
    if isinstance(receiver, OptimizerValue):
        return receiver.oid == optimizer.oid or receiver.opaque
    if isinstance(receiver, ModuleValue):
        return receiver.mid in optimizer.modules
    return True
