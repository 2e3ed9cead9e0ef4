"""AG115 grad-mode-not-called: `with torch.no_grad:` without parentheses (also
`enable_grad`, `inference_mode`, `set_grad_enabled`)."""
from __future__ import annotations

from autograd_lsp.analysis import torch_api as api
from autograd_lsp.analysis.facts import TorchName
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import source_of
from autograd_lsp.analysis.trace import WithEvent

RUNTIME = "'type' object does not support the context manager protocol"
GRAD_MODES = api.NO_GRAD_CONTEXTS | api.ENABLE_GRAD_CONTEXTS | api.SET_GRAD_ENABLED


class GradModeNotCalled(Rule):
    code = "AG115"
    name = "grad-mode-not-called"
    severity = "error"
    summary = {
        "en": "with torch.no_grad: without parentheses (also enable_grad, inference_mode)",
        "zh": "with torch.no_grad: 缺少括号（enable_grad、inference_mode 同理）",
    }
    explanation = {
        "en": (
            "`torch.no_grad`, `torch.enable_grad`, `torch.inference_mode` and "
            "`torch.set_grad_enabled` are classes; a `with` statement needs an instance. "
            "`with torch.no_grad:` hands `with` the class itself, and Python raises `TypeError: "
            f"{RUNTIME}` (`AttributeError: __enter__` before Python 3.11) before the block runs. "
            "The slip is easy because since torch 2.1 the bare class works as a decorator "
            "(`@torch.no_grad`). Call it: `with torch.no_grad():`; `set_grad_enabled` needs its "
            "mode, `with torch.set_grad_enabled(False):`."
        ),
        "zh": (
            "`torch.no_grad`、`torch.enable_grad`、`torch.inference_mode` 和 `torch.set_grad_enabled` "
            "都是类；`with` 语句需要的是实例。`with torch.no_grad:` 交给 `with` 的是类本身，Python 在执行"
            f"代码块之前就抛出 `TypeError: {RUNTIME}`（Python 3.11 之前为 `AttributeError: __enter__`）。"
            "这个笔误很常见，因为自 torch 2.1 起不带括号的类可以当作装饰器使用（`@torch.no_grad`）。"
            "请调用它：`with torch.no_grad():`；`set_grad_enabled` 需要给出模式，"
            "`with torch.set_grad_enabled(False):`。"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` is a class, not a context manager: `with` raises "
                          f"TypeError: {RUNTIME}; call it: `{{name}}(){{hint}}`",
               "mode_hint": " with a mode, e.g. (False)",
               "fix": "Call it: {name}()"},
        "zh": {"message": f"`{{name}}` 是类而不是上下文管理器：`with` 会抛出 "
                          f"TypeError: {RUNTIME}；请调用它：`{{name}}(){{hint}}`",
               "mode_hint": "，并给出模式，例如 (False)",
               "fix": "调用它：{name}()"},
    }

    bad = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 2)\n"
            "x = torch.randn(3, 4)\n"
            "with torch.no_grad:\n"
            "    y = model(x)\n",
            Raises("TypeError", RUNTIME), line=5,
            fixed=(
                "import torch\n"
                "import torch.nn as nn\n"
                "model = nn.Linear(4, 2)\n"
                "x = torch.randn(3, 4)\n"
                "with torch.no_grad():\n"
                "    y = model(x)\n")),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "def evaluate(model, loader):\n"
            "    model.eval()\n"
            "    correct = 0\n"
            "    with torch.inference_mode:\n"
            "        for images, labels in loader:\n"
            "            correct += (model(images).argmax(1) == labels).sum().item()\n"
            "    return correct / len(loader.dataset)\n"
            "data = TensorDataset(torch.randn(12, 6), torch.randint(0, 3, (12,)))\n"
            "print(evaluate(nn.Linear(6, 3), DataLoader(data, batch_size=4)))\n",
            Raises("TypeError", RUNTIME), line=7),
        Example(
            "from torch import nn, no_grad, randn\n"
            "class Predictor:\n"
            "    def __init__(self):\n"
            "        self.net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))\n"
            "    def __call__(self, x):\n"
            "        with no_grad:\n"
            "            return self.net(x)\n"
            "print(Predictor()(randn(2, 3)))\n",
            Raises("TypeError", RUNTIME), line=6),
        Example(
            # A meta-learning inner step re-enables grad inside an evaluation block.
            "import torch\n"
            "w = torch.randn(3, requires_grad=True)\n"
            "x = torch.randn(5, 3)\n"
            "with torch.no_grad():\n"
            "    baseline = (x @ w).mean()\n"
            "    with torch.enable_grad:\n"
            "        adapted = (x @ w).pow(2).mean()\n",
            Raises("TypeError", RUNTIME), line=6),
        Example(
            "import torch\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "with torch.set_grad_enabled:\n"
            "    y = x * 2\n",
            Raises("TypeError", RUNTIME), line=3),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 2)\n"
            "x = torch.randn(3, 4)\n"
            "with torch.no_grad():\n"
            "    y = model(x)\n"
            "with torch.inference_mode(), torch.enable_grad():\n"
            "    z = model(x)\n"
            "with torch.set_grad_enabled(False):\n"
            "    w = model(x)\n"),
        Example(
            # As a decorator the bare class works (since torch 2.1).
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 2)\n"
            "@torch.no_grad\n"
            "def predict(x):\n"
            "    return model(x).argmax(1)\n"
            "labels = predict(torch.randn(3, 4))\n"),
        Example(
            # A context manager of the program's own that happens to be named no_grad.
            "import torch\n"
            "class Switch:\n"
            "    def __enter__(self):\n"
            "        return self\n"
            "    def __exit__(self, *exc):\n"
            "        return False\n"
            "no_grad = Switch()\n"
            "with no_grad:\n"
            "    x = torch.ones(2)\n"),
    )

    def check(self, trace, locale):
        for event in trace.of(WithEvent):
            for item, value in zip(event.node.items, event.items):
                if not isinstance(value, TorchName) or value.qualname not in GRAD_MODES:
                    continue
                node = item.context_expr
                name = source_of(node, event)
                needs_mode = value.qualname in api.SET_GRAD_ENABLED
                message = self.text("message", locale, name=name,
                                    hint=self.text("mode_hint", locale) if needs_mode else "")
                # set_grad_enabled() without its mode raises too: which mode was meant is
                # for the author to say.
                fixes = () if needs_mode else (FixSpec(self.text("fix", locale, name=name),
                                                       (Edit("insert_after", node, "()", event),)),)
                yield Report(node, message, fixes, event)
