"""AG201 missing-zero-grad: backward in a loop whose gradients are never cleared."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import GradAttr, MethodOf, ObjectRef, TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent
from autograd_lsp.analysis.call_sites import call_toward, called_here, said_at_call
from autograd_lsp.analysis.rulekit import operand_text, receiver_text, sole_statement, source_of
from autograd_lsp.analysis.trace import (AttrAssignEvent, AttrReadEvent, BareExpressionEvent, CallEvent, CallSite,
                                       is_backward)



# The tutorial's custom ReLU (a torch.autograd.Function), for the examples below.
_MY_RELU = (
    "import torch\n"
    "class MyReLU(torch.autograd.Function):\n"
    "    @staticmethod\n"
    "    def forward(ctx, x):\n"
    "        ctx.save_for_backward(x)\n"
    "        return x.clamp(min=0)\n"
    "    @staticmethod\n"
    "    def backward(ctx, grad_output):\n"
    "        x, = ctx.saved_tensors\n"
    "        grad = grad_output.clone()\n"
    "        grad[x < 0] = 0\n"
    "        return grad\n"
)

# A loop stepping through a gradient scaler; `clear` opens the loop's body.
_SCALED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "model = nn.Linear(3, 1)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
    "scaler = torch.amp.GradScaler('cpu', init_scale=1.0)\n"
    "x, y = torch.randn(16, 3), torch.randn(16, 1)\n"
    "for step in range(3):\n"
    "{clear}"
    "    loss = nn.functional.mse_loss(model(x), y)\n"
    "    scaler.scale(loss).backward()\n"
    "    scaler.step(opt)\n"
    "    scaler.update()\n"
)

# A helper that trains or only evaluates, by the phase its caller names.
_PHASES = (
    "import torch\n"
    "import torch.nn as nn\n"
    "torch.manual_seed(0)\n"
    "model = nn.Linear(4, 2)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)\n"
    "batch = (torch.randn(8, 4), torch.randint(0, 2, (8,)))\n"
    "norms = []\n"
    "def run_epoch(phase, loader):\n"
    "    for x, y in loader:\n"
    "{clear}"
    "        loss = nn.functional.cross_entropy(model(x), y)\n"
    "        if phase == 'train':\n"
    "            loss.backward()\n"
    "            optimizer.step()\n"
    "            norms.append(model.weight.grad.norm().item())\n"
    "run_epoch('train', [batch] * 3)\n"
)


# A subclass of a layer that keeps the layer's forward and parameters.
_NOISY_LINEAR = (
    "import torch\n"
    "from torch import nn\n"
    "class NoisyLinear(nn.Linear):\n"
    "    def forward(self, x):\n"
    "        out = super().forward(x)\n"
    "        return out + 0.01 * torch.randn_like(out)\n"
)


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
               "conditional": "`{optimizer}` steps on every iteration but is cleared only under a "
                               "condition: a step on an iteration that skips the clear uses the "
                               "gradients of earlier iterations too",
               "manual": "gradients are never cleared in this loop: `{leaf}.grad` sums the "
                         "gradients of every iteration",
               "closure": "`{optimizer}.step` evaluates its closure more than once, and nothing in "
                          "it clears the gradients: each backward adds to the one before, and the "
                          "step uses their sum",
               "fix_closure": "Insert {optimizer}.zero_grad() at the start of the closure",
               "fix_before_backward": "Insert {optimizer}.zero_grad() before the backward",
               "fix_optimizer": "Insert {optimizer}.zero_grad() at the start of the loop body",
               "fix_leaf": "Insert {leaf}.grad = None at the start of the loop body"},
        "zh": {"optimizer": "这个循环从不清零梯度：每次 backward 都累加到之前的梯度上，"
                            "`{optimizer}.step()` 用的是它们的累计和",
               "wrong": "这个循环清零的是 `{cleared}`，而 `{optimizer}` 更新的是别的参数：它们的梯度会跨迭代累加",
               "conditional": "`{optimizer}` 每次迭代都 step，却只在某个条件下清零：跳过清零的迭代里，"
                               "step 用的梯度还包含之前迭代的梯度",
               "manual": "这个循环从不清零梯度：`{leaf}.grad` 是每次迭代梯度的总和",
               "closure": "`{optimizer}.step` 会多次调用其闭包，而闭包中没有清零梯度："
                          "每次 backward 都累加到上一次的梯度上，step 用的是它们的和",
               "fix_closure": "在闭包开头插入 {optimizer}.zero_grad()",
               "fix_before_backward": "在 backward 之前插入 {optimizer}.zero_grad()",
               "fix_optimizer": "在循环体开头插入 {optimizer}.zero_grad()",
               "fix_leaf": "在循环体开头插入 {leaf}.grad = None"},
    }

    bad = (
        # A notebook's demo cell takes one clean step; the training cell after it
        # never clears: the demo's gradient and every batch's add up.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "criterion = nn.CrossEntropyLoss()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
            "batches = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(4)]\n"
            "optimizer.zero_grad()\n"
            "criterion(model(batches[0][0]), batches[0][1]).backward()\n"
            "optimizer.step()\n"
            "norms = []\n"
            "for epoch in range(2):\n"
            "    for x, y in batches:\n"
            "        loss = criterion(model(x), y)\n"
            "        loss.backward()\n"
            "        optimizer.step()\n"
            "        norms.append(model.weight.grad.norm().item())\n",
            Silent("norms[-1] > 3 * norms[0]", "each step uses the running sum of every earlier gradient"),
            line=15),
        # A home-made accelerate-style `prepare` hands back the model and the optimizer
        # it was given (`isinstance(obj, nn.Module)` tells them apart).
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "class MiniAccelerator:\n"
            "    def prepare(self, *objects):\n"
            "        out = []\n"
            "        for obj in objects:\n"
            "            if isinstance(obj, nn.Module):\n"
            "                obj = obj.to(\"cpu\")\n"
            "            out.append(obj)\n"
            "        return tuple(out)\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
            "model, optimizer = MiniAccelerator().prepare(model, optimizer)\n"
            "x, y = torch.randn(8, 3), torch.randn(8, 1)\n"
            "for step in range(4):\n"
            "    F.mse_loss(model(x), y).backward()\n"
            "    optimizer.step()\n",
            Silent("model.weight.grad.norm() > 3 * torch.autograd.grad(F.mse_loss(model(x), y), "
                   "model.weight)[0].norm()", "each step uses the running sum of every earlier gradient"),
            line=18),
        Example(_PHASES.format(clear=""), Silent("norms[2] > 2.5 * norms[0]", "the gradients add up"), line=12),
        # An agent that learns once its replay memory is full enough: nothing in the
        # program clears the gradients.
        Example(
            "import random\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "class Agent:\n"
            "    def __init__(self):\n"
            "        self.q = nn.Linear(4, 2)\n"
            "        self.optimizer = torch.optim.SGD(self.q.parameters(), lr=1e-3)\n"
            "        self.memory = []\n"
            "        self.norms = []\n"
            "    def step(self, state, reward):\n"
            "        self.memory.append((state, reward))\n"
            "        if len(self.memory) >= 4:\n"
            "            self.learn(random.sample(self.memory, 4))\n"
            "    def learn(self, batch):\n"
            "        states = torch.stack([s for s, _ in batch])\n"
            "        rewards = torch.tensor([r for _, r in batch])\n"
            "        loss = (self.q(states).max(1)[0] - rewards).pow(2).mean()\n"
            "        loss.backward()\n"
            "        self.optimizer.step()\n"
            "        self.norms.append(self.q.weight.grad.norm().item())\n"
            "random.seed(0)\n"
            "torch.manual_seed(0)\n"
            "agent = Agent()\n"
            "for t in range(12):\n"
            "    agent.step(torch.randn(4), 1.0)\n",
            Silent("agent.norms[-1] > 3 * agent.norms[0]", "each step uses the sum of every update's gradients"),
            line=18),
        # The epoch as a list comprehension over the loader: a loop all the same.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 1)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=1e-4)\n"
            "norms = []\n"
            "def train_step(x, y):\n"
            "    loss = (model(x).squeeze(1) - y).pow(2).mean()\n"
            "    loss.backward()\n"
            "    norms.append(model.weight.grad.norm().item())\n"
            "    opt.step()\n"
            "    return loss.item()\n"
            "x = torch.randn(32, 4)\n"
            "loader = DataLoader(TensorDataset(x, x.sum(1) + 3.0), batch_size=8)\n"
            "losses = [train_step(xb, yb) for xb, yb in loader]\n",
            Silent("norms[3] > 2.5 * norms[0]", "each step uses the sum of every batch's gradients"), line=10),
        # The trainable parameters as a `filter`, which the optimizer used up: the loop
        # that clears them by hand later iterates nothing.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))\n"
            "model[0].requires_grad_(False)\n"
            "trainable = filter(lambda p: p.requires_grad, model.parameters())\n"
            "opt = torch.optim.SGD(trainable, lr=1e-4)\n"
            "norms = []\n"
            "x = torch.ones(8, 4)\n"
            "for step in range(3):\n"
            "    for p in trainable:\n"
            "        p.grad = None\n"
            "    model(x).pow(2).mean().backward()\n"
            "    norms.append(model[1].weight.grad.norm().item())\n"
            "    opt.step()\n",
            Silent("norms[2] > 2.5 * norms[0]", "the third step uses the sum of three steps' gradients"),
            line=13),
        # Micro-batches of each loader batch (its size only bounded), each backwarded,
        # then one step: nothing clears between the steps.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=1e-4)\n"
            "loader = DataLoader(TensorDataset(torch.ones(48, 4)), batch_size=16)\n"
            "norms = []\n"
            "for (x,) in loader:\n"
            "    for chunk in x.split(4):\n"
            "        model(chunk).pow(2).mean().backward()\n"
            "    norms.append(model.weight.grad.norm().item())\n"
            "    opt.step()\n",
            Silent("norms[2] > 2.5 * norms[0]", "the third step uses the sum of three batches' gradients"),
            line=11),
        # Clearing made conditional for accumulation, the step left on every batch: from
        # the first batch on, a step between two clears uses a running sum.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=1e-4)\n"
            "accum = 4\n"
            "norms = []\n"
            "x = torch.randn(8, 4)\n"
            "for step, _ in enumerate(range(0, 32, 8)):\n"
            "    (model(x).pow(2).mean() / accum).backward()\n"
            "    norms.append(model.weight.grad.norm().item())\n"
            "    opt.step()\n"
            "    if (step + 1) % accum == 0:\n"
            "        opt.zero_grad()\n",
            Silent("norms[3] > 3.5 * norms[0]", "the fourth step uses the sum of four batches' gradients"),
            line=10),
        # Accumulation set to one step: the clear's condition is never true, and the
        # gradient read before the conditional step is a sum.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
            "accum = 1\n"
            "norms = []\n"
            "for i, x in enumerate(torch.randn(4, 8, 4), start=1):\n"
            "    if accum > 1 and i % accum == 1:\n"
            "        opt.zero_grad()\n"
            "    (model(x).pow(2).mean() / accum).backward()\n"
            "    if i % accum == 0:\n"
            "        norms.append(model.weight.grad.norm().item())\n"
            "        opt.step()\n",
            Silent("norms[3] > 2.5 * norms[0]", "each step uses the sum of every batch's gradients"), line=11),
        # The same in a training engine whose step counter lives on `self` (its value
        # unknown once batches of a loader went by): any integer modulo 1 is 0, so the
        # clear at the start of each accumulation window never runs.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from types import SimpleNamespace\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "class Engine:\n"
            "    def __init__(self, model, optimizer, config):\n"
            "        self.model, self.optimizer, self.config = model, optimizer, config\n"
            "        self.iteration = 0\n"
            "        self.norms = []\n"
            "    def train_step(self, x):\n"
            "        self.iteration += 1\n"
            "        if self.iteration % self.config.iteration_per_update == 1:\n"
            "            self.optimizer.zero_grad()\n"
            "        self.model(x).pow(2).mean().backward()\n"
            "        self.norms.append(self.model.weight.grad.norm().item())\n"
            "        if self.iteration % self.config.iteration_per_update == 0:\n"
            "            self.optimizer.step()\n"
            "    def run(self, loader, epochs):\n"
            "        for epoch in range(epochs):\n"
            "            for (x,) in loader:\n"
            "                self.train_step(x)\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "engine = Engine(model, torch.optim.SGD(model.parameters(), lr=1e-4),\n"
            "                SimpleNamespace(iteration_per_update=1))\n"
            "engine.run(DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=8), 2)\n",
            Silent("engine.norms[3] > 3.5 * engine.norms[0]", "each step uses the sum of every batch's gradients"),
            line=14),
        # The tutorial's custom ReLU, without the clearing after the update.
        Example(
            _MY_RELU +
            "torch.manual_seed(0)\n"
            "x = torch.randn(16, 4)\n"
            "w = torch.randn(4, 1, requires_grad=True)\n"
            "norms = []\n"
            "for t in range(3):\n"
            "    loss = (MyReLU.apply(x.mm(w)) - 1).pow(2).sum()\n"
            "    loss.backward()\n"
            "    norms.append(w.grad.norm().item())\n"
            "    with torch.no_grad():\n"
            "        w -= 1e-4 * w.grad\n",
            Silent("norms[2] > 2.5 * norms[0]", "each update uses the sum of every iteration's gradients"),
            line=19),
        # Mixed precision through a gradient scaler: the scaler steps the optimizer,
        # and nothing clears its gradients (the fix clears the optimizer's).
        Example(
            _SCALED.format(clear=""),
            Silent("model.weight.grad.norm() > 2.5 * torch.autograd.grad("
                   "nn.functional.mse_loss(model(x), y), model.weight)[0].norm()",
                   "the gradient the last step used is the sum of every iteration's"),
            line=10, fixed=_SCALED.format(clear="    opt.zero_grad()\n")),
        # LBFGS evaluates the closure several times per step.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(3, 1)\n"
            "opt = torch.optim.LBFGS(model.parameters(), lr=0.01, max_iter=4)\n"
            "x, y = torch.randn(16, 3), torch.randn(16, 1)\n"
            "norms = []\n"
            "def closure():\n"
            "    loss = nn.functional.mse_loss(model(x), y)\n"
            "    loss.backward()\n"
            "    norms.append(model.weight.grad.norm().item())\n"
            "    return loss\n"
            "opt.zero_grad()\n"
            "opt.step(closure)\n",
            Silent("len(norms) > 1 and norms[1] > 1.5 * norms[0]", "the second evaluation's gradient is a sum"),
            line=10),
        # Cleared once per epoch; each batch backwards over sub-iterations, whose
        # count is an option's default, and steps.
        Example(
            "import argparse\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "parser = argparse.ArgumentParser()\n"
            "parser.add_argument('--iter-size', type=int, default=2)\n"
            "args = parser.parse_args([])\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
            "batches = [(torch.randn(8, 4), torch.randn(8, 2))] * 4\n"
            "norms = []\n"
            "for epoch in range(2):\n"
            "    optimizer.zero_grad()\n"
            "    for x, y in batches:\n"
            "        for sub in range(args.iter_size):\n"
            "            loss = nn.functional.mse_loss(model(x), y) / args.iter_size\n"
            "            loss.backward()\n"
            "        optimizer.step()\n"
            "        norms.append(model.weight.grad.norm().item())\n",
            Silent("norms[3] > 2.5 * norms[0]", "each step uses the sum of the epoch's batches"), line=17),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "def train_epoch(net, batches, loss, updater):\n"
            "    for X, y in batches:\n"
            "        l = loss(net(X), y)\n"
            "        if isinstance(updater, torch.optim.Optimizer):\n"
            "            l.mean().backward()\n"
            "            updater.step()\n"
            "        else:\n"
            "            l.sum().backward()\n"
            "            updater(X.shape[0])\n"
            "torch.manual_seed(0)\n"
            "net = nn.Sequential(nn.Flatten(), nn.Linear(20, 5))\n"
            "loss = nn.CrossEntropyLoss(reduction='none')\n"
            "trainer = torch.optim.SGD(net.parameters(), lr=0.01)\n"
            "batches = [(torch.randn(8, 20), torch.randint(0, 5, (8,)))] * 6\n"
            "train_epoch(net, batches, loss, trainer)\n",
            Silent("net[1].weight.grad.norm() > 3 * torch.autograd.grad(loss(net(batches[-1][0]), "
                   "batches[-1][1]).mean(), net[1].weight)[0].norm()",
                   "the optimizer's branch is the one taken, and it never clears"), line=7),
        Example(
            _NOISY_LINEAR +
            "torch.manual_seed(0)\n"
            "model = NoisyLinear(4, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "x, y = torch.randn(8, 4), torch.randn(8, 2)\n"
            "for epoch in range(6):\n"
            "    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    opt.step()\n",
            Silent("model.weight.grad.norm() > 3 * torch.autograd.grad(((model(x) - y) ** 2).mean(), "
                   "model.weight)[0].norm()",
                   "a subclass of nn.Linear has its parameters; their gradients add up"), line=13),
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
        # Accumulation the loop drives: a helper backwards, the loop steps every k
        # batches and never clears. Reported at the loop's call of the helper.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)\n"
            "norms = []\n"
            "def accumulate(x, y):\n"
            "    loss = nn.functional.mse_loss(model(x), y) / 2\n"
            "    loss.backward()\n"
            "for step in range(8):\n"
            "    accumulate(torch.ones(4, 3), torch.zeros(4, 1))\n"
            "    if (step + 1) % 2 == 0:\n"
            "        norms.append(model.weight.grad.norm().item())\n"
            "        optimizer.step()\n",
            Silent("norms[-1] > 3.5 * norms[0]", "every update uses the gradients of all batches so far"),
            line=10),
        # MAML through torch.func.functional_call: the meta-gradient reaches the
        # model's parameters through the fast weights, and nothing clears it.
        Example(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "from torch.func import functional_call\n"
            "model = torch.nn.Linear(3, 1)\n"
            "meta_opt = torch.optim.SGD(model.parameters(), lr=1e-4)\n"
            "norms = []\n"
            "for it in range(4):\n"
            "    params = dict(model.named_parameters())\n"
            "    x, y = torch.ones(8, 3), torch.zeros(8, 1)\n"
            "    inner = F.mse_loss(functional_call(model, params, (x,)), y)\n"
            "    grads = torch.autograd.grad(inner, list(params.values()), create_graph=True)\n"
            "    fast = {name: p - 0.1 * g for (name, p), g in zip(params.items(), grads)}\n"
            "    meta_loss = F.mse_loss(functional_call(model, fast, (x,)), y)\n"
            "    meta_loss.backward()\n"
            "    norms.append(model.weight.grad.norm().item())\n"
            "    meta_opt.step()\n",
            Silent("norms[-1] > 3.5 * norms[0]", "each meta-step uses the sum of every earlier one"),
            line=14),
        # A GAN that clears the generator's gradients only: reported at the
        # discriminator's backward, whose gradients add up.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "G, D = nn.Linear(2, 2), nn.Linear(2, 1)\n"
            "opt_g = torch.optim.SGD(G.parameters(), lr=0.01)\n"
            "opt_d = torch.optim.SGD(D.parameters(), lr=0.01)\n"
            "for step in range(3):\n"
            "    opt_g.zero_grad()\n"
            "    fake = G(torch.randn(4, 2))\n"
            "    D(fake).mean().backward()\n"
            "    opt_g.step()\n"
            "    real = torch.randn(4, 2)\n"
            "    d_loss = D(fake.detach()).mean() - D(real).mean()\n"
            "    d_loss.backward()\n"
            "    opt_d.step()\n"
            "g = D.weight.grad.clone()\n"
            "D.zero_grad()\n"
            "(D(fake.detach()).mean() - D(real).mean()).backward()\n",
            Silent("not torch.allclose(g, D.weight.grad)", "the discriminator's gradients add up"),
            line=13),
        # The loop calls a training step that never clears: reported at the step's
        # backward, the function to mend.
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
            line=6),
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
        # An ignite-like engine: the update function steps, a handler registered for
        # each completed iteration (in a defaultdict of lists) clears.
        Example(
            "from collections import defaultdict\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "class Engine:\n"
            "    def __init__(self, update):\n"
            "        self.update = update\n"
            "        self.handlers = defaultdict(list)\n"
            "    def on(self, event):\n"
            "        def register(fn):\n"
            "            self.handlers[event].append(fn)\n"
            "            return fn\n"
            "        return register\n"
            "    def run(self, batches):\n"
            "        for batch in batches:\n"
            "            self.update(batch)\n"
            "            for fn in self.handlers['iteration_completed']:\n"
            "                fn(self)\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 1)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "def update(batch):\n"
            "    model(batch).pow(2).mean().backward()\n"
            "    opt.step()\n"
            "engine = Engine(update)\n"
            "@engine.on('iteration_completed')\n"
            "def clear(engine):\n"
            "    opt.zero_grad()\n"
            "engine.run([torch.randn(8, 4) for _ in range(3)])\n"),
        # Per-task gradients measured between the backwards of one step: the running
        # sum is read before and after each task's backward, and the step clears.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "trunk, head = nn.Linear(4, 4), nn.Linear(4, 2)\n"
            "opt = torch.optim.SGD(list(trunk.parameters()) + list(head.parameters()), lr=0.1)\n"
            "def flat_grad():\n"
            "    return torch.cat([p.grad.detach().flatten().clone() for p in trunk.parameters()])\n"
            "cosines = []\n"
            "for step in range(3):\n"
            "    out = head(trunk(torch.randn(8, 4)))\n"
            "    losses = [out[:, 0].pow(2).mean(), F.softplus(out[:, 1]).mean()]\n"
            "    opt.zero_grad()\n"
            "    grads = []\n"
            "    for i, task_loss in enumerate(losses):\n"
            "        before = flat_grad() if i > 0 else torch.zeros(4 * 4 + 4)\n"
            "        task_loss.backward(retain_graph=i < len(losses) - 1)\n"
            "        grads.append(flat_grad() - before)\n"
            "    cosines.append(F.cosine_similarity(grads[0], grads[1], dim=0).item())\n"
            "    opt.step()\n"),
        Example(_PHASES.format(clear="        optimizer.zero_grad()\n")),
        # The tutorial's custom ReLU as written: the gradient cleared after the update.
        Example(
            _MY_RELU +
            "x = torch.randn(16, 4)\n"
            "w = torch.randn(4, 1, requires_grad=True)\n"
            "relu = MyReLU.apply\n"
            "for t in range(3):\n"
            "    loss = (relu(x.mm(w)) - 1).pow(2).sum()\n"
            "    loss.backward()\n"
            "    with torch.no_grad():\n"
            "        w -= 1e-4 * w.grad\n"
            "        w.grad.zero_()\n"),
        Example(
            _NOISY_LINEAR +
            "model = NoisyLinear(4, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "x, y = torch.randn(8, 4), torch.randn(8, 2)\n"
            "for epoch in range(6):\n"
            "    opt.zero_grad()\n"
            "    loss = ((model(x) - y) ** 2).mean()\n"
            "    loss.backward()\n"
            "    opt.step()\n"),
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
        # An update on one iteration only, and one that clears in its helper.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 1)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for t in range(5):\n"
            "    if t == 4:\n"
            "        model(torch.randn(2, 4)).sum().backward()\n"
            "        opt.step()\n"
            "memory = []\n"
            "def learn(batch):\n"
            "    opt.zero_grad()\n"
            "    model(torch.stack(batch)).pow(2).mean().backward()\n"
            "    opt.step()\n"
            "for t in range(6):\n"
            "    memory.append(torch.randn(4))\n"
            "    if len(memory) >= 3:\n"
            "        learn(memory[-3:])\n"),
        # A model and its optimizer made anew for each trial: its gradients start at None.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "for trial in range(6):\n"
            "    model = nn.Linear(4, 1)\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    if trial % 2:\n"
            "        model(torch.randn(2, 4)).sum().backward()\n"
            "        opt.step()\n"),
        # LBFGS's closure clears before its backward, as torch's documentation shows.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "opt = torch.optim.LBFGS(model.parameters(), lr=0.01, max_iter=4)\n"
            "x, y = torch.randn(16, 3), torch.randn(16, 1)\n"
            "def closure():\n"
            "    opt.zero_grad()\n"
            "    loss = nn.functional.mse_loss(model(x), y)\n"
            "    loss.backward()\n"
            "    return loss\n"
            "for epoch in range(3):\n"
            "    opt.step(closure)\n"),
        # Each batch a loader yields is a new tensor: its `.grad` starts at None.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "model = nn.Sequential(nn.Flatten(), nn.Linear(16, 10)).eval()\n"
            "loader = DataLoader(TensorDataset(torch.rand(8, 1, 4, 4), torch.randint(0, 10, (8,))), batch_size=4)\n"
            "for data, target in loader:\n"
            "    data.requires_grad = True\n"
            "    loss = F.cross_entropy(model(data), target)\n"
            "    model.zero_grad()\n"
            "    loss.backward()\n"
            "    adversarial = (data + 0.1 * data.grad.sign()).clamp(0, 1)\n"
            "saliency = []\n"
            "for i, (data, target) in enumerate(loader):\n"
            "    data.requires_grad_()\n"
            "    F.cross_entropy(model(data), target).backward()\n"
            "    saliency.append(data.grad.abs().sum().item())\n"
            "batches = iter(loader)\n"
            "for step in range(2):\n"
            "    data, target = next(batches)\n"
            "    data.requires_grad_()\n"
            "    F.cross_entropy(model(data), target).backward()\n"
            "    saliency.append(data.grad.abs().sum().item())\n"),
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
        # Gradients cleared by hand over a list whose items are not known one by one
        # (a filter over the parameters): the `p` cleared may be any of them.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "encoder, head = nn.Linear(4, 4), nn.Linear(4, 1)\n"
            "params = list(filter(lambda p: p.requires_grad, [*encoder.parameters(), *head.parameters()]))\n"
            "optimizer = torch.optim.SGD(head.parameters(), lr=0.1)\n"
            "for step in range(3):\n"
            "    for p in params:\n"
            "        p.grad = None\n"
            "    loss = head(encoder(torch.randn(2, 4))).sum()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"),
        # Frozen pretrained vectors (`from_pretrained` freezes by default) never get a
        # gradient; the trainable ones are cleared by hand before each backward.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "class Classifier(nn.Module):\n"
            "    def __init__(self, vectors):\n"
            "        super().__init__()\n"
            "        self.emb = nn.Embedding.from_pretrained(vectors)\n"
            "        self.fc = nn.Linear(vectors.size(1), 2)\n"
            "    def forward(self, tokens):\n"
            "        return self.fc(self.emb(tokens))\n"
            "model = Classifier(torch.randn(20, 4))\n"
            "params = list(model.parameters())\n"
            "optimizer = torch.optim.SGD([p for p in params if p.requires_grad], lr=0.1)\n"
            "for step in range(3):\n"
            "    for p in params:\n"
            "        if p.grad is not None:\n"
            "            p.grad.zero_()\n"
            "    loss = model(torch.tensor([1, 2])).sum()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "assert model.emb.weight.grad is None\n"),
    )

    def check(self, trace, locale):
        reported = set()
        # A loop's stale step before a stale `.grad` read: the fix clears the optimizer.
        stale_steps = [e for e in trace.events if isinstance(e, CallEvent) and e.extra.get("stale")]
        for event in stale_steps + [e for e in trace.events if isinstance(e, AttrReadEvent)]:
            if isinstance(event, CallEvent) and event.extra.get("stale"):
                since = next(iter(event.extra["stale"].values()))
            elif isinstance(event, AttrReadEvent) and event.attr == "grad" \
                    and event.receiver.grad == "summed" and event.receiver.grad_since is not None:
                since = event.receiver.grad_since
            else:
                continue
            loop = _loop_of_earlier_pass(since, event.ctx)
            if loop is None or loop in reported:
                continue
            every_pass = trace.inside(loop, first_pass=False)
            events = [e for e in every_pass if e.ctx.loop_pass_of(loop) == event.ctx.loop_pass_of(loop)]
            # (A clear on any pass: unrolled over a known list, the pass that steps may
            # not be the one that clears, at the start of the next window.)
            if not event.ctx.always_runs_in(loop) and any(_clears(e, event) for e in every_pass):
                continue      # step and clearing under a condition: gradient accumulation on purpose
            if any(_clears_unseen(e) for e in events):
                continue      # `p.grad = None` for a `p` we cannot see may be the clear this step needs
            if _zero_grad_not_called(events):
                continue
            if isinstance(event, AttrReadEvent) and _increment_measured(events, event):
                continue      # the running sum read before and after a backward: one task's gradient
            reported.add(loop)
            report = self._report(trace, loop, event, events, locale)
            yield report
            # Said once more: beside the step when a helper of the step's function
            # backwards, else at the loop's call of the helper that does both.
            again = _beside_the_step(report, event, locale) or _at_the_loops_call(report, loop, locale)
            if again is not None:
                yield again
        yield from self._opaque_optimizers(trace, reported, locale)
        yield from self._conditional_updates(trace, reported, locale)
        yield from self._closures(trace, locale)

    def _conditional_updates(self, trace, reported, locale):
        """Updates under a condition in a loop (a replay buffer full enough, every k
        environment steps) in a program where nothing clears gradients: from the second
        update on, each step uses the sum of every earlier backward. (A condition that
        picks one iteration, `==`, is left out: the update may run once.)"""
        events = trace.events
        calls = trace.calls()
        steps = [e for e in calls if e.method == "step" and e.extra.get("complete")
                 and e.extra.get("params") and isinstance(e.extra.get("optimizer"), ObjectRef)]
        if not steps or any(_clears(e, step) for e in events for step in steps[:1]) \
                or _zero_grad_not_called(events):
            return
        for loop_event in trace.loops():
            loop = loop_event.loop
            if loop in reported or loop.is_comprehension or loop.unrolled:
                continue
            for step in steps:
                if loop not in step.ctx.loops or step.ctx.loop_pass_of(loop) != 1 \
                        or step.ctx.always_runs_in(loop) or _picks_one_iteration(step, loop) \
                        or _made_anew_in(step, loop):
                    continue
                params = step.extra["params"]
                backwards = [e for e in calls if is_backward(e) and loop in e.ctx.loops
                             and e.ctx.loop_pass_of(loop) == 1 and e.extra.get("leaves", frozenset()) & params
                             and not _picks_one_iteration(e, loop)]
                if not backwards or any(_clears(e, step) for e in events):
                    continue
                reported.add(loop)
                backward = backwards[-1]
                name = receiver_text(step.node.func, step)
                fixes = ()
                if backward.ctx.calls == step.ctx.calls and sole_statement(backward) is not None:
                    fixes = (FixSpec(self.text("fix_before_backward", locale, optimizer=name),
                                     (Edit("line_before", backward.ctx.stmt, f"{name}.zero_grad()", backward),)),)
                yield Report(backward.node, self.text("optimizer", locale, optimizer=name), fixes, backward)
                break

    def _closures(self, trace, locale):
        """A closure that an optimizer evaluates several times per step (LBFGS), which
        backwards and clears nothing: each evaluation adds to the one before."""
        calls = trace.calls()
        for step in calls:
            if step.method != "step" or not step.extra.get("closure_summed"):
                continue
            backwards = [e for e in calls if is_backward(e)
                         and any(getattr(site, "node", None) is step.node for site in e.ctx.calls)]
            if not backwards:
                continue
            name = receiver_text(step.node.func, step)
            closure = step.args[0] if step.args else step.kwargs.get("closure")
            fixes = ()
            body = getattr(getattr(closure, "node", None), "body", None)
            enclosing = step.ctx.function.node if step.ctx.function is not None else None
            # (Placed through an event of the closure's own code: its text may be
            # another chunk than the step's.)
            inside = next((e for e in calls if getattr(e.ctx.function, "node", None) is
                           getattr(closure, "node", False)), None)
            if isinstance(body, list) and body and inside is not None and (
                    enclosing is None or any(n is closure.node for n in ast.walk(enclosing))):
                fixes = (FixSpec(self.text("fix_closure", locale, optimizer=name),
                                 (Edit("line_before", body[0], f"{name}.zero_grad()", inside),)),)
            yield Report(backwards[0].node, self.text("closure", locale, optimizer=name), fixes, backwards[0])

    def _opaque_optimizers(self, trace, reported, locale):
        """An optimizer whose parameters are not known (a wrapped or parallelised
        model): the loop backwards and steps it on every iteration, and nothing in the
        loop clears any gradient or hands the optimizer to code that could."""
        for loop_event in trace.loops():
            loop = loop_event.loop
            if loop in reported or loop.is_comprehension:
                continue
            events = trace.inside(loop)
            steps = [e for e in events if isinstance(e, CallEvent) and e.method == "step"
                     and e.extra.get("optimizer") is not None and not e.extra.get("complete")
                     and e.ctx.always_runs_in(loop)]
            backwards = [e for e in events if is_backward(e) and e.ctx.always_runs_in(loop)
                         and _training_loop(e.ctx) is loop]
            if not steps or not backwards or any(_clears(e, steps[0]) for e in events) \
                    or _zero_grad_not_called(events):
                continue
            reported.add(loop)
            yield self._report(trace, loop, steps[0], events, locale)

    def _report(self, trace, loop, consumer, events, locale) -> Report:
        site = consumer.ctx.site_in(loop)
        first = loop.body[0] if loop.body else None
        at = _event_at(trace, site) or consumer
        if isinstance(consumer, CallEvent):
            name = _name_in_loop(events, loop, consumer)
            fixes = ()
            if name is not None and first is not None:
                fixes = (FixSpec(self.text("fix_optimizer", locale, optimizer=name),
                                 (Edit("line_before", first, f"{name}.zero_grad()", at),)),)
            shown = name or receiver_text(consumer.node.func, consumer)
            cleared = [e for e in events if isinstance(e, CallEvent) and e.method == "zero_grad"
                       and e.ctx.loop_pass_of(loop) == consumer.ctx.loop_pass_of(loop)]
            if cleared and all(e.receiver == consumer.extra.get("optimizer")
                               and not e.ctx.always_runs_in(loop) for e in cleared):
                # The clear is under a condition the step is not under (`if (i + 1) %
                # accum == 0: zero_grad()` with a step on every batch).
                message = self.text("conditional", locale, optimizer=shown)
            elif cleared:
                message = self.text("wrong", locale, optimizer=shown,
                                    cleared=receiver_text(cleared[0].node.func, cleared[0]))
            else:
                message = self.text("optimizer", locale, optimizer=shown)
            return _report_at_backward(events, consumer, site, at, message, fixes, loop)
        leaf = receiver_text(consumer.node, consumer)
        fixes = ()
        if first is not None and consumer.ctx.calls == loop_calls(loop, consumer):
            fixes = (FixSpec(self.text("fix_leaf", locale, leaf=leaf),
                             (Edit("line_before", first, f"{leaf}.grad = None", at),)),)
        return _report_at_backward(events, consumer, site, at, self.text("manual", locale, leaf=leaf),
                                   fixes, loop)


def _made_anew_in(step, loop) -> bool:
    """Whether some parameter the step updates is made again on each iteration of
    `loop` (or of a loop inside it): its gradients start at None there."""
    return any(made is loop or any(n is made.node for n in ast.walk(loop.node))
               for made in step.extra.get("params_made_in", ()))


def _clears(event, step) -> bool:
    """`_may_clear`, where reading a gradient (`p.grad.abs()`) is not clearing it."""
    if isinstance(event, CallEvent) and isinstance(event.receiver, GradAttr) and not event.method.endswith("_"):
        return False
    return _may_clear(event, step)


def _clears_unseen(event) -> bool:
    """A clear whose target is not known: `p.grad = None` or `p.grad.zero_()` for a
    `p` drawn from a list of unknown items, `m.zero_grad()` on an unknown `m`."""
    if isinstance(event, AttrAssignEvent):
        return event.attr == "grad" and not isinstance(event.receiver, (TensorFacts, ObjectRef))
    return isinstance(event, CallEvent) and event.method in ("zero_grad", "zero_", "fill_") \
        and event.qualname is None and not isinstance(event.receiver, (TensorFacts, ObjectRef, GradAttr))


def _picks_one_iteration(event, loop) -> bool:
    """Whether an `if` between `loop` and the event tests for equality (`if t == 0:`):
    the branch may run on one iteration only."""
    blocks = event.ctx.blocks
    inner = blocks[blocks.index(loop) + 1:] if loop in blocks else blocks
    for block in inner:
        test = getattr(getattr(block, "node", block), "test", None)
        if test is not None and any(isinstance(n, (ast.Eq, ast.Is)) for n in ast.walk(test)):
            return True
    return False


def _zero_grad_not_called(events) -> bool:
    """`optimizer.zero_grad` named on a line of its own, without its parentheses:
    method-not-called reports it, with the fix that belongs here."""
    return any(isinstance(e, BareExpressionEvent) and isinstance(e.value, MethodOf)
               and e.value.name == "zero_grad" for e in events)


def _may_clear(event, step) -> bool:
    """Whether an event in the loop clears gradients, or may."""
    if isinstance(event, AttrAssignEvent) and event.attr == "grad":
        return True
    if not isinstance(event, CallEvent):
        return False
    if event.method in ("zero_grad", "zero_", "fill_") or "cleared" in event.extra:
        return True
    if isinstance(event.receiver, GradAttr):
        return True
    # (`step` may be the read of a summed `.grad`, which names no optimizer.)
    optimizer = step.extra.get("optimizer") if isinstance(step, CallEvent) else None
    if optimizer is not None and event.qualname is None and not event.followed and event is not step \
            and any(isinstance(v, ObjectRef) and v == optimizer for v in (*event.args, *event.kwargs.values())):
        return True      # code we cannot see is handed the optimizer
    return False


def _increment_measured(events, read) -> bool:
    """A `.grad` read, in the loop pass that reads the summed gradients, before the
    backward that last added to them: the code keeps the running sum to take one
    backward's share from it (`flat_grad(shared) - before`, per-task gradients
    logged between the backwards of one step), not a sum it mistakes for one."""
    upto = next((i for i, e in enumerate(events) if e is read), None)
    if upto is None:
        return False
    backwards = [i for i, e in enumerate(events[:upto]) if isinstance(e, CallEvent) and is_backward(e)]
    if not backwards:
        return False
    return any(isinstance(e, AttrReadEvent) and e.attr == "grad" for e in events[:backwards[-1]])


def _loop_of_earlier_pass(since, ctx):
    """The loop in whose earlier iteration the gradients started summing, when the
    event is in a later iteration of that same loop."""
    loops, passes = since
    for index, loop in enumerate(ctx.loops):
        if index >= len(loops):
            # Summing since before this loop (a demo step before the training loop,
            # nothing cleared after it): on a later pass, earlier passes added too.
            return next((l for l, p in zip(ctx.loops[index:], ctx.passes[index:]) if p), None)
        if loops[index] is not loop:
            return None
        if passes[index] != ctx.passes[index]:
            return loop
    return None


def _report_at_backward(events, consumer, site, at, message, fixes, loop) -> Report:
    """Report at the loop's backward, also when a helper the loop calls runs it with
    the step (a `train_step` without `zero_grad()`: the line to mend is there): the
    last one before the step or `.grad` read that uses the summed gradients (a GAN's
    discriminator loss, not the generator's), else the first; at the step or the
    read when no backward is seen. A helper that only backwards, for a step the loop
    makes itself (gradient accumulation done by the loop), is reported at the loop's
    call of it: the loop is where the clearing is missing."""
    upto = next((i for i, e in enumerate(events) if e is consumer), len(events))
    backwards = [(i, e) for i, e in enumerate(events) if isinstance(e, CallEvent) and is_backward(e)]
    before = [e for i, e in backwards if i < upto]
    backward = before[-1] if before else (backwards[0][1] if backwards else None)
    if backward is None:
        return Report(site, message, fixes, at)
    if consumer.ctx.site_in(loop) is consumer.ctx.stmt and backward.ctx.calls != consumer.ctx.calls:
        call = _call_site_in(backward, loop)
        if call is not None:
            return Report(call.node, message, fixes, call)
    return Report(backward.node, message, fixes, backward)


def _at_the_loops_call(report: Report, loop, locale: str) -> Report | None:
    """A report inside a helper the loop calls (a `train_step` that backwards and
    steps), said again at the loop's call of it: there the gradients add up, pass
    after pass, while the line to mend is in the helper."""
    at = report.at
    if at is None or isinstance(at, CallSite) or _training_loop(at.ctx) is not loop:
        # (An outer loop, over epochs, is said at the backward only: once is enough.)
        return None
    call = _call_site_in(at, loop)
    name = getattr(getattr(getattr(call, "function", None), "node", None), "name", None)
    if call is None or name is None or call.node is report.node:
        return None
    return Report(call.node, called_here(name, report.message, locale), (), call)


def _beside_the_step(report: Report, consumer, locale: str) -> Report | None:
    """A backward in a helper that the step's own function calls (`self.backward_D()`
    then `self.opt_D.step()`), said again at that call: the clearing belongs before
    it, beside the step."""
    at = report.at
    if not isinstance(at, CallEvent) or not is_backward(at) or not isinstance(consumer, CallEvent):
        return None
    site = call_toward(at, consumer)
    return said_at_call(site, report.message, locale) if site is not None else None


def _call_site_in(event, loop):
    """The call in `loop`'s own function that leads to `event`, made in a helper."""
    blocks = event.ctx.blocks
    if loop not in blocks:
        return None
    return next((b for b in blocks[blocks.index(loop) + 1:] if isinstance(b, CallSite)), None)


def _training_loop(ctx):
    """The innermost loop (not a comprehension) around an event."""
    for loop in reversed(ctx.loops):
        if not loop.is_comprehension:
            return loop
    return None


def loop_calls(loop, event) -> tuple:
    """The call chain of the function that runs `loop`, as seen from `event`."""
    blocks = event.ctx.blocks
    index = blocks.index(loop) if loop in blocks else len(blocks)
    from autograd_lsp.analysis.trace import CallSite
    return tuple(b for b in blocks[:index] if isinstance(b, CallSite))


def _event_at(trace, node):
    for event in trace.events:
        if getattr(event, "node", None) is node:
            return event
    return None


def _name_in_loop(events, loop, step) -> str | None:
    """How the loop's own code names the optimizer a step steps: the receiver of a
    step written in the loop, or an argument the loop hands to the code that steps."""
    optimizer = step.extra.get("optimizer")
    own_calls = loop_calls(loop, step)
    # `scaler.step(optimizer)`: the optimizer is the argument, not the receiver.
    by_scaler = isinstance(step.receiver, ObjectRef) and step.receiver.kind == "scaler"
    if by_scaler and not step.node.args:
        return None
    named = step.node.args[0] if by_scaler else step.node.func.value
    if step.ctx.calls == own_calls:
        return operand_text(named, step) if by_scaler else receiver_text(step.node.func, step)
    for event in events:
        if not isinstance(event, CallEvent) or event.ctx.calls != own_calls:
            continue
        for value, node in list(zip(event.args, event.node.args)) + [
                (event.kwargs.get(k.arg), k.value) for k in event.node.keywords if k.arg]:
            if isinstance(value, ObjectRef) and isinstance(optimizer, ObjectRef) and value.oid == optimizer.oid:
                return operand_text(node, event)
    if isinstance(named, ast.Attribute) and isinstance(named.value, ast.Name) \
            and named.value.id == "self" and _methods_of_same_object(loop, step):
        return source_of(named, step)
    return None


def _methods_of_same_object(loop, step) -> bool:
    from autograd_lsp.analysis.trace import CallSite
    sites = [b for b in step.ctx.blocks[step.ctx.blocks.index(loop) + 1:] if isinstance(b, CallSite)] \
        if loop in step.ctx.blocks else []
    return bool(sites) and all(isinstance(s.node.func, ast.Attribute) and isinstance(s.node.func.value, ast.Name)
                               and s.node.func.value.id == "self" for s in sites)
