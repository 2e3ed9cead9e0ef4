"""AG208 method-not-called: `optimizer.zero_grad`, `model.eval`, `loss.backward`...
as a statement without parentheses: the method is looked up and never run."""
from __future__ import annotations

from autograd_lsp.analysis.facts import MethodOf, ObjectRef, TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import source_of
from autograd_lsp.analysis.trace import BareExpressionEvent

# torch's methods whose call is the whole point of the statement, by the kind of value.
METHODS = {
    "optimizer": ("zero_grad", "step"),
    "module": ("zero_grad", "eval", "train"),
    "tensor": ("backward",),
}


class MethodNotCalled(Rule):
    code = "AG208"
    name = "method-not-called"
    severity = "warning"
    summary = {
        "en": "optimizer.zero_grad, model.eval, loss.backward... without parentheses: nothing happens",
        "zh": "optimizer.zero_grad、model.eval、loss.backward 等缺少括号：什么也不会发生",
    }
    explanation = {
        "en": (
            "A method named without parentheses is only looked up: `optimizer.zero_grad` as a "
            "statement is valid Python and does nothing. The gradients are then never cleared "
            "and each backward adds to the last (grads 2, 4, 6 ...); `model.eval` leaves dropout "
            "active and batch norm on batch statistics during evaluation; `model.train` leaves "
            "an evaluated model in evaluation mode while it trains; `optimizer.step` never "
            "updates the parameters; `loss.backward` computes no gradient. Nothing raises. "
            "Add the parentheses."
        ),
        "zh": (
            "不带括号的方法名只是被查找：作为语句的 `optimizer.zero_grad` 是合法的 Python，却什么也不做。"
            "于是梯度从不被清零，每次 backward 都累加到上一次的结果上（梯度 2、4、6……）；`model.eval` "
            "使评估时 dropout 仍然生效、batch norm 仍用批统计量；`model.train` 让评估过的模型在训练时仍处于"
            "评估模式；`optimizer.step` 从不更新参数；`loss.backward` 不计算任何梯度。不会有任何报错。"
            "请加上括号。"
        ),
    }
    messages = {
        "en": {"zero_grad": "`{name}` without parentheses does nothing: gradients are never cleared, "
                            "so each backward adds to the last",
               "step": "`{name}` without parentheses does nothing: the parameters are never updated",
               "eval": "`{name}` without parentheses does nothing: the model stays in training mode "
                       "(dropout active, batch norm on batch statistics)",
               "train": "`{name}` without parentheses does nothing: the model does not return to "
                        "training mode",
               "backward": "`{name}` without parentheses does nothing: no gradient is computed",
               "fix": "Call it: {name}()"},
        "zh": {"zero_grad": "不带括号的 `{name}` 什么也不做：梯度从不被清零，每次 backward 都累加到上一次上",
               "step": "不带括号的 `{name}` 什么也不做：参数从不被更新",
               "eval": "不带括号的 `{name}` 什么也不做：模型仍处于训练模式（dropout 生效，batch norm 用批统计量）",
               "train": "不带括号的 `{name}` 什么也不做：模型不会回到训练模式",
               "backward": "不带括号的 `{name}` 什么也不做：不会计算任何梯度",
               "fix": "调用它：{name}()"},
    }

    bad = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
            "x, y = torch.randn(16, 3), torch.randn(16, 1)\n"
            "grad_norms = []\n"
            "for epoch in range(4):\n"
            "    optimizer.zero_grad\n"
            "    loss = nn.functional.mse_loss(model(x), y)\n"
            "    loss.backward()\n"
            "    grad_norms.append(model.weight.grad.norm().item())\n"
            "    optimizer.step()\n",
            Silent("grad_norms[3] > 3 * grad_norms[0]", "the gradients add up: 1, 2, 3, 4 times"),
            line=8),
        Example(
            # The shape of a 0.3-era MNIST script: model and optimizer at module level,
            # a train(epoch) function using them.
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.autograd import Variable\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super(Net, self).__init__()\n"
            "        self.fc1 = nn.Linear(20, 16)\n"
            "        self.fc2 = nn.Linear(16, 4)\n"
            "    def forward(self, x):\n"
            "        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)\n"
            "model = Net()\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.5)\n"
            "inputs, labels = torch.randn(8, 20), torch.randint(0, 4, (8,))\n"
            "batches = [(inputs, labels)] * 4\n"
            "norms = []\n"
            "def train(epoch):\n"
            "    model.train()\n"
            "    for batch_idx, (data, target) in enumerate(batches):\n"
            "        data, target = Variable(data), Variable(target)\n"
            "        optimizer.zero_grad\n"
            "        output = model(data)\n"
            "        loss = F.nll_loss(output, target)\n"
            "        loss.backward()\n"
            "        norms.append(model.fc1.weight.grad.norm().item())\n"
            "        optimizer.step()\n"
            "train(1)\n",
            Silent("norms[3] > 3 * norms[0]", "each batch's gradient is added to the last ones"),
            line=21),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "net = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.Linear(6, 2))\n"
            "x = torch.randn(4, 6)\n"
            "net.eval\n"
            "with torch.no_grad():\n"
            "    first, second = net(x), net(x)\n",
            Silent("net.training and not torch.equal(first, second)",
                   "dropout is still active: two evaluations of one input differ"), line=5),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "class Trainer(object):\n"
            "    def __init__(self, model):\n"
            "        self.model = model\n"
            "        self.grad_norms = []\n"
            "    def fit(self, x, y, epochs=3):\n"
            "        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)\n"
            "        for _ in range(epochs):\n"
            "            optimizer.zero_grad\n"
            "            loss = F.mse_loss(self.model(x), y)\n"
            "            loss.backward()\n"
            "            self.grad_norms.append(self.model.weight.grad.norm().item())\n"
            "            optimizer.step()\n"
            "trainer = Trainer(nn.Linear(2, 1))\n"
            "trainer.fit(torch.randn(10, 2), torch.randn(10, 1))\n",
            Silent("trainer.grad_norms[2] > 2 * trainer.grad_norms[0]",
                   "the third epoch steps with the sum of three gradients"), line=11),
        Example(
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "opt = torch.optim.SGD([w], lr=0.1)\n"
            "before = w.detach().clone()\n"
            "loss = (w ** 2).sum()\n"
            "loss.backward\n"
            "opt.step()\n",
            Silent("w.grad is None and torch.equal(w.detach(), before)",
                   "no gradient, so the step changes nothing"), line=6,
            fixed=(
                "import torch\n"
                "w = torch.randn(3, requires_grad=True)\n"
                "opt = torch.optim.SGD([w], lr=0.1)\n"
                "before = w.detach().clone()\n"
                "loss = (w ** 2).sum()\n"
                "loss.backward()\n"
                "opt.step()\n")),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(2, 1)\n"
            "opt = torch.optim.Adam(model.parameters(), lr=0.1)\n"
            "before = model.weight.detach().clone()\n"
            "opt.zero_grad()\n"
            "model(torch.randn(5, 2)).pow(2).mean().backward()\n"
            "opt.step\n",
            Silent("torch.equal(model.weight.detach(), before)", "the weights never move"), line=8),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))\n"
            "model.eval()\n"
            "with torch.no_grad():\n"
            "    model(torch.randn(8, 4))\n"
            "model.train\n"
            "model(torch.randn(8, 4) + 3).sum().backward()\n",
            Silent("not model.training and float(model[1].running_mean.abs().max()) == 0.0",
                   "still in evaluation mode: batch norm never updates its statistics"), line=7),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)\n"
            "for epoch in range(2):\n"
            "    optimizer.zero_grad()\n"
            "    model(torch.randn(4, 3)).sum().backward()\n"
            "    optimizer.step()\n"
            "model.eval()\n"
            "print(model.training)\n"),
        Example(
            # Callbacks of a small trainer: the methods are handed over, called later.
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(3, 1)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "before_step, after_epoch = [], []\n"
            "def register_hook(hooks, fn):\n"
            "    hooks.append(fn)\n"
            "register_hook(before_step, opt.zero_grad)\n"
            "register_hook(after_epoch, model.eval)\n"
            "switch = model.train\n"
            "for fn in before_step:\n"
            "    fn()\n"
            "switch()\n"),
        Example(
            # An environment wrapper of the program's own whose modes are properties.
            "import torch\n"
            "class Env:\n"
            "    def __init__(self):\n"
            "        self.mode = 'train'\n"
            "    @property\n"
            "    def eval(self):\n"
            "        self.mode = 'eval'\n"
            "        return self\n"
            "env = Env()\n"
            "env.eval\n"
            "state = torch.zeros(4)\n"),
        Example(
            "import torch\n"
            "def evaluate(model, x):\n"
            "    model.eval()\n"
            "    with torch.no_grad():\n"
            "        return model(x)\n"
            "loss = torch.randn(3, requires_grad=True).sum()\n"
            "backward = loss.backward\n"
            "backward()\n"),
    )

    def check(self, trace, locale):
        for event in trace.of(BareExpressionEvent):
            method = event.value
            if not isinstance(method, MethodOf) or method.name not in METHODS.get(_kind(method.receiver), ()):
                continue
            node = event.node.value
            name = source_of(node, event)
            yield Report(node, self.text(method.name, locale, name=name),
                         (FixSpec(self.text("fix", locale, name=name),
                                  (Edit("insert_after", node, "()", event),)),), event)


def _kind(value) -> str | None:
    if isinstance(value, TensorFacts):
        return "tensor"
    return value.kind if isinstance(value, ObjectRef) else None
