"""AG301 retain-graph-in-loop: `backward(retain_graph=True)` in a loop where no
later backward needs the graph: every iteration's graph stays alive."""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import has_true_keyword, is_tensor_backward, made_in_iteration, without_keyword
from autograd_lsp.analysis.trace import backward_target, is_backward


# Neural style transfer as d2l writes it: a helper runs the layers one by one, and the
# targets are computed before the loop (`{targets}`: how they are kept).
_STYLE_TRANSFER = (
    "import torch\n"
    "import torch.nn as nn\n"
    "import torch.nn.functional as F\n"
    "net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Conv2d(4, 4, 3))\n"
    "def extract_features(X, layers):\n"
    "    features = []\n"
    "    for i in range(len(net)):\n"
    "        X = net[i](X)\n"
    "        if i in layers:\n"
    "            features.append(X)\n"
    "    return features\n"
    "targets = {targets}\n"
    "image = torch.rand(1, 3, 10, 10, requires_grad=True)\n"
    "opt = torch.optim.Adam([image], lr=0.01)\n"
    "for step in range(3):\n"
    "    features = extract_features(image, [0, 2])\n"
    "    loss = F.mse_loss(features[0], targets[0]) + F.mse_loss(features[1], targets[1])\n"
    "    opt.zero_grad()\n"
    "    loss.backward(retain_graph=True)\n"
    "    opt.step()\n"
)


class RetainGraphInLoop(Rule):
    code = "AG301"
    name = "retain-graph-in-loop"
    severity = "info"
    summary = {
        "en": "retain_graph=True in a loop where no later backward needs the graph",
        "zh": "循环中不需要却使用了 retain_graph=True",
    }
    explanation = {
        "en": (
            "`retain_graph=True` keeps the graph's saved tensors after the backward so that "
            "another backward can run through it. In a loop where the loss is rebuilt every "
            "iteration and nothing backwards through it again, the kept graphs are only a cost: "
            "memory grows with every iteration that still references them (a recurrent state "
            "carried across iterations keeps all of them alive). Drop `retain_graph=True`; for a "
            "state carried across iterations, `.detach()` it each iteration (truncated "
            "backpropagation)."
        ),
        "zh": (
            "`retain_graph=True` 让计算图在 backward 后保留其保存的张量，以便再次反向传播。若循环每次迭代都重新"
            "构建损失，且之后没有再经过该图的 backward，保留的图只是负担：只要还被引用，显存就随迭代增长"
            "（跨迭代携带的循环状态会让所有图都保持存活）。请去掉 `retain_graph=True`；对跨迭代携带的状态，"
            "每次迭代对它 `.detach()`（截断反向传播）。"
        ),
    }
    messages = {
        "en": {"message": "retain_graph=True in a loop, and no later backward in the iteration uses "
                          "this graph: each iteration's graph is kept alive",
               "fix": "Remove retain_graph=True"},
        "zh": {"message": "循环中使用了 retain_graph=True，而本次迭代之后没有 backward 再用这个图："
                          "每次迭代的计算图都被保留",
               "fix": "去掉 retain_graph=True"},
    }

    bad = (
        # DQN from a replay memory: a deque of transitions, a random sample of them
        # regrouped by `zip(*batch)` and stacked. Nothing sampled carries a graph.
        Example(
            "import random\n"
            "from collections import deque\n"
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "random.seed(0)\n"
            "q = nn.Linear(4, 2)\n"
            "optimizer = torch.optim.Adam(q.parameters(), lr=1e-3)\n"
            "memory = deque(maxlen=100)\n"
            "for _ in range(50):\n"
            "    memory.append((torch.randn(4), random.randrange(2), random.random()))\n"
            "for step in range(5):\n"
            "    states, actions, rewards = zip(*random.sample(memory, 8))\n"
            "    states = torch.stack(states)\n"
            "    values = q(states).gather(1, torch.tensor(actions).unsqueeze(1)).squeeze(1)\n"
            "    loss = F.smooth_l1_loss(values, torch.tensor(rewards))\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward(retain_graph=True)\n"
            "    optimizer.step()\n",
            Silent("loss.grad_fn.next_functions[0][0] is not None and "
                   "loss.grad_fn.next_functions[0][0].next_functions[0][0]._saved_self is not None",
                   "the last step's graph still holds its saved tensors"),
            line=18),
        # A seq2seq loss summed over the decoder's steps from `loss = 0`, the tokens
        # picked by index (an embedding keeps them for its backward).
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "emb = nn.Embedding(10, 4)\n"
            "head = nn.Linear(4, 10)\n"
            "criterion = nn.CrossEntropyLoss()\n"
            "optimizer = torch.optim.SGD(list(emb.parameters()) + list(head.parameters()), lr=0.1)\n"
            "sentences = [torch.randint(0, 10, (5,)) for _ in range(3)]\n"
            "for tokens in sentences:\n"
            "    optimizer.zero_grad()\n"
            "    loss = 0\n"
            "    for t in range(tokens.size(0) - 1):\n"
            "        loss += criterion(head(emb(tokens[t:t + 1])), tokens[t + 1:t + 2])\n"
            "    loss.backward(retain_graph=True)\n"
            "    optimizer.step()\n",
            Silent("loss.grad_fn.next_functions[1][0]._saved_self is not None",
                   "the last sentence's graph still holds its saved tensors"),
            line=14),
        Example(
            "import torch\n"
            "torch.manual_seed(0)\n"
            "signal = torch.sin(torch.linspace(0, 6, 40)) + 0.1 * torch.randn(40)\n"
            "gain = torch.tensor(0.5, requires_grad=True)\n"
            "optimizer = torch.optim.SGD([gain], lr=0.01)\n"
            "state = torch.tensor(0.0)\n"
            "for t in range(40):\n"
            "    state = 0.8 * state + gain * signal[t]\n"
            "    loss = (state - signal[t]) ** 2\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward(retain_graph=True)\n"
            "    optimizer.step()\n",
            Silent("state.grad_fn is not None and state.grad_fn.next_functions[0][0] is not None",
                   "the last state still references every earlier iteration's graph"), line=11),
        Example(
            "import torch\n"
            "x = torch.tensor(1.0, requires_grad=True)\n"
            "kept = []\n"
            "for _ in range(3):\n"
            "    y = x ** 2\n"
            "    y.backward(retain_graph=True)\n"
            "    kept.append(y)\n"
            "    x.grad = None\n",
            Silent("all(k.grad_fn is not None for k in kept)", "three graphs stay alive"),
            line=6),
        # The targets are detached: each iteration builds the whole graph anew, through
        # the layers a helper runs one by one.
        Example(
            _STYLE_TRANSFER.format(
                targets="[t.detach() for t in extract_features(torch.rand(1, 3, 10, 10), [0, 2])]"),
            Silent("loss.grad_fn.next_functions[0][0]._saved_self is not None",
                   "the last iteration's graph still holds its saved tensors"),
            line=19),
        # The batch comes from a helper that scales by `torch.pi` (a float): the whole
        # graph is still built in the iteration.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "def two_moons(n):\n"
            "    theta = torch.rand(n) * torch.pi\n"
            "    return torch.stack([torch.cos(theta), torch.sin(theta)], dim=1)\n"
            "model = nn.Linear(2, 2)\n"
            "opt = torch.optim.Adam(model.parameters(), lr=1e-3)\n"
            "for step in range(4):\n"
            "    x0 = two_moons(16)\n"
            "    loss = (model(x0) - x0).pow(2).mean()\n"
            "    opt.zero_grad()\n"
            "    loss.backward(retain_graph=True)\n"
            "    opt.step()\n",
            Silent("loss.grad_fn.next_functions[0][0]._saved_self is not None",
                   "the last step's graph is kept with its saved tensors"),
            line=12),
        # A character-level RNN as old tutorials train it: the output is bound only
        # inside the loop over the letters (after it, it is the last step's), and the
        # parameters are updated by hand.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "i2h = nn.Linear(3 + 4, 4)\n"
            "i2o = nn.Linear(3 + 4, 2)\n"
            "criterion = nn.CrossEntropyLoss()\n"
            "def train(category, line):\n"
            "    hidden = torch.zeros(1, 4)\n"
            "    i2h.zero_grad()\n"
            "    i2o.zero_grad()\n"
            "    for i in range(line.size(0)):\n"
            "        combined = torch.cat((line[i], hidden), 1)\n"
            "        hidden = i2h(combined)\n"
            "        output = i2o(combined)\n"
            "    loss = criterion(output, category)\n"
            "    loss.backward(retain_graph=True)\n"
            "    for p in list(i2h.parameters()) + list(i2o.parameters()):\n"
            "        p.data.add_(p.grad.data, alpha=-0.01)\n"
            "    return loss\n"
            "for it in range(3):\n"
            "    letters = int(torch.randint(2, 6, ()))\n"
            "    loss = train(torch.tensor([it % 2]), torch.randn(letters, 1, 3))\n",
            Silent("loss.grad_fn._saved_target is not None",
                   "the last step's graph is kept with its saved tensors"),
            line=16),
    )
    good = (
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "trunk, head_a, head_b = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)\n"
            "opt = torch.optim.SGD([*trunk.parameters(), *head_a.parameters()], lr=0.1)\n"
            "for step in range(3):\n"
            "    opt.zero_grad()\n"
            "    h = torch.tanh(trunk(torch.randn(5, 4)))\n"
            "    loss_a = head_a(h).pow(2).mean()\n"
            "    loss_b = head_b(h).abs().mean()\n"
            "    loss_a.backward(retain_graph=True)\n"
            "    loss_b.backward()\n"
            "    opt.step()\n"),
        Example(
            "import torch\n"
            "x = torch.tensor(1.0, requires_grad=True)\n"
            "y = x ** 2\n"
            "for _ in range(3):\n"
            "    y.backward(retain_graph=True)\n"
            "print(x.grad)\n"),
        # Targets computed once, before the loop, through layers whose weights require
        # grad (neural style transfer): every backward goes through that graph again,
        # and without retain_graph the second iteration raises.
        Example(_STYLE_TRANSFER.format(targets="extract_features(torch.rand(1, 3, 10, 10), [0, 2])")),
        Example(
            "import torch\n"
            "import torch.nn.functional as F\n"
            "net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())\n"
            "def extract_features(X):\n"
            "    for i in range(2):\n"
            "        X = net[i](X)\n"
            "    return [X]\n"
            "def train(contents_Y):\n"
            "    X = torch.nn.Parameter(torch.rand(1, 3, 16, 16))\n"
            "    opt = torch.optim.Adam([X], lr=0.01)\n"
            "    for i in range(3):\n"
            "        l = F.mse_loss(extract_features(X)[0], contents_Y[0])\n"
            "        opt.zero_grad()\n"
            "        l.backward(retain_graph=True)\n"
            "        opt.step()\n"
            "contents_Y = extract_features(torch.rand(1, 3, 16, 16))\n"
            "train(contents_Y)\n"),
        # WGAN critic iterations: the generator's step after them backwards through the
        # last iteration's fake batch, whose generator graph the critic's backward kept.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "gen, critic = nn.Linear(2, 3), nn.Linear(3, 1)\n"
            "opt_g = torch.optim.RMSprop(gen.parameters(), lr=1e-3)\n"
            "opt_c = torch.optim.RMSprop(critic.parameters(), lr=1e-3)\n"
            "for epoch in range(2):\n"
            "    for _ in range(3):\n"
            "        fake = gen(torch.randn(4, 2))\n"
            "        loss_c = critic(fake).mean() - critic(torch.randn(4, 3)).mean()\n"
            "        critic.zero_grad()\n"
            "        loss_c.backward(retain_graph=True)\n"
            "        opt_c.step()\n"
            "    loss_g = -critic(fake).mean()\n"
            "    gen.zero_grad()\n"
            "    loss_g.backward()\n"
            "    opt_g.step()\n"),
        # A term with a graph built before the loop, added in place.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "net = nn.Linear(4, 1)\n"
            "prior = net(torch.randn(8, 4)).pow(2).mean()\n"
            "opt = torch.optim.SGD(net.parameters(), lr=0.1)\n"
            "for step in range(3):\n"
            "    loss = (net(torch.randn(8, 4)) - 1).pow(2).mean()\n"
            "    loss += prior\n"
            "    opt.zero_grad()\n"
            "    loss.backward(retain_graph=True)\n"
            "    opt.step()\n"),
    )

    def check(self, trace, locale):
        calls = trace.calls()
        for index, event in enumerate(calls):
            loop = event.ctx.loop
            if loop is None or not is_tensor_backward(event) \
                    or not has_true_keyword(event, "retain_graph"):
                continue
            target: TensorFacts = event.receiver
            # Only a graph built in this iteration; one built before the loop (or an
            # element of one, see per-element-backward) is backwarded again next time.
            if not made_in_iteration(target, loop, event.ctx) or target.element_of is not None:
                continue
            # Every node the backward reaches must be known to be made in this iteration:
            # a part built before the loop (targets computed once through a model that
            # requires grad) is backwarded again next time, and a part never seen (an
            # unknown call or value) may be such a part.
            if target.unseen_history or any(loop.predates(n) for n in target.saved_nodes):
                continue
            # A later backward in the iteration, or after the loop (a GAN's generator
            # step through the last critic iteration's fake batch), may need the graph.
            later = [e for e in calls[index + 1:]
                     if (loop not in e.ctx.loops
                         or e.ctx.loop_pass_of(loop) == event.ctx.loop_pass_of(loop))
                     and (is_backward(e) or e.qualname == "torch.autograd.grad")]
            if any(_may_share(target, e) for e in later):
                continue
            fix = FixSpec(self.text("fix", locale),
                          (Edit("replace", event.node, without_keyword(event.node, "retain_graph", event),
                                event),), safe=False)
            yield Report(event.node, self.text("message", locale), (fix,), event)


def _may_share(target: TensorFacts, later) -> bool:
    """Whether a later backward may go through part of `target`'s graph."""
    other = backward_target(later)
    if not isinstance(other, TensorFacts) or other.opaque or target.opaque:
        return True
    return bool(other.saved_nodes & target.saved_nodes) or other.tid == target.tid
