"""A realistic ~2,000-line PyTorch training script, generated deterministically.

The benchmarks need the same file on every run and every machine, so it is
built from templates rather than taken from a project: imports and settings,
many helper functions (losses, metrics, schedules, data helpers), a model
class, training and evaluation functions, a module-level training loop like
those in tutorials and notebooks, and a few autograd pitfalls for the rules
to find.
"""
from __future__ import annotations

HEADER = '''"""Train a small classifier on synthetic data."""
import math
import os
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, TensorDataset

SEED = 1234
BATCH_SIZE = 64
LEARNING_RATE = 3e-4
EPOCHS = 3
HIDDEN = 128
DEVICE = "cpu"
LOG_EVERY = 10
torch.manual_seed(SEED)
random.seed(SEED)

'''

HELPERS = [
    '''def scaled_loss_{i}(pred, target, scale={s}):
    """Mean squared error scaled by a constant, with a small penalty."""
    diff = pred - target
    loss = (diff ** 2).mean() * scale
    penalty = 0.0
    for p in (pred, target):
        penalty = penalty + p.abs().mean() * 1e-4
    if loss.dim() > 0:
        loss = loss.sum()
    # keep the loss a scalar so backward() can seed it
    return loss + penalty

''',
    '''def accuracy_{i}(logits, labels):
    """Share of correct predictions in a batch."""
    with torch.no_grad():
        predicted = logits.argmax(dim=-1)
        correct = (predicted == labels).float().sum()
        total = labels.numel()
    if total == 0:
        return 0.0
    value = correct / total
    return value.item()

''',
    '''def warmup_lr_{i}(step, base={s}, warmup=100, total=1000):
    """Linear warm-up followed by cosine decay."""
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    progress = min(1.0, progress)
    cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
    floor = base * 0.01
    return floor + (base - floor) * cosine

''',
    '''def make_batch_{i}(n={n}, features=16, classes=4):
    """Synthetic inputs and labels for one batch."""
    inputs = torch.randn(n, features)
    weights = torch.randn(features, classes)
    logits = inputs @ weights
    labels = logits.argmax(dim=1)
    noise = torch.rand(n) < 0.05
    labels[noise] = torch.randint(0, classes, (int(noise.sum()),))
    return inputs, labels

''',
    '''def grad_norm_{i}(parameters, norm_type=2.0):
    """Total gradient norm over parameters that have a gradient."""
    norms = []
    for p in parameters:
        if p.grad is None:
            continue
        norms.append(p.grad.detach().norm(norm_type))
    if not norms:
        return torch.tensor(0.0)
    stacked = torch.stack(norms)
    return stacked.norm(norm_type)

''',
    '''def train_step_{i}(model, optimizer, inputs, labels, clip={s}):
    """One optimisation step; returns the loss as a float."""
    model.train()
    optimizer.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    optimizer.step()
    return loss.item()

''',
    '''def evaluate_{i}(model, batches):
    """Average loss and accuracy over batches, without building graphs."""
    model.eval()
    total_loss = 0.0
    total_acc = 0.0
    count = 0
    with torch.no_grad():
        for inputs, labels in batches:
            logits = model(inputs)
            total_loss += F.cross_entropy(logits, labels).item()
            total_acc += (logits.argmax(-1) == labels).float().mean().item()
            count += 1
    if count == 0:
        return 0.0, 0.0
    return total_loss / count, total_acc / count

''',
    '''def ema_update_{i}(target, source, decay={d}):
    """Exponential moving average of parameters, in place."""
    with torch.no_grad():
        for t, s in zip(target.parameters(), source.parameters()):
            t.mul_(decay)
            t.add_(s.detach() * (1.0 - decay))
    return target

''',
    '''def regularizer_{i}(weight, strength={s}):
    """An L2 penalty whose gradient we check by hand."""
    w = weight.detach().clone().requires_grad_(True)
    penalty = (w ** 2).sum() * strength
    penalty.backward()
    manual = 2 * strength * w.detach()
    gap = (w.grad - manual).abs().max()
    if gap > 1e-5:
        print("unexpected gradient gap", float(gap))
    return penalty.detach()

''',
    '''def log_metrics_{i}(step, values, every=LOG_EVERY):
    """Print a line of metrics every few steps."""
    if step % every != 0:
        return None
    parts = []
    for key in sorted(values):
        value = values[key]
        if isinstance(value, torch.Tensor):
            value = value.item()
        parts.append(f"{{key}}={{value:.4f}}")
    line = " ".join(parts)
    print(f"step {{step}}: {{line}}")
    return line

''',
]

MODEL = '''class Classifier(nn.Module):
    """A small MLP with dropout and a residual block."""

    def __init__(self, features=16, hidden=HIDDEN, classes=4, dropout=0.1):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.block = nn.Sequential(
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, hidden),
        )
        self.norm = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):
        h = F.relu(self.inp(x))
        h = self.norm(h + self.block(h))
        return self.out(h)

    def num_parameters(self):
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def freeze_input_layer(self):
        for p in self.inp.parameters():
            p.requires_grad_(False)

'''

PITFALLS = '''x = torch.randn(3, requires_grad=True)
y = x * 2
y.backward()
w = torch.tensor([1.0, 2.0], requires_grad=True)
scores = w * torch.tensor([0.5, 0.5])
torch.autograd.grad(scores, w)

'''

TRAINING = '''model = Classifier().to(DEVICE)
optimizer = optim.Adam(model.parameters(), lr=LEARNING_RATE)
inputs_all = torch.randn(1024, 16)
labels_all = torch.randint(0, 4, (1024,))
dataset = TensorDataset(inputs_all, labels_all)
loader = DataLoader(dataset, batch_size=BATCH_SIZE, shuffle=True)
history = []
start = time.time()
for epoch in range(EPOCHS):
    running = 0.0
    for step, (inputs, labels) in enumerate(loader):
        optimizer.zero_grad()
        logits = model(inputs)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        running += loss.item()
        if step % LOG_EVERY == 0:
            print(epoch, step, running / (step + 1))
    history.append(running)
elapsed = time.time() - start
print(f"trained {{EPOCHS}} epochs in {{elapsed:.1f}}s")

'''

FOOTER = '''if __name__ == "__main__":
    final_loss, final_acc = evaluate_0(model, [make_batch_0()])
    print("final", final_loss, final_acc)
    torch.save(model.state_dict(), os.path.join("/tmp", "classifier.pt"))
'''


def build(target_lines: int = 2000) -> str:
    """The training file, about `target_lines` lines long."""
    parts = [HEADER]
    fixed = HEADER + MODEL + PITFALLS + TRAINING + FOOTER
    lines = fixed.count("\n")
    i = 0
    while True:
        template = HELPERS[i % len(HELPERS)]
        text = template.format(i=i, s=round(0.5 + (i % 7) * 0.25, 2), n=32 + i % 5 * 16,
                               d=round(0.9 + (i % 9) * 0.01, 3))
        if lines + text.count("\n") > target_lines:
            break
        parts.append(text)
        lines += text.count("\n")
        i += 1
        if i == len(HELPERS) * 4:
            parts.append(MODEL)
        if i == len(HELPERS) * 8:
            parts.append(PITFALLS)
    parts.append(TRAINING.format())
    parts.append(FOOTER)
    return "".join(parts)


if __name__ == "__main__":
    import sys
    sys.stdout.write(build())
