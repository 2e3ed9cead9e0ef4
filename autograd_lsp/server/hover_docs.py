'''What each autograd API name does to the graph, in English and Chinese.

One entry per name a hover explains: three or four lines of Markdown and a
tiny example. `HOW_USED` says where a name counts as torch's (an attribute
after a dot, a keyword argument, a call), so that a loop variable called `step`
or `grad` gets no torch documentation.
'''
from __future__ import annotations

# name -> the ways it appears in torch code: "attr" (`x.name`), "kwarg" (`f(name=...)`),
# "call" (`name(...)`, `@name`, `with name():`, typically after `from torch import name`).
HOW_USED = {
    "backward": {"attr"},
    "torch.autograd.grad": {"call"},
    "grad": {"attr"},
    "grad_fn": {"attr"},
    "is_leaf": {"attr"},
    "requires_grad": {"attr", "kwarg"},
    "requires_grad_": {"attr"},
    "retain_graph": {"kwarg"},
    "create_graph": {"kwarg"},
    "retain_grad": {"attr"},
    "detach": {"attr"},
    "no_grad": {"attr", "call"},
    "inference_mode": {"attr", "call"},
    "enable_grad": {"attr", "call"},
    "zero_grad": {"attr"},
    "step": {"attr"},
    "item": {"attr"},
    "numpy": {"attr"},
    "gradcheck": {"attr", "call"},
    # What old tutorials wrote (torch < 0.4) and what it means today.
    "Variable": {"call"},
    "volatile": {"kwarg", "attr"},
    "data": {"attr"},
}

DOCS = {
    "en": {
        "backward": (
            "**`Tensor.backward(gradient=None, retain_graph=None, create_graph=False)`**  \n"
            "Runs the graph from this tensor back to its leaves and adds d(self)/d(leaf) into each "
            "leaf's `.grad`. Without `gradient` the tensor must be a scalar. The graph's saved "
            "tensors are freed afterwards unless `retain_graph=True`.\n"
            "```python\nloss = (w * x).sum()\nloss.backward()   # w.grad now holds x\n```"),
        "torch.autograd.grad": (
            "**`torch.autograd.grad(outputs, inputs, grad_outputs=None, retain_graph=None, "
            "create_graph=False)`**  \n"
            "Returns the gradients of `outputs` with respect to `inputs` as a tuple instead of "
            "accumulating them into `.grad`. Non-scalar outputs need `grad_outputs`; pass "
            "`create_graph=True` to differentiate the result again.\n"
            "```python\n(dx,) = torch.autograd.grad(y.sum(), x)\n```"),
        "grad": (
            "**`Tensor.grad`**  \n"
            "The gradient accumulated by `backward()` into a leaf that requires grad; `None` "
            "before the first backward and after `zero_grad()` (set_to_none). Backward adds to "
            "it, so clear it every step. On a non-leaf it stays `None` unless `retain_grad()`.\n"
            "```python\nloss.backward(); print(w.grad)\n```"),
        "grad_fn": (
            "**`Tensor.grad_fn`**  \n"
            "The graph node that made this tensor (e.g. `MulBackward0`); backward starts there. "
            "`None` for leaves and for tensors made without grad tracking.\n"
            "```python\ny = x * 2; y.grad_fn   # <MulBackward0>\n```"),
        "is_leaf": (
            "**`Tensor.is_leaf`**  \n"
            "True for tensors you created (not the result of a tracked op) and for every tensor "
            "that does not require grad. Only leaves get `.grad` filled by backward.\n"
            "```python\nw = torch.randn(3, requires_grad=True)  # leaf\n(w * 2).is_leaf    # False\n```"),
        "requires_grad": (
            "**`requires_grad`**  \n"
            "Whether autograd records operations on this tensor. Only floating point and complex "
            "tensors can require grad, and the flag can be set only on leaves.\n"
            "```python\nw = torch.zeros(3, requires_grad=True)\n```"),
        "requires_grad_": (
            "**`Tensor.requires_grad_(requires_grad=True)`**  \n"
            "Sets `requires_grad` in place and returns the tensor, so it chains after a factory "
            "or a `.to(device)`: the result is a leaf that the optimizer can take.\n"
            "```python\nw = torch.randn(3).to(device).requires_grad_()\n```"),
        "retain_graph": (
            "**`retain_graph=`** (of `backward` / `autograd.grad`)  \n"
            "Keeps the graph's saved tensors after this backward so a second backward through "
            "the same graph works. Costs memory; in a loop every iteration's graph stays alive.\n"
            "```python\nloss1.backward(retain_graph=True); loss2.backward()\n```"),
        "create_graph": (
            "**`create_graph=`** (of `backward` / `autograd.grad`)  \n"
            "Records the backward pass itself, so the gradients have a `grad_fn` and can be "
            "differentiated again (higher-order derivatives, gradient penalties).\n"
            "```python\n(g,) = torch.autograd.grad(y, x, create_graph=True)\ng.backward()\n```"),
        "retain_grad": (
            "**`Tensor.retain_grad()`**  \n"
            "Asks backward to fill `.grad` of this non-leaf tensor too (by default only leaves "
            "get it). Call it before the backward.\n"
            "```python\nh = x * 2; h.retain_grad(); h.sum().backward(); h.grad\n```"),
        "detach": (
            "**`Tensor.detach()`**  \n"
            "A new tensor sharing the same storage but cut from the graph: it does not require "
            "grad and nothing flows back through it. Use it to log, store or feed values without "
            "keeping the graph alive.\n"
            "```python\nhistory.append(loss.detach())\n```"),
        "no_grad": (
            "**`torch.no_grad()`**  \n"
            "Context manager (or decorator) in which operations are not recorded: results do not "
            "require grad. Use it for evaluation and for in-place updates of parameters.\n"
            "```python\nwith torch.no_grad():\n    w -= lr * w.grad\n```"),
        "inference_mode": (
            "**`torch.inference_mode()`**  \n"
            "Like `no_grad`, but faster: tensors made inside are inference tensors that can never "
            "be used in autograd later (not even after the block).\n"
            "```python\nwith torch.inference_mode():\n    preds = model(x)\n```"),
        "enable_grad": (
            "**`torch.enable_grad()`**  \n"
            "Turns gradient recording back on inside a `no_grad` block (or function decorated "
            "with it). It does not undo `inference_mode`.\n"
            "```python\nwith torch.no_grad():\n    with torch.enable_grad():\n        y = x * 2  # tracked\n```"),
        "zero_grad": (
            "**`optimizer.zero_grad(set_to_none=True)` / `module.zero_grad()`**  \n"
            "Clears the `.grad` of every parameter (sets it to `None` by default since torch "
            "2.0). Backward accumulates, so call it once per step before `backward()`.\n"
            "```python\nopt.zero_grad(); loss.backward(); opt.step()\n```"),
        "step": (
            "**`optimizer.step()`**  \n"
            "Updates the parameters from their current `.grad`. Call it after `backward()` and "
            "before the next `zero_grad()`; parameters whose `.grad` is `None` are skipped.\n"
            "```python\nloss.backward()\nopt.step()\n```"),
        "item": (
            "**`Tensor.item()`**  \n"
            "The value of a one-element tensor as a Python number, outside the graph. Use it to "
            "accumulate or log losses without keeping their graphs alive.\n"
            "```python\ntotal += loss.item()\n```"),
        "numpy": (
            "**`Tensor.numpy(force=False)`**  \n"
            "A NumPy array sharing memory with a CPU tensor. Raises on a tensor that requires "
            "grad: detach it first.\n"
            "```python\narr = y.detach().cpu().numpy()\n```"),
        "gradcheck": (
            "**`torch.autograd.gradcheck(fn, inputs, eps=1e-06, atol=1e-05)`**  \n"
            "Compares analytic gradients with finite differences. Needs double precision inputs "
            "that require grad; float32 gives spurious mismatches.\n"
            "```python\nx = torch.randn(3, dtype=torch.float64, requires_grad=True)\n"
            "torch.autograd.gradcheck(torch.sin, (x,))\n```"),
        "Variable": (
            "**`torch.autograd.Variable(t, requires_grad=False)`** (torch < 0.4)  \n"
            "Since torch 0.4 Variable and Tensor are one class: `Variable(t)` returns a plain "
            "tensor sharing `t`'s data, cut from its graph, requiring grad only when asked. "
            "The wrapper can go.\n"
            "```python\nx = Variable(torch.randn(3))   # today: x = torch.randn(3)\n```"),
        "volatile": (
            "**`volatile=`** (of `Variable`, torch < 0.4)  \n"
            "Removed in torch 0.4: the keyword is ignored with a UserWarning and the graph is "
            "recorded as usual (`x.volatile` is always False). Evaluate under `torch.no_grad()` "
            "or `torch.inference_mode()` instead.\n"
            "```python\nwith torch.no_grad():\n    out = model(x)\n```"),
        "data": (
            "**`Tensor.data`**  \n"
            "The same data as a tensor autograd does not track: changes through it are hidden "
            "from the graph (a wrong gradient rather than an error). Before torch 0.4 it reached "
            "a Variable's tensor and `loss.data[0]` read a number; today `loss.item()` reads the "
            "number and `x.detach()` or `torch.no_grad()` covers the rest.\n"
            "```python\nprint(loss.item())   # not loss.data[0]\n```"),
    },
    "zh": {
        "backward": (
            "**`Tensor.backward(gradient=None, retain_graph=None, create_graph=False)`**  \n"
            "从该张量沿计算图反向传播到叶子，并把 d(self)/d(叶子) 累加到各叶子的 `.grad`。"
            "不传 `gradient` 时该张量必须是标量。除非 `retain_graph=True`，之后会释放图中保存的张量。\n"
            "```python\nloss = (w * x).sum()\nloss.backward()   # w.grad 现在等于 x\n```"),
        "torch.autograd.grad": (
            "**`torch.autograd.grad(outputs, inputs, grad_outputs=None, retain_graph=None, "
            "create_graph=False)`**  \n"
            "以元组返回 `outputs` 对 `inputs` 的梯度，而不是累加到 `.grad`。非标量输出需要 "
            "`grad_outputs`；要对结果再求导，传 `create_graph=True`。\n"
            "```python\n(dx,) = torch.autograd.grad(y.sum(), x)\n```"),
        "grad": (
            "**`Tensor.grad`**  \n"
            "`backward()` 累加到需要梯度的叶子张量上的梯度；第一次 backward 之前以及 `zero_grad()`"
            "（set_to_none）之后为 `None`。backward 是累加的，所以每步都要清零。"
            "非叶子张量除非调用 `retain_grad()`，否则一直是 `None`。\n"
            "```python\nloss.backward(); print(w.grad)\n```"),
        "grad_fn": (
            "**`Tensor.grad_fn`**  \n"
            "生成该张量的计算图节点（如 `MulBackward0`），反向传播从这里开始。"
            "叶子张量和未被追踪的张量为 `None`。\n"
            "```python\ny = x * 2; y.grad_fn   # <MulBackward0>\n```"),
        "is_leaf": (
            "**`Tensor.is_leaf`**  \n"
            "由你直接创建（不是被追踪运算的结果）的张量，以及所有不需要梯度的张量，都是叶子。"
            "只有叶子的 `.grad` 会被 backward 填充。\n"
            "```python\nw = torch.randn(3, requires_grad=True)  # 叶子\n(w * 2).is_leaf    # False\n```"),
        "requires_grad": (
            "**`requires_grad`**  \n"
            "autograd 是否记录对该张量的运算。只有浮点和复数张量可以需要梯度，"
            "且只能在叶子张量上设置这个标志。\n"
            "```python\nw = torch.zeros(3, requires_grad=True)\n```"),
        "requires_grad_": (
            "**`Tensor.requires_grad_(requires_grad=True)`**  \n"
            "原地设置 `requires_grad` 并返回该张量，可接在工厂函数或 `.to(device)` 之后："
            "结果是可交给优化器的叶子张量。\n"
            "```python\nw = torch.randn(3).to(device).requires_grad_()\n```"),
        "retain_graph": (
            "**`retain_graph=`**（`backward` / `autograd.grad` 的参数）  \n"
            "本次 backward 之后保留图中保存的张量，使同一张图可以再次 backward。"
            "代价是内存；在循环里每次迭代的图都会一直存活。\n"
            "```python\nloss1.backward(retain_graph=True); loss2.backward()\n```"),
        "create_graph": (
            "**`create_graph=`**（`backward` / `autograd.grad` 的参数）  \n"
            "把反向传播本身也记录成计算图，这样求得的梯度带有 `grad_fn`，可以再次求导"
            "（高阶导数、梯度惩罚）。\n"
            "```python\n(g,) = torch.autograd.grad(y, x, create_graph=True)\ng.backward()\n```"),
        "retain_grad": (
            "**`Tensor.retain_grad()`**  \n"
            "让 backward 也填充这个非叶子张量的 `.grad`（默认只有叶子才有）。要在 backward 之前调用。\n"
            "```python\nh = x * 2; h.retain_grad(); h.sum().backward(); h.grad\n```"),
        "detach": (
            "**`Tensor.detach()`**  \n"
            "返回与原张量共享存储、但从计算图上切断的新张量：它不需要梯度，梯度不会经它回传。"
            "用于记录、保存或传递数值而不让计算图继续存活。\n"
            "```python\nhistory.append(loss.detach())\n```"),
        "no_grad": (
            "**`torch.no_grad()`**  \n"
            "上下文管理器（或装饰器），其中的运算不被记录，结果不需要梯度。"
            "用于评估，以及原地更新参数。\n"
            "```python\nwith torch.no_grad():\n    w -= lr * w.grad\n```"),
        "inference_mode": (
            "**`torch.inference_mode()`**  \n"
            "类似 `no_grad` 但更快：其中创建的是推理张量，之后（即使离开该块）也不能再用于 autograd。\n"
            "```python\nwith torch.inference_mode():\n    preds = model(x)\n```"),
        "enable_grad": (
            "**`torch.enable_grad()`**  \n"
            "在 `no_grad` 块（或被它装饰的函数）内重新开启梯度记录。它不能撤销 `inference_mode`。\n"
            "```python\nwith torch.no_grad():\n    with torch.enable_grad():\n        y = x * 2  # 被追踪\n```"),
        "zero_grad": (
            "**`optimizer.zero_grad(set_to_none=True)` / `module.zero_grad()`**  \n"
            "清除每个参数的 `.grad`（自 torch 2.0 起默认设为 `None`）。backward 是累加的，"
            "所以每步在 `backward()` 之前调用一次。\n"
            "```python\nopt.zero_grad(); loss.backward(); opt.step()\n```"),
        "step": (
            "**`optimizer.step()`**  \n"
            "根据参数当前的 `.grad` 更新参数。应在 `backward()` 之后、下一次 `zero_grad()` 之前调用；"
            "`.grad` 为 `None` 的参数会被跳过。\n"
            "```python\nloss.backward()\nopt.step()\n```"),
        "item": (
            "**`Tensor.item()`**  \n"
            "把单元素张量的值取为 Python 数字，脱离计算图。用它累加或记录损失，避免保留计算图。\n"
            "```python\ntotal += loss.item()\n```"),
        "numpy": (
            "**`Tensor.numpy(force=False)`**  \n"
            "返回与 CPU 张量共享内存的 NumPy 数组。对需要梯度的张量会报错：先 detach。\n"
            "```python\narr = y.detach().cpu().numpy()\n```"),
        "gradcheck": (
            "**`torch.autograd.gradcheck(fn, inputs, eps=1e-06, atol=1e-05)`**  \n"
            "用有限差分检验解析梯度。输入须为需要梯度的双精度张量；float32 会产生虚假的不匹配。\n"
            "```python\nx = torch.randn(3, dtype=torch.float64, requires_grad=True)\n"
            "torch.autograd.gradcheck(torch.sin, (x,))\n```"),
        "Variable": (
            "**`torch.autograd.Variable(t, requires_grad=False)`**（torch < 0.4）  \n"
            "自 torch 0.4 起 Variable 与 Tensor 是同一个类：`Variable(t)` 返回与 `t` 共享数据的普通张量，"
            "脱离 `t` 的计算图，只有在要求时才需要梯度。这个包装可以去掉。\n"
            "```python\nx = Variable(torch.randn(3))   # 如今：x = torch.randn(3)\n```"),
        "volatile": (
            "**`volatile=`**（`Variable` 的参数，torch < 0.4）  \n"
            "已在 torch 0.4 移除：该关键字被忽略并给出 UserWarning，计算图照常记录（`x.volatile` "
            "永远是 False）。请改在 `torch.no_grad()` 或 `torch.inference_mode()` 下评估。\n"
            "```python\nwith torch.no_grad():\n    out = model(x)\n```"),
        "data": (
            "**`Tensor.data`**  \n"
            "同一份数据、但不被 autograd 追踪的张量：通过它做的修改对计算图不可见（得到错误的梯度而不是报错）。"
            "在 torch 0.4 之前它用来取得 Variable 中的张量，`loss.data[0]` 用来读数；如今用 `loss.item()` "
            "读数，其余情形用 `x.detach()` 或 `torch.no_grad()`。\n"
            "```python\nprint(loss.item())   # 而不是 loss.data[0]\n```"),
    },
}


def api_doc(key: str, locale: str) -> str | None:
    table = DOCS.get(locale) or DOCS["en"]
    return table.get(key) or DOCS["en"].get(key)
