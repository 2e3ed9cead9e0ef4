"""AG204 nonleaf-grad: reading `.grad` of a non-leaf tensor that does not retain it."""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Warns
from autograd_lsp.analysis.rulekit import is_tensor_backward, receiver_text
from autograd_lsp.analysis.trace import AttrReadEvent, CallEvent

WARNING = "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"


# Activations kept by a forward hook, read after a backward (Grad-CAM).
_HOOKED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
    "kept = {{}}\n"
    "def save(module, inputs, output):\n"
    "    {keep}\n"
    "model[0].register_forward_hook(save)\n"
    "out = model(torch.randn(3, 4))\n"
    "out.sum().backward()\n"
    "grads = kept['act'].grad\n"
)


class NonleafGrad(Rule):
    code = "AG204"
    name = "nonleaf-grad"
    severity = "warning"
    summary = {
        "en": ".grad of a non-leaf tensor: always None unless retain_grad() was called",
        "zh": "读取非叶子张量的 .grad：除非调用过 retain_grad()，否则永远是 None",
    }
    explanation = {
        "en": (
            "Backward fills `.grad` only for leaves: tensors made by the user with "
            "`requires_grad=True` and parameters. A tensor computed from them (`h = x * 3`, and "
            "also `w = torch.rand(3, requires_grad=True).double()`, whose dtype conversion is an "
            "op) is not a leaf, so its `.grad` stays None and torch warns `UserWarning: "
            f"{WARNING}`. Call `h.retain_grad()` before the backward, or read the leaf's "
            "`.grad`. A conversion that changes nothing (`.float()` of a float32 tensor) returns "
            "the leaf itself and is fine."
        ),
        "zh": (
            "反向传播只为叶子填充 `.grad`：用户以 `requires_grad=True` 创建的张量和模型参数。由它们计算出的张量"
            "（`h = x * 3`，以及 `w = torch.rand(3, requires_grad=True).double()`——dtype 转换也是一次运算）"
            f"不是叶子，其 `.grad` 一直是 None，torch 会警告 `UserWarning: {WARNING}`。请在 backward 之前调用 "
            "`h.retain_grad()`，或读取叶子的 `.grad`。不改变任何东西的转换（对 float32 张量调用 `.float()`）"
            "返回叶子本身，没有问题。"
        ),
    }
    messages = {
        "en": {"message": f"`{{name}}` is not a leaf (it is computed from other tensors), so its .grad "
                          f"is None; torch warns: {WARNING}",
               "fix": "Keep its gradient: {name}.retain_grad() before the backward"},
        "zh": {"message": f"`{{name}}` 不是叶子（它由其他张量计算得到），其 .grad 为 None；torch 会警告：{WARNING}",
               "fix": "保留它的梯度：在 backward 之前调用 {name}.retain_grad()"},
    }

    bad = (
        # Grad-CAM: the hook hangs on a layer found by its dotted name.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Sequential(nn.Linear(4, 8), nn.Sequential(nn.ReLU(), nn.Linear(8, 3)))\n"
            "saved = {}\n"
            "def keep(module, inputs, output):\n"
            "    saved['act'] = output\n"
            "dict(model.named_modules())['1.0'].register_forward_hook(keep)\n"
            "model(torch.randn(2, 4))[0, 1].backward()\n"
            "grads = saved['act'].grad\n",
            Warns("UserWarning", WARNING), line=10),
        Example(_HOOKED.format(keep="kept['act'] = output"), Warns("UserWarning", WARNING), line=10),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "h = x * 3\n"
            "out = (h ** 2).sum()\n"
            "out.backward()\n"
            "print('x.grad:', x.grad)\n"
            "print('h.grad:', h.grad)\n",
            Warns("UserWarning", WARNING), line=7),
        Example(
            "import torch\n"
            "w = torch.rand(3, requires_grad=True).double()\n"
            "x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)\n"
            "loss = ((w * x).sum() - 1.0) ** 2\n"
            "loss.backward()\n"
            "print('dloss/dw:', w.grad)\n",
            Warns("UserWarning", WARNING), line=6),
    )
    good = (
        # Every intermediate of a hand-written forward keeps its gradient, to check a
        # manual backward against it: more tensors than a loop unrolls, each retained.
        Example(
            "import torch\n"
            "x = torch.randn(4, 3, requires_grad=True)\n"
            "a = x * 2\n"
            "b = a + 1\n"
            "c = b.tanh()\n"
            "d = c * c\n"
            "e = d.exp()\n"
            "f = e + a\n"
            "g = f / 3\n"
            "h = g.sigmoid()\n"
            "i = h * b\n"
            "j = i - c\n"
            "k = j.abs()\n"
            "l = k + 1\n"
            "m = l.log()\n"
            "n = m * 2\n"
            "o = n.sin()\n"
            "p = o + d\n"
            "q = p * 0.5\n"
            "loss = q.sum()\n"
            "for t in [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]:\n"
            "    t.retain_grad()\n"
            "loss.backward()\n"
            "def compare(t):\n"
            "    return t.grad.abs().max().item()\n"
            "print(compare(a), compare(q))\n"),
        Example(_HOOKED.format(keep="output.retain_grad(); kept['act'] = output")),
        Example(
            # The handle took the hook off: the second forward keeps nothing, and the
            # activation kept by the first retains its gradient.
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n"
            "kept = {}\n"
            "def save(module, inputs, output):\n"
            "    kept['act'] = output\n"
            "handle = model[0].register_forward_hook(save)\n"
            "first = model(torch.randn(3, 4))\n"
            "handle.remove()\n"
            "kept['act'].retain_grad()\n"
            "first.sum().backward()\n"
            "model(torch.randn(3, 4)).sum().backward()\n"
            "grads = kept['act'].grad\n"),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0], requires_grad=True)\n"
            "y = torch.tensor([2.0], requires_grad=True)\n"
            "z = x * 3 + y + 2\n"
            "z.retain_grad()\n"
            "u = z * z\n"
            "u.backward()\n"
            "print(z.grad, x.grad, y.grad)\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "layer = nn.Linear(2, 1)\n"
            "x = torch.tensor([[1.0, 2.0]], requires_grad=True)\n"
            "out = layer(x).sum()\n"
            "out.backward()\n"
            "print(x.grad, layer.weight.grad, layer.bias.grad)\n"
            "w = torch.rand(3, requires_grad=True).float()\n"
            "(w * 2).sum().backward()\n"
            "print(w.grad)\n"),
        Example(
            "import torch\n"
            "x = torch.tensor([2.0], requires_grad=True)\n"
            "y = x ** 2\n"
            "print(y.grad_fn)\n",
            source="seed:000 1"),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0, 2.0], requires_grad=True)\n"
            "y = torch.tensor([3.0, 4.0], requires_grad=True)\n"
            "z = x * y\n"
            "out = z.sum()\n"
            "print(f'x is a leaf: {x.is_leaf}')\n"
            "print(f'z is a leaf: {z.is_leaf}')\n",
            source="seed:002 1"),
        Example(
            # The article draws this graph with torchviz's make_dot, which is not a
            # dependency here; the hover draws the same graph without running anything.
            "import torch\n"
            "x = torch.tensor([1.0], requires_grad=True)\n"
            "y = x ** 2 + x * 3\n",
            source="seed:000 3.1"),
    )

    def check(self, trace, locale):
        for event in trace.of(AttrReadEvent):
            t = event.receiver
            if event.attr != "grad" or not isinstance(t, TensorFacts) or t.is_leaf is not False \
                    or t.requires_grad is not True or t.retains_grad:
                continue
            name = receiver_text(event.node, event)
            fixes = ()
            backward = _backward_before(trace, event, t)
            # `retain_grad()` on the line before the backward's statement needs the tensor
            # to exist there: not when that statement's own forward makes it.
            if backward is not None and backward.ctx.stmt is not None and t.birth <= backward.since:
                fixes = (FixSpec(self.text("fix", locale, name=name),
                                 (Edit("line_before", backward.ctx.stmt, f"{name}.retain_grad()", backward),)),)
            yield Report(event.node, self.text("message", locale, name=name), fixes, event)


def _backward_before(trace, read: AttrReadEvent, t: TensorFacts) -> CallEvent | None:
    """The last backward before `read`, in the same function run, whose graph holds
    the leaves `t` comes from: where `t.retain_grad()` has to go."""
    found = None
    for event in trace.events:
        if event is read:
            break
        if isinstance(event, CallEvent) and is_tensor_backward(event) and t.leaves \
                and t.leaves <= event.receiver.leaves and event.ctx.calls == read.ctx.calls:
            found = event
    return found
