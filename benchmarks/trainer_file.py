"""A realistic ~2,000-line PyTorch project file made of classes, generated
deterministically: model modules whose `forward` goes through `self.` layers,
metric and callback classes, a `Trainer` holding the model, the optimizer and
the criterion, helpers that take them as parameters, and a `main()` that wires
them together. The analysis follows calls through all of it, so this file
measures the cost of Core v2's call following (the other benchmark file,
`training_file.py`, is mostly flat functions and module-level code).
"""
from __future__ import annotations

HEADER = '''"""Train an encoder-decoder on synthetic sequences."""
import math
import random
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

SEED = 7
FEATURES = 16
HIDDEN = 32
CLASSES = 5
torch.manual_seed(SEED)
random.seed(SEED)


@dataclass
class Config:
    lr: float = 1e-3
    epochs: int = 2
    batch_size: int = 16
    clip: float = 1.0
    log_every: int = 10
    accumulate: int = 1

'''

MODULES = [
    '''class ResidualMLP{i}(nn.Module):
    """Two linear layers around a residual connection."""

    def __init__(self, width=HIDDEN, dropout=0.1):
        super().__init__()
        self.fc1 = nn.Linear(width, width * 2)
        self.fc2 = nn.Linear(width * 2, width)
        self.norm = nn.LayerNorm(width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        h = F.gelu(self.fc1(self.norm(x)))
        h = self.drop(self.fc2(h))
        return x + h


''',
    '''class Attention{i}(nn.Module):
    """Single-head self-attention over a sequence."""

    def __init__(self, width=HIDDEN):
        super().__init__()
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.scale = width ** -0.5

    def forward(self, x):
        scores = self.q(x) @ self.k(x).transpose(1, 2) * self.scale
        weights = scores.softmax(dim=-1)
        return weights @ self.v(x)


''',
    '''class Encoder{i}(nn.Module):
    """Embeds features, then attention and an MLP."""

    def __init__(self, features=FEATURES, width=HIDDEN):
        super().__init__()
        self.embed = nn.Linear(features, width)
        self.attn = Attention{i}(width)
        self.mlp = ResidualMLP{i}(width)

    def forward(self, x):
        h = self.embed(x)
        h = h + self.attn(h)
        return self.mlp(h)


''',
    '''class Classifier{i}(nn.Module):
    """Pools an encoded sequence into class logits."""

    def __init__(self, width=HIDDEN, classes=CLASSES):
        super().__init__()
        self.encoder = Encoder{i}(FEATURES, width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        h = self.encoder(x)
        pooled = h.mean(dim=1)
        return self.head(pooled)

    def predict(self, x):
        with torch.no_grad():
            return self.forward(x).argmax(dim=-1)


''',
    '''class AverageMeter{i}:
    """Running average of a float."""

    def __init__(self):
        self.total = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n

    @property
    def average(self):
        return self.total / max(1, self.count)


''',
    '''class EarlyStopping{i}:
    """Stops when the validation loss has not improved for `patience` epochs."""

    def __init__(self, patience=3, delta=1e-4):
        self.patience = patience
        self.delta = delta
        self.best = math.inf
        self.bad_epochs = 0

    def step(self, value):
        if value < self.best - self.delta:
            self.best = value
            self.bad_epochs = 0
            return False
        self.bad_epochs += 1
        return self.bad_epochs >= self.patience


''',
    '''def make_loader_{i}(n=64, length=6, batch_size=16, shuffle=True):
    """Synthetic sequences and labels."""
    inputs = torch.randn(n, length, FEATURES)
    labels = torch.randint(0, CLASSES, (n,))
    return DataLoader(TensorDataset(inputs, labels), batch_size=batch_size, shuffle=shuffle)


def warmup_cosine_{i}(step, total, warmup=20, base=1e-3):
    if step < warmup:
        return base * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    return base * 0.5 * (1.0 + math.cos(math.pi * progress))


def grad_norm_{i}(model):
    norms = [p.grad.detach().norm() for p in model.parameters() if p.grad is not None]
    if not norms:
        return 0.0
    return torch.stack(norms).norm().item()


''',
    '''class Trainer{i}:
    """Holds the model, the optimizer and the criterion; fits and evaluates."""

    def __init__(self, model, config=None):
        self.model = model
        self.config = config or Config()
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=self.config.lr)
        self.criterion = nn.CrossEntropyLoss()
        self.stopper = EarlyStopping{i}()
        self.history = []
        self.step_count = 0

    def train_step(self, inputs, labels):
        self.optimizer.zero_grad()
        logits = self.model(inputs)
        loss = self.criterion(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip)
        self.optimizer.step()
        self.step_count += 1
        return loss.item()

    def train_epoch(self, loader):
        self.model.train()
        meter = AverageMeter{i}()
        for inputs, labels in loader:
            meter.update(self.train_step(inputs, labels), len(labels))
        return meter.average

    def evaluate(self, loader):
        self.model.eval()
        meter = AverageMeter{i}()
        correct = 0
        with torch.no_grad():
            for inputs, labels in loader:
                logits = self.model(inputs)
                meter.update(self.criterion(logits, labels).item(), len(labels))
                correct += (logits.argmax(-1) == labels).sum().item()
        return meter.average, correct / max(1, meter.count)

    def fit(self, train_loader, val_loader):
        for epoch in range(self.config.epochs):
            train_loss = self.train_epoch(train_loader)
            val_loss, accuracy = self.evaluate(val_loader)
            self.history.append((train_loss, val_loss, accuracy))
            if self.stopper.step(val_loss):
                break
        return self.history


''',
]

PITFALLS = '''class SloppyTrainer(Trainer0):
    """Forgets to clear gradients and keeps graphs in its running loss."""

    def train_epoch(self, loader):
        self.model.train()
        running = 0.0
        for inputs, labels in loader:
            loss = self.criterion(self.model(inputs), labels)
            loss.backward()
            self.optimizer.step()
            running += loss
        return running

    def evaluate(self, loader):
        self.model.eval()
        total = 0.0
        for inputs, labels in loader:
            total += self.criterion(self.model(inputs), labels).item()
        return total, 0.0


def per_sample_update(model, optimizer, inputs, labels):
    optimizer.zero_grad()
    losses = F.cross_entropy(model(inputs), labels, reduction="none")
    losses.backward()
    optimizer.step()


'''

MAIN = '''def main():
    model = Classifier0()
    trainer = Trainer0(model, Config(epochs=1))
    history = trainer.fit(make_loader_0(), make_loader_0(shuffle=False))
    sloppy = SloppyTrainer(Classifier1(), Config(epochs=1))
    sloppy.fit(make_loader_1(), make_loader_1(shuffle=False))
    inputs, labels = next(iter(make_loader_2()))
    per_sample_update(model, trainer.optimizer, inputs, labels)
    return history


if __name__ == "__main__":
    main()
'''


def build(target_lines: int = 2000) -> str:
    parts = [HEADER]
    lines = HEADER.count("\n") + PITFALLS.count("\n") + MAIN.count("\n")
    i = 0
    while lines < target_lines:
        for template in MODULES:
            block = template.format(i=i)
            parts.append(block)
            lines += block.count("\n")
        i += 1
    parts.append(PITFALLS)
    parts.append(MAIN)
    return "".join(parts)


if __name__ == "__main__":
    print(build(), end="")
