"""AG102 double-backward: a second backward through a graph whose saved
tensors the first backward freed."""
from __future__ import annotations

import ast

from autograd_lsp.analysis.facts import TensorFacts, TupleValue
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Raises, Report, Rule
from autograd_lsp.analysis.rulekit import backward_target, source_of, target_node, with_keyword
from autograd_lsp.analysis.trace import CallEvent

RUNTIME = "Trying to backward through the graph a second time"


# A recurrent net whose hidden state goes from one batch to the next.
_CARRIED = (
    "import torch\n"
    "import torch.nn as nn\n"
    "rnn, head = nn.GRU(3, 5, batch_first=True), nn.Linear(5, 1)\n"
    "opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)\n"
    "h = None\n"
    "for step in range(3):\n"
    "    x, y = torch.randn(2, 4, 3), torch.randn(2, 4, 1)\n"
    "    out, h = rnn(x, h)\n"
    "{cut}"
    "    loss = (head(out) - y).pow(2).mean()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
)


# A policy-gradient update over a rollout kept in a dataclass buffer.
_ROLLOUT = (
    "from dataclasses import dataclass, field\n"
    "import torch\n"
    "from torch.distributions import Categorical\n"
    "@dataclass\n"
    "class Rollout:\n"
    "    log_probs: list = field(default_factory=list)\n"
    "    def add(self, log_prob):\n"
    "        self.log_probs.append(log_prob)\n"
    "policy = torch.nn.Linear(4, 3)\n"
    "opt = torch.optim.Adam(policy.parameters())\n"
    "rollout = Rollout()\n"
    "obs = torch.randn(5, 4)\n"
    "for t in range(3):\n"
    "    dist = Categorical(logits=policy(obs))\n"
    "    action = dist.sample()\n"
    "    rollout.add({kept})\n"
    "old_log_probs = torch.stack(rollout.log_probs)\n"
    "for epoch in range(2):\n"
    "    ratio = torch.exp(Categorical(logits=policy(obs)).log_prob(action) - old_log_probs)\n"
    "    loss = -ratio.mean()\n"
    "    opt.zero_grad()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
)


class DoubleBackward(Rule):
    code = "AG102"
    name = "double-backward"
    severity = "error"
    summary = {
        "en": "second backward through a graph the first backward already freed",
        "zh": "对已被上一次 backward 释放的计算图再次 backward",
    }
    explanation = {
        "en": (
            "A backward pass frees the tensors the graph saved for it (inputs of `mul`, "
            "`pow`, `matmul`, outputs of `tanh`, `sigmoid`, `exp`...), unless it is called "
            "with `retain_graph=True`. A second backward through any part of that graph "
            f"raises `RuntimeError: {RUNTIME}`. Two losses sharing a trunk, or a graph built "
            "once before a loop and backwarded in every iteration, are the usual causes. "
            "Recompute the forward pass for each backward, sum the losses and call backward "
            "once, or pass `retain_graph=True` to the earlier backward (its memory then stays "
            "held until the graph is dropped)."
        ),
        "zh": (
            "反向传播会释放计算图为它保存的张量（`mul`、`pow`、`matmul` 的输入，`tanh`、`sigmoid`、"
            "`exp` 的输出……），除非调用时传入 `retain_graph=True`。再次经过该图任何部分的 backward "
            f"都会抛出 `RuntimeError: {RUNTIME}`。常见原因：两个损失共享同一主干，或在循环外建图、"
            "在循环内每次 backward。请为每次 backward 重新前向计算、把损失相加后只 backward 一次，"
            "或给前一次 backward 传入 `retain_graph=True`（其显存会一直占用到图被丢弃）。"
        ),
    }
    messages = {
        "en": {
            "again": f"the graph of `{{name}}` was freed by an earlier backward without "
                     f"retain_graph=True: this raises RuntimeError: {RUNTIME}",
            "loop": f"`{{name}}` was built before the loop; the first iteration's backward frees "
                    f"its graph, so the second raises RuntimeError: {RUNTIME}",
            "carried": f"`{{name}}` is passed back in with the previous iteration's graph, which "
                       f"that iteration's backward freed: this raises RuntimeError: {RUNTIME}",
            "fix_detach": "Cut the graph between iterations: {name}",
            "fix_retain": "Keep the graph: retain_graph=True on the earlier backward (memory stays held)",
            "fix_retain_here": "Keep the graph: retain_graph=True (memory stays held; recomputing "
                               "the forward in the loop is usually what you want)",
        },
        "zh": {
            "again": f"`{{name}}` 的计算图已被之前一次不带 retain_graph=True 的 backward 释放："
                     f"这里会抛出 RuntimeError: {RUNTIME}",
            "loop": f"`{{name}}` 在循环之前构建；第一次迭代的 backward 释放了它的图，第二次会抛出 "
                    f"RuntimeError: {RUNTIME}",
            "carried": f"`{{name}}` 带着上一次迭代的计算图被传回，而那次迭代的 backward 已释放了它："
                       f"这里会抛出 RuntimeError: {RUNTIME}",
            "fix_detach": "在迭代之间切断计算图：{name}",
            "fix_retain": "保留计算图：给前一次 backward 加 retain_graph=True（显存会一直占用）",
            "fix_retain_here": "保留计算图：retain_graph=True（显存会一直占用；通常应在循环内重新前向计算）",
        },
    }

    bad = (
        # Features computed once by a trainable stem, then served by a DataLoader: every
        # batch backwards through the stem's graph, which the first batch freed.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.utils.data import DataLoader, TensorDataset\n"
            "stem, head = nn.Linear(6, 4), nn.Linear(4, 2)\n"
            "feats = stem(torch.randn(32, 6))\n"
            "loader = DataLoader(TensorDataset(feats, torch.randint(0, 2, (32,))), batch_size=8)\n"
            "opt = torch.optim.Adam([*stem.parameters(), *head.parameters()], lr=1e-3)\n"
            "for xb, yb in loader:\n"
            "    opt.zero_grad()\n"
            "    loss = nn.functional.cross_entropy(head(xb), yb)\n"
            "    loss.backward()\n"
            "    opt.step()\n",
            Raises("RuntimeError", RUNTIME), line=11),
        # A cross-batch memory of live embeddings: the last batch's, whose graph its
        # backward freed, is used as negatives by the next batch's loss.
        Example(
            "from collections import deque\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "memory = deque(maxlen=4)\n"
            "model = nn.Linear(3, 2)\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for step in range(3):\n"
            "    feats = model(torch.randn(4, 3))\n"
            "    loss = feats.pow(2).sum()\n"
            "    if memory:\n"
            "        loss = loss + (feats @ torch.cat(list(memory)).t()).sum()\n"
            "    opt.zero_grad()\n"
            "    loss.backward()\n"
            "    opt.step()\n"
            "    memory.append(feats)\n",
            Raises("RuntimeError", RUNTIME), line=13),
        Example(_CARRIED.format(cut=""), Raises("RuntimeError", RUNTIME), line=11, column=5,
                fixed=_CARRIED.format(cut="    h = h.detach()\n")),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0], requires_grad=True)\n"
            "y = x ** 2\n"
            "y.backward()\n"
            "y.backward()\n",
            Raises("RuntimeError", RUNTIME), line=5, source="seed:000 2.2"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "trunk = nn.Linear(4, 8)\n"
            "head_a, head_b = nn.Linear(8, 1), nn.Linear(8, 1)\n"
            "x = torch.randn(5, 4)\n"
            "h = torch.tanh(trunk(x))\n"
            "loss_a = head_a(h).pow(2).mean()\n"
            "loss_b = head_b(h).abs().mean()\n"
            "loss_a.backward()\n"
            "loss_b.backward()\n",
            Raises("RuntimeError", RUNTIME), line=10),
        Example(
            "import torch\n"
            "w = torch.tensor(2.0, requires_grad=True)\n"
            "x = torch.tensor(3.0)\n"
            "y = (w * x) ** 2\n"
            "grads = []\n"
            "for epoch in range(3):\n"
            "    y.backward()\n"
            "    grads.append(w.grad.item())\n"
            "    w.grad = None\n",
            Raises("RuntimeError", RUNTIME), line=7),
        Example(
            "import torch\n"
            "def two_grads(w):\n"
            "    w = w.detach().requires_grad_()\n"
            "    y = torch.sin(w) * 3\n"
            "    g1 = torch.autograd.grad(y.sum(), w)\n"
            "    g2 = torch.autograd.grad(y.sum(), w)\n"
            "    return g1, g2\n"
            "two_grads(torch.ones(3))\n",
            Raises("RuntimeError", RUNTIME), line=6),
        # PPO keeps the rollout's log-probabilities, with their graph, in a buffer, and
        # backwards through them in every epoch of the update.
        Example(_ROLLOUT.format(kept="dist.log_prob(action)"),
                Raises("RuntimeError", RUNTIME), line=22),
    )
    good = (
        Example(_ROLLOUT.format(kept="dist.log_prob(action).detach()")),
        Example(_CARRIED.format(cut="    h = h.detach()\n")),
        Example(
            "import torch\n"
            "x = torch.tensor(1.0, requires_grad=True)\n"
            "y = x**2\n"
            "y.backward(retain_graph=True)\n"
            "print(x.grad)\n"
            "y.backward()\n"
            "print(x.grad)\n",
            source="seed:002 5.1"),
        Example(
            "import torch\n"
            "x = torch.tensor([1.0], requires_grad=True)\n"
            "y = x ** 2\n"
            "y.backward(retain_graph=True)\n"
            "y.backward()\n",
            source="seed:000 2.2"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "trunk = nn.Linear(4, 8)\n"
            "head_a, head_b = nn.Linear(8, 1), nn.Linear(8, 1)\n"
            "x = torch.randn(5, 4)\n"
            "h = torch.sigmoid(trunk(x))\n"
            "loss_a = head_a(h).pow(2).mean()\n"
            "loss_b = head_b(h).abs().mean()\n"
            "loss_a.backward(retain_graph=True)\n"
            "loss_b.backward()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "G, D = nn.Linear(2, 4), nn.Linear(4, 1)\n"
            "z = torch.randn(8, 2)\n"
            "real = torch.randn(8, 4)\n"
            "fake = G(z)\n"
            "loss_d = D(real).mean() - D(fake.detach()).mean()\n"
            "loss_d.backward()\n"
            "loss_g = -D(fake).mean()\n"
            "loss_g.backward()\n"),
        Example(
            "import torch\n"
            "w = torch.tensor(2.0, requires_grad=True)\n"
            "for epoch in range(3):\n"
            "    y = (w * 3.0) ** 2\n"
            "    y.backward()\n"
            "    w.grad = None\n"
            "z = w.sum()\n"
            "z.backward()\n"
            "z.backward()\n"),
        Example(
            "import torch\n"
            "x = torch.tensor(3.0, requires_grad=True)\n"
            "y = x ** 3\n"
            "g = torch.autograd.grad(y, x, create_graph=True)[0]\n"
            "g.backward()\n"
            "y2 = x ** 2\n"
            "(g2,) = torch.autograd.grad(y2, x, create_graph=True)\n"
            "y2.backward()\n"),
    )

    def check(self, trace, locale):
        for event in trace.calls():
            target = backward_target(event)
            freed = [n for n in target.saved_nodes if n in event.freed] if target is not None else []
            if not freed:
                continue
            name = source_of(target_node(event), event)
            loop = event.ctx.loop
            from_outside = loop is not None and target.made_in_loop is not loop \
                and target.made_in_loop not in event.ctx.loops
            earlier = event.freed[freed[0]]
            carried = None if from_outside else _carried_argument(trace, event, set(freed))
            if carried is not None:
                # A hidden state fed back with its graph (`out, h = rnn(x, h)`): the
                # backward raises, the fix is where the state is passed on, and
                # retain_graph=True would only reach further back into graphs the
                # optimizer has since changed.
                call, node, value = carried
                detach = _detach_line(call, node, value)
                fixes = () if detach is None else (
                    FixSpec(self.text("fix_detach", locale, name=detach),
                            (Edit("line_after", call.ctx.stmt, detach, call),)),)
                yield Report(event.node, self.text("carried", locale, name=source_of(node, call)), fixes, event)
                continue
            if from_outside and event.method == "backward":
                fixes = (FixSpec(self.text("fix_retain_here", locale),
                                 (Edit("replace", event.node,
                                       with_keyword(event.node, "retain_graph", "True", event), event),),
                                 safe=False),)
                message = self.text("loop", locale, name=name)
            else:
                at = _event_of(trace, earlier)
                fixes = ()
                if at is not None:
                    fixes = (FixSpec(self.text("fix_retain", locale),
                                     (Edit("replace", earlier,
                                           with_keyword(earlier, "retain_graph", "True", at), at),),
                                     safe=False),)
                message = self.text("again", locale, name=name)
            yield Report(event.node, message, fixes, event)


def _event_of(trace, node):
    """The event of the call `node` (for where it stands)."""
    for event in trace.calls():
        if event.node is node:
            return event
    return None


def _carried_argument(trace, backward, freed: set):
    """(call, argument node, value) of the call, in the backward's own loop pass and
    function run, that was handed a tensor (or a tuple of them: an LSTM's `(h, c)`)
    from an earlier pass of that loop whose graph holds the freed nodes: the state
    carried from one iteration into the next."""
    loop = backward.ctx.loop
    if loop is None or backward.ctx.loop_pass_of(loop) == 0:
        return None
    found = None
    for event in trace.events:
        if event is backward:
            break
        if not isinstance(event, CallEvent) or event.ctx.calls != backward.ctx.calls \
                or loop not in event.ctx.loops \
                or event.ctx.loop_pass_of(loop) != backward.ctx.loop_pass_of(loop) \
                or any(isinstance(a, ast.Starred) for a in event.node.args):
            continue
        for position, value in enumerate(event.args):
            tensors = value.items if isinstance(value, TupleValue) else (value,)
            if any(isinstance(t, TensorFacts) and t.made_in_loop is loop and event.ctx.carried_into(loop, t)
                   and freed & t.saved_nodes for t in tensors):
                node = event.arg_node(position=position)
                if node is not None:
                    found = (event, node, value)
    return found


def _detach_line(call, node, value) -> str | None:
    """`h = h.detach()` (or the tuple's form) to put after the statement that hands the
    state on and binds it again; None when that statement does not bind it (the first
    iteration's state may be None, so the line cannot go before it)."""
    stmt = call.ctx.stmt
    bound = {n.id for target in getattr(stmt, "targets", ()) for n in ast.walk(target)
             if isinstance(n, ast.Name)}
    if isinstance(node, ast.Name) and node.id in bound:
        if isinstance(value, TupleValue):
            return f"{node.id} = tuple(s.detach() for s in {node.id})"
        return f"{node.id} = {node.id}.detach()"
    if isinstance(node, ast.Tuple) and node.elts and all(isinstance(e, ast.Name) and e.id in bound
                                                         for e in node.elts):
        names = [e.id for e in node.elts]
        return f"{', '.join(names)} = {', '.join(n + '.detach()' for n in names)}"
    return None
