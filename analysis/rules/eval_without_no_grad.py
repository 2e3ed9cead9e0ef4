"""AG303 eval-without-no-grad: evaluating a model in eval mode with grad mode on."""
from __future__ import annotations

import ast
import re

from autograd_lsp.analysis.call_sites import called_here
from autograd_lsp.analysis.rule import Edit, Example, FixSpec, Report, Rule, Silent
from autograd_lsp.analysis.rulekit import code_of, source_of
from autograd_lsp.analysis.trace import CallSite, Loop, is_backward



# Validation every third step of a loop over four batches: taken on the third only.
PERIODIC_VALIDATION = (
    "import torch\n"
    "import torch.nn as nn\n"
    "from torch.utils.data import DataLoader, TensorDataset\n"
    "model = nn.Linear(10, 2)\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "crit = nn.CrossEntropyLoss()\n"
    "train = DataLoader(TensorDataset(torch.randn(32, 10), torch.randint(0, 2, (32,))), batch_size=8)\n"
    "valid = DataLoader(TensorDataset(torch.randn(16, 10), torch.randint(0, 2, (16,))), batch_size=8)\n"
    "print_every = 3\n"
    "steps = 0\n"
    "for x, y in train:\n"
    "    steps += 1\n"
    "    opt.zero_grad()\n"
    "    loss = crit(model(x), y)\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "    if steps % print_every == 0:\n"
    "        model.eval()\n"
    "        val_loss = 0\n"
    "{validation}"
    "        model.train()\n"
)


class EvalWithoutNoGrad(Rule):
    code = "AG303"
    name = "eval-without-no-grad"
    severity = "info"
    summary = {
        "en": "evaluation forward pass (model.eval(), no backward) without torch.no_grad()",
        "zh": "评估时的前向计算（model.eval()，没有 backward）未放在 torch.no_grad() 中",
    }
    explanation = {
        "en": (
            "`model.eval()` switches layers such as dropout and batch norm to evaluation "
            "behaviour; it does not turn off autograd. A forward pass after it still records a "
            "graph and keeps every activation it needs for a backward that never comes: memory "
            "and time spent for nothing. Run evaluation under `with torch.no_grad():` (or "
            "`torch.inference_mode()`)."
        ),
        "zh": (
            "`model.eval()` 只把 dropout、batch norm 等层切换到评估行为，并不会关闭自动求导。"
            "之后的前向计算仍会记录计算图，并保存反向传播所需的全部激活，而 backward 永远不会到来："
            "白白浪费显存和时间。请在 `with torch.no_grad():`（或 `torch.inference_mode()`）中做评估。"
        ),
    }
    messages = {
        "en": {"message": "`{model}` is in eval mode and nothing here calls backward, but grad mode "
                          "is on: this forward pass records a graph for nothing",
               "named": "`{model}` runs in `{function}`, which calls no backward, with grad mode "
                        "on: this forward pass records a graph for nothing",
               "fix": "Wrap in `with {torch}.no_grad():`"},
        "zh": {"message": "`{model}` 处于 eval 模式且此处没有 backward，但梯度是开启的："
                          "这次前向计算白白记录了计算图",
               "named": "`{model}` 在不调用 backward 的 `{function}` 中运行，但梯度是开启的："
                        "这次前向计算白白记录了计算图",
               "fix": "包进 `with {torch}.no_grad():`"},
    }

    bad = (
        # Test-time augmentation: a helper loops over the flips of one batch; the loop
        # over the batches, in the function that called `.eval()`, is where no_grad goes.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 3)\n"
            "FLIPS = [lambda x: x, lambda x: x.flip(1)]\n"
            "def predict_batch(x):\n"
            "    probs = 0\n"
            "    for flip in FLIPS:\n"
            "        probs = probs + model(flip(x)).softmax(1)\n"
            "    return probs / len(FLIPS)\n"
            "def predict(batches):\n"
            "    model.eval()\n"
            "    outputs = []\n"
            "    for x in batches:\n"
            "        outputs.append(predict_batch(x))\n"
            "    return torch.cat(outputs)\n"
            "probs = predict([torch.randn(2, 4), torch.randn(2, 4)])\n",
            Silent("probs.grad_fn is not None", "the predictions of every batch carry a graph"), line=14),
        # An accuracy helper that loops over a loader, called once after training
        # (the notebook's test cell): said at that call.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 3)\n"
            "def class_mass(model, loader):\n"
            "    total = 0\n"
            "    for x, y in loader:\n"
            "        total = total + model(x).softmax(1).sum(0)\n"
            "    return total\n"
            "model.eval()\n"
            "mass = class_mass(model, [(torch.randn(2, 4), torch.tensor([0, 1]))])\n",
            Silent("mass.grad_fn is not None", "the test forwards carry a graph"), line=10),
        # Graph embeddings propagated by a method of the model, not its forward,
        # scored for every batch of users in evaluation.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "class Propagation(nn.Module):\n"
            "    def __init__(self, adj):\n"
            "        super().__init__()\n"
            "        self.adj = adj\n"
            "        self.emb = nn.Embedding(6, 4)\n"
            "    def propagate(self):\n"
            "        return (self.adj @ self.emb.weight)[:3], self.emb.weight[3:]\n"
            "def evaluate(model):\n"
            "    model.eval()\n"
            "    scores = []\n"
            "    for start in range(0, 3, 2):\n"
            "        users, items = model.propagate()\n"
            "        scores.append(users[start:start + 2] @ items.t())\n"
            "    return torch.cat(scores)\n"
            "scores = evaluate(Propagation(torch.rand(6, 6)))\n",
            Silent("scores.grad_fn is not None", "the scores of every batch carry a graph"), line=14),
        # The EMA copy of a model (AveragedModel deep-copies it: parameters that
        # require grad of their own), evaluated without no_grad.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "from torch.optim.swa_utils import AveragedModel\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "ema = AveragedModel(model)\n"
            "ema.update_parameters(model)\n"
            "ema.eval()\n"
            "probs = []\n"
            "for x in [torch.randn(3, 4) for _ in range(2)]:\n"
            "    probs.append(ema(x).softmax(dim=1))\n",
            Silent("probs[-1].grad_fn is not None", "each evaluation of the EMA copy records a graph"),
            line=11),
        # Never put in eval mode, but run by a function named for evaluation that
        # backwards nothing.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 2)\n"
            "batches = [torch.randn(3, 4) for _ in range(2)]\n"
            "def evaluate(model, batches):\n"
            "    outputs = []\n"
            "    for x in batches:\n"
            "        outputs.append(model(x))\n"
            "    return torch.cat(outputs)\n"
            "preds = evaluate(model, batches)\n",
            Silent("preds.grad_fn is not None", "the evaluation's outputs keep their graph"), line=9),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
            "test_x = torch.randn(10, 4)\n"
            "test_y = torch.randint(0, 3, (10,))\n"
            "model.eval()\n"
            "test_out = model(test_x)\n"
            "accuracy = (test_out.argmax(dim=1) == test_y).float().mean()\n",
            Silent("test_out.requires_grad and test_out.grad_fn is not None",
                   "the test forward pass records a graph that is never used"), line=7),
        Example(
            "import torch\n"
            "from torch import nn\n"
            "net = nn.Linear(5, 2)\n"
            "def evaluate(batches):\n"
            "    net.eval()\n"
            "    correct = 0\n"
            "    for xb, yb in batches:\n"
            "        pred = net(xb).argmax(dim=1)\n"
            "        correct += (pred == yb).sum().item()\n"
            "    return correct\n"
            "probe = net(torch.randn(3, 5))\n"
            "evaluate([(torch.randn(3, 5), torch.tensor([0, 1, 1]))])\n",
            Silent("probe.grad_fn is not None", "each evaluation batch records a graph"), line=8),
        # A prediction after the training loop is over.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "model = nn.Linear(6, 2)\n"
            "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "for step in range(3):\n"
            "    optimizer.zero_grad()\n"
            "    loss = model(torch.randn(4, 6)).pow(2).mean()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "def predict(model, features):\n"
            "    model.eval()\n"
            "    scores = model(features)\n"
            "    return scores.argmax(dim=1).tolist()\n"
            "print(predict(model, torch.randn(2, 6)))\n",
            Silent("model(torch.randn(2, 6)).grad_fn is not None",
                   "the prediction records a graph that is never used"), line=12),
        # The forward runs in a helper the evaluation loop calls: reported at the call,
        # where `with torch.no_grad():` goes.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "def elbo(model, x):\n"
            "    recon = model(x)\n"
            "    return ((recon - x) ** 2).sum()\n"
            "class Runner:\n"
            "    def __init__(self, model, loss):\n"
            "        self.model, self.loss = model, loss\n"
            "    def evaluate_loss(self, x):\n"
            "        return self.loss(self.model, x)\n"
            "def test(runner, batches):\n"
            "    runner.model.eval()\n"
            "    for x in batches:\n"
            "        last = runner.evaluate_loss(x)\n"
            "    return last\n"
            "last = test(Runner(nn.Linear(4, 4), elbo), [torch.randn(2, 4) for _ in range(3)])\n",
            Silent("last.grad_fn is not None", "each test batch records a graph"), line=14),
        # `model.forward(x)` called directly is a forward pass all the same.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "class Net(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(4, 2)\n"
            "    def forward(self, x):\n"
            "        return self.fc(x)\n"
            "net = Net()\n"
            "net.eval()\n"
            "for x in [torch.randn(3, 4) for _ in range(2)]:\n"
            "    scores = net.forward(x)\n",
            Silent("scores.grad_fn is not None", "each batch records a graph"), line=12),
        # The evaluation step is a method that puts the model in eval mode itself: reported
        # there, at its call of the forward's helper.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "class Net:\n"
            "    def __init__(self, module):\n"
            "        self.module = module\n"
            "    def infer(self, x):\n"
            "        return self.module(x)\n"
            "    def validation_step(self, x):\n"
            "        self.module.eval()\n"
            "        y_pred = self.infer(x)\n"
            "        return y_pred.sum()\n"
            "    def fit(self, batches):\n"
            "        for x in batches:\n"
            "            self.last = self.validation_step(x)\n"
            "        return self\n"
            "net = Net(nn.Linear(3, 2)).fit([torch.randn(2, 3) for _ in range(2)])\n",
            Silent("net.last.grad_fn is not None", "each validation records a graph"), line=10),
        # A periodic validation inside the training loop, taken on some steps only.
        Example(
            PERIODIC_VALIDATION.format(validation=(
                "        for vx, vy in valid:\n"
                "            val_out = model(vx)\n"
                "            val_loss += crit(val_out, vy).item()\n")),
            Silent("val_out.grad_fn is not None", "each validation batch records a graph"), line=21),
        # A framework-style `validation_step` run by the user's own loop, a list
        # comprehension, with no no_grad around it: reported at the comprehension's call.
        Example(
            "import torch\n"
            "from torch import nn\n"
            "class Classifier(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc = nn.Linear(3, 2)\n"
            "    def forward(self, x):\n"
            "        return self.fc(x)\n"
            "    def validation_step(self, batch):\n"
            "        x, y = batch\n"
            "        return {\"logits\": self(x), \"target\": y}\n"
            "def run_validation(module, loader):\n"
            "    module.eval()\n"
            "    outputs = [module.validation_step(batch) for batch in loader]\n"
            "    return torch.cat([o[\"logits\"] for o in outputs])\n"
            "loader = [(torch.randn(2, 3), torch.tensor([0, 1])) for _ in range(2)]\n"
            "logits = run_validation(Classifier(), loader)\n",
            Silent("logits.grad_fn is not None", "every batch's logits carry a graph"), line=14),
        # Full-batch training, then the same model in eval mode on held-out data, in
        # one loop body: the model is trained here, the second forward evaluates it.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.2), nn.Linear(8, 1))\n"
            "opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "x, y, x_val, y_val = torch.randn(16, 4), torch.randn(16, 1), torch.randn(8, 4), torch.randn(8, 1)\n"
            "for epoch in range(3):\n"
            "    model.train()\n"
            "    loss = F.mse_loss(model(x), y)\n"
            "    opt.zero_grad()\n"
            "    loss.backward()\n"
            "    opt.step()\n"
            "    model.eval()\n"
            "    val_loss = F.mse_loss(model(x_val), y_val)\n",
            Silent("val_loss.grad_fn is not None", "each epoch's validation loss carries a graph"),
            line=14),
    )
    good = (
        # Probabilities for a calibration set, detached in the statement that computes
        # them from the forward: no graph outlives it.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "mlp = nn.Linear(4, 3)\n"
            "mlp.eval()\n"
            "scores = []\n"
            "for x in [torch.randn(5, 4), torch.randn(5, 4)]:\n"
            "    scores.append(torch.softmax(mlp(x), dim=1).detach().numpy())\n"),
        # DQN's target network, frozen in eval mode, in the training step: the step
        # backwards (through the policy network only); it is not an evaluation.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "policy_net, target_net = nn.Linear(4, 2), nn.Linear(4, 2)\n"
            "target_net.load_state_dict(policy_net.state_dict())\n"
            "target_net.eval()\n"
            "optimizer = torch.optim.RMSprop(policy_net.parameters(), lr=1e-3)\n"
            "def optimize_model(states, actions, rewards, next_states):\n"
            "    q = policy_net(states).gather(1, actions)\n"
            "    next_values = target_net(next_states).max(1)[0].detach()\n"
            "    loss = F.smooth_l1_loss(q, (rewards + 0.99 * next_values).unsqueeze(1))\n"
            "    optimizer.zero_grad()\n"
            "    loss.backward()\n"
            "    optimizer.step()\n"
            "for step in range(3):\n"
            "    optimize_model(torch.randn(8, 4), torch.randint(0, 2, (8, 1)), torch.randn(8), torch.randn(8, 4))\n"),
        # Named for evaluation, but its result is differentiated; a unit test; a
        # framework's hook, which the framework runs under no_grad.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 2)\n"
            "batches = [torch.randn(3, 4) for _ in range(2)]\n"
            "def evaluate(model, batches):\n"
            "    total = 0\n"
            "    for x in batches:\n"
            "        total = total + model(x).pow(2).mean()\n"
            "    return total\n"
            "evaluate(model, batches).backward()\n"
            "def test_output_shapes():\n"
            "    for n in (1, 3):\n"
            "        assert model(torch.randn(n, 4)).shape == (n, 2)\n"
            "test_output_shapes()\n"
            "class Module(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.net = nn.Linear(4, 2)\n"
            "    def validation_step(self, batch):\n"
            "        for x in batch:\n"
            "            self.net(x)\n"),
        Example(PERIODIC_VALIDATION.format(validation=(
            "        with torch.no_grad():\n"
            "            for vx, vy in valid:\n"
            "                val_out = model(vx)\n"
            "                val_loss += crit(val_out, vy).item()\n"))),
        # `import torch.utils.data` binds `torch` itself: its no_grad is torch's.
        Example(
            "import torch\n"
            "import torch.utils.data\n"
            "from torch import nn\n"
            "class VAE(nn.Module):\n"
            "    def __init__(self):\n"
            "        super().__init__()\n"
            "        self.fc1 = nn.Linear(6, 4)\n"
            "    def encode(self, x):\n"
            "        return self.fc1(x)\n"
            "    def forward(self, x):\n"
            "        return self.encode(x)\n"
            "model = VAE()\n"
            "loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 6)), batch_size=4)\n"
            "model.eval()\n"
            "with torch.no_grad():\n"
            "    for (data,) in loader:\n"
            "        out = model(data)\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
            "test_x = torch.randn(10, 4)\n"
            "model.eval()\n"
            "with torch.no_grad():\n"
            "    test_out = model(test_x)\n"
            "accuracy = test_out.argmax(dim=1)\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(4, 3)\n"
            "img = torch.randn(1, 4, requires_grad=True)\n"
            "model.eval()\n"
            "score = model(img)[0, 1]\n"
            "score.backward()\n"
            "saliency = img.grad.abs()\n"),
        # FGSM: the attack differentiates the model in eval mode, then checks the
        # perturbed input with a forward of its own.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "import torch.nn.functional as F\n"
            "torch.manual_seed(0)\n"
            "model = nn.Linear(4, 3)\n"
            "model.eval()\n"
            "batches = [(torch.randn(1, 4), torch.tensor([1])) for _ in range(3)]\n"
            "correct = 0\n"
            "for data, target in batches:\n"
            "    data.requires_grad = True\n"
            "    loss = F.cross_entropy(model(data), target)\n"
            "    model.zero_grad()\n"
            "    loss.backward()\n"
            "    adversarial = data + 0.1 * data.grad.sign()\n"
            "    pred = model(adversarial).argmax(dim=1)\n"
            "    correct += int(pred.item() == target.item())\n"),
        # A notebook's plot after training: the prediction is detached as it is made.
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "model = nn.Linear(1, 1)\n"
            "X_test = torch.linspace(0, 1, 8).unsqueeze(1)\n"
            "model.eval()\n"
            "predictions = model(X_test).detach().numpy()\n"),
        Example(
            "import torch\n"
            "import torch.nn as nn\n"
            "class Env:\n"
            "    def eval(self):\n"
            "        return self\n"
            "env = Env()\n"
            "env.eval()\n"
            "policy = nn.Linear(4, 2)\n"
            "policy.eval()\n"
            "@torch.no_grad()\n"
            "def act(obs):\n"
            "    return policy(obs).argmax()\n"
            "act(torch.randn(4))\n"),
    )

    def check(self, trace, locale):
        torch = trace.torch_name or "torch"
        calls = trace.calls()
        seen, reported = set(), set()
        # Calls of a model (its forward, or a method returning a graph) in eval mode:
        # a layer they run is reported as theirs.
        evaluated = {id(e.node) for e in calls if e.extra.get("module") is not None
                     and e.extra.get("training") is False and e.node is not None}
        for event in calls:
            if not (event.extra.get("trainable") and event.ctx.no_grad is False):
                continue
            evaluation = None
            if event.extra.get("training") is not False:
                # Not in eval mode, but run by the loop of a function named for
                # evaluation (`test`, `evaluate`, `run_validation`) that backwards nothing.
                evaluation = _named_evaluation(trace.differentiations(), event)
                if evaluation is None:
                    continue
            # The first pass a forward runs in: the first iteration for most, a later
            # one for a periodic evaluation (`if step % print_every == 0:` is taken
            # only when the loop's counter is no longer its first value).
            # (Per call path: a helper's forward reached from two calls is two places.)
            key = (event.node,) + tuple(getattr(site, "node", site) for site in event.ctx.calls)
            if key in seen:
                continue
            seen.add(key)
            if _inside_forward(event) or any(id(getattr(site, "node", None)) in evaluated
                                             for site in event.ctx.calls):
                continue      # a layer called by a model's own forward: the model's call is reported
            if not event.ctx.loops and _backward_after(calls, event):
                continue      # one forward outside a loop, with training still to come: it may feed it
            if _differentiated(calls, event.result):
                continue      # a backward goes through this forward: grad mode is needed
            if _detached_at_once(event):
                continue      # `softmax(model(x)).detach()`: the user drops the graph as it is made
            if self._backward_nearby(trace.differentiations(), event):
                continue
            if _beside_a_training_step(calls, event):
                continue      # a frozen target or teacher network in a training step
            if _gradients_in_eval_mode(calls, event):
                continue      # an attack or a saliency map: gradients of the model in eval mode
            called = event.node.func
            if isinstance(called, ast.Attribute) and called.attr == "forward":
                called = called.value          # `model.forward(x)` names `model`
            name = source_of(called, event)
            node, stmt, at, frame = _reported_at(calls, event)
            if node is not event.node and name.startswith("self."):
                # A layer of a model's method (`model.encode(src)`), said at a call
                # outside it: the model is what the user put in eval mode.
                name = _model_of_method(event) or name
            # Two forwards of one helper call in the loop, or (by the function's name)
            # two models in one statement: one report.
            place = (node if evaluation is None else stmt, frame)
            if place in reported:
                continue
            reported.add(place)
            fixes = ()
            if isinstance(stmt, (ast.Assign, ast.Expr, ast.AugAssign, ast.AnnAssign)):
                fixes = (FixSpec(self.text("fix", locale, torch=torch),
                                 (Edit("wrap", stmt, f"with {torch}.no_grad():", at),)),)
            message = self.text("message", locale, model=name) if evaluation is None else \
                self.text("named", locale, model=name, function=evaluation)
            helper = getattr(getattr(at, "function", None), "node", None)
            if isinstance(at, CallSite) and node is not event.node and helper is not None \
                    and event.ctx.function is not None and helper is event.ctx.function.node:
                # Said at the call of the helper that runs the forward: name the helper.
                message = called_here(helper.name, message, locale)
            yield Report(node, message, fixes, at)

    @staticmethod
    def _backward_nearby(differentiations, event) -> bool:
        """A backward that may go through this forward: in the same iteration of the
        loop it runs in (or in the same run of its function), of a value the analysis
        does not know. (The graph of a known tensor is checked by `_differentiated`.)"""
        from autograd_lsp.analysis.rulekit import backward_target
        loop = next((l for l in reversed(event.ctx.loops) if not l.is_comprehension), None)
        for e in differentiations:
            near = loop in e.ctx.loops if loop is not None else \
                e.ctx.calls[:len(event.ctx.calls)] == event.ctx.calls
            target = backward_target(e)
            if near and target is None:
                return True
        return False


# Names of functions that evaluate. (`*_step` hooks are left out: frameworks run
# `validation_step` and `test_step` under no_grad themselves; `test_*` are unit tests.)
_EVALUATION_NAME = re.compile(r"^_?(?:(?:run|do)_)?(?:test|eval|evaluate|evaluation|valid|validate|validation|val)"
                              r"(?:_(?:epoch|model|loop|set|data|loader|one_epoch))?$")


def _named_evaluation(differentiations, event) -> str | None:
    """The name of the function, among those that led to `event`, named for evaluation,
    whose own loop runs it and whose run backwards nothing; None otherwise."""
    chain = [(site.function, index + 1) for index, site in enumerate(event.ctx.calls)]
    if not event.ctx.calls:
        chain.append((event.ctx.function, 0))
    for function, depth in chain:
        name = getattr(getattr(function, "node", None), "name", None)
        if not name or not _EVALUATION_NAME.match(name):
            continue
        blocks = event.ctx.blocks
        start = blocks.index(event.ctx.calls[depth - 1]) + 1 if depth else 0
        if not any(isinstance(b, Loop) and not b.is_comprehension for b in blocks[start:]):
            return None
        inside = event.ctx.calls[:depth]
        if any(e.ctx.calls[:depth] == inside for e in differentiations):
            return None
        return name
    return None


def _backward_after(calls, event) -> bool:
    """A backward (or autograd.grad) runs after `event` (calls are in the order they ran).
    A prediction after the training is over is still an evaluation."""
    after = False
    for e in calls:
        if e is event:
            after = True
        elif after and (is_backward(e) or e.qualname == "torch.autograd.grad"):
            return True
    return False


def _beside_a_training_step(calls, event) -> bool:
    """The forward runs beside a backward (same function run, loop pass and branch)
    while no backward of that pass trains its model: a frozen target or teacher
    network in a training step (DQN's `target_net`), not an evaluation. A backward
    whose graph is not known whole may train it: then too, nothing is claimed."""
    from autograd_lsp.analysis.facts import TensorFacts
    from autograd_lsp.analysis.rulekit import backward_target
    params = event.extra.get("params")
    if not params:
        return False
    same_pass = [e for e in calls if is_backward(e) and e.ctx.calls == event.ctx.calls
                 and e.ctx.loops == event.ctx.loops and e.ctx.passes == event.ctx.passes]
    if not any(e.ctx.blocks == event.ctx.blocks for e in same_pass):
        return False
    for e in same_pass:
        target = backward_target(e)
        if isinstance(target, TensorFacts) and not target.opaque and not target.unseen_history \
                and target.leaves & params:
            return False
    return True


def _gradients_in_eval_mode(calls, event) -> bool:
    """In the same loop pass, a backward goes through another forward of the same
    model, in eval mode too: the loop takes gradients of the evaluated model on
    purpose (FGSM's attack, then its forward on the perturbed input; a saliency
    map), which is not an evaluation loop, whatever its later forwards keep."""
    module = event.extra.get("module")
    if module is None or not event.ctx.loops:
        return False
    for other in calls:
        if other is event or other.extra.get("module") != module or other.extra.get("training") is not False:
            continue
        if other.ctx.loops == event.ctx.loops and other.ctx.passes == event.ctx.passes \
                and _differentiated(calls, other.result):
            return True
    return False


def _differentiated(calls, result) -> bool:
    """Some backward (or autograd.grad) goes through the graph of `result`."""
    from autograd_lsp.analysis.facts import TensorFacts, TupleValue
    from autograd_lsp.analysis.rulekit import backward_target
    outputs = [v for v in (result.items if isinstance(result, TupleValue) else (result,))
               if isinstance(v, TensorFacts) and v.saved_nodes]
    if not outputs:
        return False
    for event in calls:
        target = backward_target(event)
        if isinstance(target, TensorFacts) and any(target.tid == out.tid or target.saved_nodes & out.saved_nodes
                                                   for out in outputs):
            return True
    return False


def _detached_at_once(event) -> bool:
    """The forward's output, or what the statement computes from it, is detached in
    the expression that makes it (`model(x).detach().numpy()` for a plot,
    `softmax(model(x), dim=1).detach()`): no graph outlives the statement."""
    stmt = event.ctx.stmt
    if stmt is None:
        return False
    return any(isinstance(n, ast.Attribute) and n.attr in ("detach", "detach_")
               and any(inner is event.node for inner in ast.walk(n.value))
               for n in ast.walk(stmt))


def _inside_forward(event) -> bool:
    """Run by a module's forward (directly, or through a helper it calls such as a
    VAE's `encode`): the module's own call is the one to report."""
    functions = [event.ctx.function] + [site.function for site in event.ctx.calls]
    return any(f is not None and getattr(f, "qualname", "").endswith(".forward") for f in functions)


def _reported_at(calls, event):
    """(node, statement, where, frame) to report a forward at: where `with
    torch.no_grad():` belongs. When helpers called in the evaluation loop run it, that
    is the helper call in the function that put the model in eval mode (`loss =
    svi.evaluate_loss(x)` in `test`; `y_pred = self.infer(x)` in a `validation_step`
    that calls `self.model.eval()`), else the helper call in the loop; when a helper
    only returns it (`def infer(self, x): return self.model(x)`), the call of that
    helper, outwards; otherwise where it is written. `frame`: the calls that led to
    the function the node is written in (one helper called from two places is two
    places)."""
    path = event.ctx.calls
    site = _call_in_evaluation(calls, event)
    if site is not None:
        return site.node, site.stmt, site, _calls_before(path, site)
    node, stmt, at, frame = event.node, event.ctx.stmt, event, path
    for site in reversed(path):
        if not (isinstance(stmt, ast.Return) and stmt.value is node):
            break
        node, stmt, at, frame = site.node, site.stmt, site, _calls_before(path, site)
    return node, stmt, at, frame


def _model_of_method(event) -> str | None:
    """`model` in `model.encode(src)`, the call that ran the method `event` is in."""
    function = event.ctx.function
    site = next((s for s in reversed(event.ctx.calls) if isinstance(s, CallSite) and s.function is function), None)
    if site is None or not isinstance(site.node.func, ast.Attribute):
        return None
    receiver = site.node.func.value
    return None if isinstance(receiver, ast.Name) and receiver.id == "self" else code_of(receiver)


def _calls_before(path: tuple, site) -> tuple:
    """The calls that led to the function `site` is written in."""
    return path[:next((i for i, s in enumerate(path) if s is site), 0)]


def _call_in_evaluation(calls, event):
    """The followed call, on the way from a loop around `event` to it, written in the
    function that called `.eval()`: the innermost such loop (a helper's own loop over
    test-time augmentations, run per batch by the loop that called `.eval()`, is
    reported at that loop's call of the helper); when none of them did, the call in
    the innermost loop's own function. None when the forward is written in the loop's
    function, or in the function that called `.eval()`."""
    blocks = event.ctx.blocks
    path = event.ctx.calls
    # A comprehension counts when it calls the helper that runs the forward
    # (`[module.validation_step(b) for b in loader]`), not when it is the helper's own.
    loops = [l for l in reversed(event.ctx.loops) if l in blocks and (
        not l.is_comprehension or any(isinstance(b, CallSite) for b in blocks[blocks.index(l) + 1:]))]
    if not loops:
        return None
    innermost = None
    for loop in loops:
        sites = [b for b in blocks[blocks.index(loop) + 1:] if isinstance(b, CallSite)]
        if innermost is None:
            innermost = sites
        frames = [(site, _calls_before(path, site)) for site in sites] + [(None, path)]
        for site, frame in frames:
            if _called_eval(calls, frame):
                return site
    # A helper whose own loop evaluates, called outside any loop by the code that called
    # `.eval()` (`print(compute_accuracy(model, test_loader))` after training).
    for site in reversed(path):
        if _called_eval(calls, _calls_before(path, site)):
            return site
    return innermost[0] if innermost else None


def _called_eval(calls, frame: tuple) -> bool:
    """Whether the code run by the calls `frame` put a model in eval mode."""
    return any(e.method == "eval" and e.ctx.calls == frame for e in calls)
