"""AG207 volatile-noop: `Variable(x, volatile=True)`, the way to evaluate without
a graph before torch 0.4, which now does nothing."""
from __future__ import annotations

import ast

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent, Warns
from autograd_lsp.analysis.rulekit import (enclosing_block, has_true_keyword, names_bound, names_read, torch_name,
                              without_keyword)
from autograd_lsp.analysis.trace import CallEvent

RUNTIME = "volatile was removed and now has no effect"
# Calls of code that trains: it needs the graph, so it must not move under no_grad.
_TRAINING_METHODS = {"backward", "step", "zero_grad", "grad"}


class VolatileNoop(Rule):
    code = "AG207"
    name = "volatile-noop"
    severity = "warning"
    summary = {
        "en": "Variable(x, volatile=True) does nothing since torch 0.4: the graph is built",
        "zh": "自 torch 0.4 起 Variable(x, volatile=True) 不起作用：计算图照样被构建",
    }
    explanation = {
        "en": (
            "Before torch 0.4, `Variable(x, volatile=True)` marked an input for inference: "
            "nothing computed from it recorded a graph. torch 0.4 merged `Variable` into "
            "`Tensor` and removed `volatile`; the keyword is ignored with a UserWarning "
            f"(`{RUNTIME}`), and the evaluation now records a graph through the model's "
            "parameters, holding every activation in memory until its outputs are dropped. "
            "Compute the evaluation under `with torch.no_grad():` (or `torch.inference_mode()`) "
            "and drop the keyword; inside such a block the keyword only adds the warning."
        ),
        "zh": (
            "在 torch 0.4 之前，`Variable(x, volatile=True)` 把输入标记为推理用：由它计算出的任何结果"
            "都不记录计算图。torch 0.4 把 `Variable` 并入 `Tensor` 并移除了 `volatile`；该关键字被忽略，"
            f"只给出 UserWarning（`{RUNTIME}`），评估过程会经由模型参数照常记录计算图，所有激活值都留在"
            "内存中，直到输出被释放。请在 `with torch.no_grad():`（或 `torch.inference_mode()`）下进行"
            "评估并删去该关键字；在这样的块中，该关键字只会多出一条警告。"
        ),
    }
    messages = {
        "en": {"message": f"`volatile=True` does nothing since torch 0.4 (torch warns: {RUNTIME}): "
                          "what is computed from this value records a graph as usual; evaluate "
                          "under `with torch.no_grad():`",
               "inside": f"`volatile=True` does nothing since torch 0.4 (torch warns: {RUNTIME}); "
                         "this code already runs under no_grad, so the keyword can go",
               "fix_wrap": "Drop volatile= and evaluate under with torch.no_grad():",
               "fix_drop": "Drop volatile="},
        "zh": {"message": f"自 torch 0.4 起 `volatile=True` 不起作用（torch 警告：{RUNTIME}）："
                          "由这个值计算出的结果照常记录计算图；请在 `with torch.no_grad():` 下评估",
               "inside": f"自 torch 0.4 起 `volatile=True` 不起作用（torch 警告：{RUNTIME}）；"
                         "这段代码已在 no_grad 下运行，可以删去该关键字",
               "fix_wrap": "删去 volatile= 并在 with torch.no_grad(): 下评估",
               "fix_drop": "删去 volatile="},
    }

    bad = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.autograd import Variable\n"
            "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
            "x_test = Variable(torch.randn(5, 4), volatile=True)\n"
            "y_test = model(x_test)\n"
            "predicted = y_test.argmax(1)\n",
            Warns("UserWarning", RUNTIME), line=5),
        Example(
            # The test function of a 0.3-era MNIST script, brought up to date except
            # for the volatile input.
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.autograd import Variable\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "def test(model, loader):\n"
            "    model.eval()\n"
            "    test_loss, correct = 0.0, 0\n"
            "    for data, target in loader:\n"
            "        data, target = Variable(data, volatile=True), Variable(target)\n"
            "        output = model(data)\n"
            "        test_loss += F.nll_loss(output, target, reduction='sum').item()\n"
            "        pred = output.max(1, keepdim=True)[1]\n"
            "        correct += pred.eq(target.view_as(pred)).sum().item()\n"
            "    test_loss /= len(loader.dataset)\n"
            "    return test_loss, correct\n"
            "net = nn.Sequential(nn.Linear(6, 3), nn.LogSoftmax(dim=1))\n"
            "data = TensorDataset(torch.randn(10, 6), torch.randint(0, 3, (10,)))\n"
            "print(test(net, DataLoader(data, batch_size=5)))\n",
            Warns("UserWarning", RUNTIME), line=10),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "from torch.autograd import Variable\n"
            "class Trainer(object):\n"
            "    def __init__(self, model, val_x, val_y):\n"
            "        self.model, self.val_x, self.val_y = model, val_x, val_y\n"
            "    def validate(self):\n"
            "        self.model.eval()\n"
            "        inputs = Variable(self.val_x, volatile=True).view(-1, 3)\n"
            "        outputs = self.model(inputs)\n"
            "        self.val_loss = F.mse_loss(outputs, self.val_y).item()\n"
            "        self.model.train()\n"
            "        return outputs\n"
            "trainer = Trainer(nn.Linear(3, 1), torch.randn(6, 3), torch.randn(6, 1))\n"
            "outputs = trainer.validate()\n",
            Silent("outputs.requires_grad and outputs.grad_fn is not None",
                   "the validation outputs carry a graph"), line=10),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.autograd import Variable\n"
            "encoder = nn.Linear(8, 4)\n"
            "with torch.no_grad():\n"
            "    codes = encoder(Variable(torch.randn(3, 8), volatile=True))\n",
            Warns("UserWarning", RUNTIME), line=6,
            fixed=(
                "import torch\n"
                "import torch.nn as nn\n"
                "from torch.autograd import Variable\n"
                "encoder = nn.Linear(8, 4)\n"
                "with torch.no_grad():\n"
                "    codes = encoder(Variable(torch.randn(3, 8)))\n")),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.autograd import Variable\n"
            "model = nn.Linear(4, 2)\n"
            "with torch.no_grad():\n"
            "    y_test = model(Variable(torch.randn(5, 4)))\n"
            "w = Variable(torch.randn(4), requires_grad=True)\n"),
        Example(
            # A symbolic toy library of the program's own with its own Variable.
            "import torch\n"
            "class Variable:\n"
            "    def __init__(self, name, volatile=False):\n"
            "        self.name, self.volatile = name, volatile\n"
            "t = Variable('t', volatile=True)\n"
            "x = torch.ones(2)\n"),
    )

    def check(self, trace, locale):
        seen = set()
        for event in trace.calls():
            if event.qualname not in api.VARIABLE_CLASSES or not has_true_keyword(event, "volatile") \
                    or id(event.node) in seen:
                continue
            # A loop body is walked more than once: one report per call (and one search
            # for its block).
            seen.add(id(event.node))
            keyword = next(kw for kw in event.node.keywords if kw.arg == "volatile")
            drop = Edit("replace", event.node, without_keyword(event.node, "volatile", event), event)
            if event.ctx.no_grad is True:
                yield Report(keyword, self.text("inside", locale),
                             (FixSpec(self.text("fix_drop", locale), (drop,)),), event)
                continue
            run = _evaluation(trace, event)
            if run is not None:
                wrap = Edit("wrap_run", run[0], f"with {torch_name(trace)}.no_grad():", event,
                            through=run[-1])
                fix = FixSpec(self.text("fix_wrap", locale), (drop, wrap))
            else:
                fix = FixSpec(self.text("fix_drop", locale), (drop,), safe=False)
            yield Report(keyword, self.text("message", locale), (fix,), event)


def _evaluation(trace, event: CallEvent):
    """The statements to move under no_grad: from the one holding the `Variable`
    call (or, when that one only wraps inputs, the first that uses them) through
    the last statement of its block that uses what they compute. None when they train, or when the
    block cannot be re-indented safely."""
    stmt, source = event.ctx.stmt, event.ctx.source
    if trace.torch_name is None or stmt is None or source is None or source.tree is None:
        return None
    block = enclosing_block(source.tree, stmt)
    if block is None:
        return None
    index = next(i for i, s in enumerate(block) if s is stmt)
    computed, readers = names_bound(stmt), []
    for later in range(index + 1, len(block)):
        if isinstance(block[later], (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        if names_read(block[later]) & computed:
            computed |= names_bound(block[later])
            readers.append(later)
    if not _only_wraps(stmt, event.node):
        readers.insert(0, index)
    run = block[readers[0]:readers[-1] + 1] if readers else []
    if not run or any(_trains_or_spans_lines(node) for s in run for node in ast.walk(s)):
        return None
    return run


def _trains_or_spans_lines(node) -> bool:
    """A call that trains (`backward`, `step`, `zero_grad`, `autograd.grad`), or a
    string over several lines (re-indenting would change what it holds)."""
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in _TRAINING_METHODS
    return isinstance(node, (ast.Constant, ast.JoinedStr)) and node.end_lineno != node.lineno \
        and (isinstance(node, ast.JoinedStr) or isinstance(node.value, (str, bytes)))


def _only_wraps(stmt, call: ast.Call) -> bool:
    """`x = Variable(x, volatile=True).cuda()` or `x, y = Variable(x, ...), Variable(y)`:
    the statement only wraps inputs, computing nothing that could record a graph."""
    if not isinstance(stmt, ast.Assign):
        return False
    value = stmt.value
    parts = value.elts if isinstance(value, ast.Tuple) else [value]
    wrapper = ast.dump(call.func)
    return all(isinstance(root, ast.Call) and ast.dump(root.func) == wrapper
               for root in map(_input_root, parts))


# Tensor methods that move, cast or reshape one tensor and mix in no other.
_LAYOUT_METHODS = {"cuda", "cpu", "to", "type", "float", "double", "half", "long", "int",
                   "view", "reshape", "transpose", "permute", "contiguous", "squeeze",
                   "unsqueeze", "t"}


def _input_root(node):
    """`Variable(x).cuda()[:100] / 255.` -> `Variable(x)`: what an input expression
    is made from when it only moves, casts, slices or scales one tensor."""
    while True:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _LAYOUT_METHODS:
            node = node.func.value
        elif isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.BinOp) and isinstance(node.right, ast.Constant) \
                and isinstance(node.right.value, (int, float)):
            node = node.left
        else:
            return node
