"""AG304 per-element-backward: one backward per element in a Python loop."""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Example, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import has_true_keyword, is_tensor_backward
from autograd_lsp.analysis.trace import AttrAssignEvent, AttrReadEvent, CallEvent


class PerElementBackward(Rule):
    code = "AG304"
    name = "per-element-backward"
    severity = "info"
    summary = {
        "en": "one backward per element in a Python loop; one vectorised backward does",
        "zh": "在 Python 循环中对每个元素各做一次 backward；一次向量化 backward 即可",
    }
    explanation = {
        "en": (
            "Calling `loss[i].backward(retain_graph=True)` for every element walks the whole "
            "graph once per element and keeps it alive between calls: n backward passes where "
            "one does. Since gradients add up, `loss.sum().backward()` gives the same `.grad` in "
            "a single vectorised pass. (For per-sample gradients, use `torch.func.vmap` with "
            "`torch.func.grad`.)"
        ),
        "zh": (
            "对每个元素调用 `loss[i].backward(retain_graph=True)` 会让每个元素都遍历一次整张计算图，"
            "并在调用之间一直保留它：本来一次就够，却做了 n 次反向传播。由于梯度是累加的，"
            "`loss.sum().backward()` 一次向量化反向传播就得到相同的 `.grad`。（需要逐样本梯度时，"
            "请用 `torch.func.vmap` 配合 `torch.func.grad`。）"
        ),
    }
    messages = {
        "en": {"message": "one backward per element of a tensor in a Python loop: "
                          "`.sum().backward()` on the whole tensor gives the same gradients in one pass"},
        "zh": {"message": "在 Python 循环中对张量的每个元素各做一次 backward："
                          "对整个张量 `.sum().backward()` 一次就得到相同的梯度"},
    }

    bad = (
        Example(
            "import torch\n"
            "batch_size = 100\n"
            "x = torch.randn(batch_size, requires_grad=True)\n"
            "loss = torch.zeros(batch_size)\n"
            "for i in range(batch_size):\n"
            "    loss[i] = x[i]**2\n"
            "    loss[i].backward(retain_graph=True)\n",
            # The article uses 1000 elements (7.7 s here, quadratic in the length: each
            # element's backward walks the chain of earlier index assignments).
            Silent("torch.allclose(x.grad, 2 * x.detach())",
                   "100 backward passes compute what one vectorised pass does"),
            line=7, source="seed:002 5.2"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "x, y = torch.randn(8, 4), torch.randn(8, 2)\n"
            "optimizer.zero_grad()\n"
            "per_sample = ((model(x) - y) ** 2).mean(dim=1)\n"
            "for i, sample_loss in enumerate(per_sample):\n"
            "    sample_loss.backward(retain_graph=True)\n"
            "optimizer.step()\n",
            Silent("model.weight.grad is not None", "eight backward passes for one gradient"),
            line=9),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 2)\n"
            "per_sample = (model(torch.randn(8, 4)) ** 2).mean(dim=1)\n"
            "for i in range(8):\n"
            "    (per_sample[i] / 8).backward(retain_graph=True)\n",
            Silent("model.weight.grad is not None", "eight backward passes for one gradient"),
            line=6),
        # Online hard example mining: the hardest losses picked by index, then one
        # backward each.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(6, 3)\n"
            "x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))\n"
            "per_sample = F.cross_entropy(model(x), y, reduction='none')\n"
            "hard = per_sample.detach().topk(4).indices\n"
            "for i in hard.tolist():\n"
            "    (per_sample[i] / len(hard)).backward(retain_graph=True)\n",
            Silent("torch.allclose(model.weight.grad, torch.autograd.grad("
                   "per_sample[hard].sum() / 4, model.weight)[0])",
                   "four backward passes for the gradient one pass over the four gives"),
            line=10),
    )
    good = (
        # One saliency map per class: each backward's own input gradient is read and
        # cleared before the next, which one backward of the sum could not give.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))\n"
            "image = torch.randn(1, 1, 4, 4, requires_grad=True)\n"
            "scores = model(image)\n"
            "maps = []\n"
            "for c in range(3):\n"
            "    if image.grad is not None:\n"
            "        image.grad.zero_()\n"
            "    scores[0, c].backward(retain_graph=c < 2)\n"
            "    maps.append(image.grad.abs().clone())\n"),
        Example(
            "import torch\n"
            "batch_size = 1000\n"
            "x = torch.randn(batch_size, requires_grad=True)\n"
            "loss = x**2\n"
            "loss.sum().backward()\n",
            source="seed:002 5.2"),
        Example(
            "import torch\n"
            "xs = [torch.randn(3, requires_grad=True) for _ in range(4)]\n"
            "for x in xs:\n"
            "    (x ** 2).sum().backward()\n"),
        # A target computed before the loop (neural style transfer) beside slices of the
        # optimised image: one backward per iteration, no element in it.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())\n"
            "target = net(torch.rand(1, 3, 10, 10))\n"
            "image = torch.rand(1, 3, 10, 10, requires_grad=True)\n"
            "opt = torch.optim.Adam([image], lr=0.01)\n"
            "for step in range(3):\n"
            "    tv = (image[:, :, 1:, :] - image[:, :, :-1, :]).abs().mean()\n"
            "    loss = F.mse_loss(net(image), target) + tv\n"
            "    opt.zero_grad()\n"
            "    loss.backward(retain_graph=True)\n"
            "    opt.step()\n"),
    )

    def check(self, trace, locale):
        parts: dict = {}
        for event in trace.differentiations():
            loop = event.ctx.loop
            if loop is None or not is_tensor_backward(event):
                continue
            target: TensorFacts = event.receiver
            if target.requires_grad is False or _reads_gradients_each_time(trace, loop):
                continue
            # An element of one tensor made before the loop: one backward each where a
            # single one over the whole tensor does.
            if target.element_of is not None and target.made_in_loop is loop \
                    and target.base_made_in is not loop and target.base_made_in not in event.ctx.loops[
                        event.ctx.loops.index(loop):]:
                yield Report(event.node, self.text("message", locale), (), event)
                continue
            # A part of one graph built before the loop, another part each iteration, the
            # graph kept for the next: the same, spelt with retain_graph.
            if has_true_keyword(event, "retain_graph") and any(loop.predates(n) for n in target.saved_nodes):
                parts.setdefault((loop, event.node), []).append(event)
        for (loop, node), events in parts.items():
            tids = {e.receiver.tid for e in events}
            # Elements count when the part built before the loop is reached through them
            # (`(per_sample[i] / n).backward(...)`); a slice or a view does not (a total
            # variation term of the input, the Gram matrix of a target made before the loop).
            varies = len(tids) > 1 or any(isinstance(t, tuple) and t and t[0] == "join" for t in tids) \
                or any(loop.predates(n) for e in events for n in e.receiver.element_nodes)
            if varies:
                yield Report(node, self.text("message", locale), (), events[0])


def _reads_gradients_each_time(trace, loop) -> bool:
    """The loop reads or clears gradients between its backwards (a saliency map or a
    Jacobian row per element): each element's own gradient is wanted, which one
    backward of the sum cannot give."""
    return any((isinstance(e, (AttrReadEvent, AttrAssignEvent)) and e.attr == "grad")
               or (isinstance(e, CallEvent) and e.method == "zero_grad")
               for e in trace.inside(loop, first_pass=False))
