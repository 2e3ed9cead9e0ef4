"""Fit a small regressor to synthetic data: a hand-written linear baseline first,
then a two-layer network trained with mini-batch SGD and evaluated on a held-out
split.

This script has autograd bugs in it on purpose. See them without running it:

    autograd-lsp check examples/train_example.py
"""
import torch
from torch import nn

torch.manual_seed(0)

# Synthetic data: y = x @ true_w + noise.
true_w = torch.randn(8, 1)
x_train = torch.randn(512, 8)
y_train = x_train @ true_w + 0.1 * torch.randn(512, 1)
x_test = torch.randn(128, 8)
y_test = x_test @ true_w + 0.1 * torch.randn(128, 1)
n_train, n_features = x_train.shape

# 1. Linear baseline by plain gradient descent.
w = torch.zeros(8, 1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
learning_rate = 0.05
for step in range(100):
    pred = x_train @ w + b
    loss = (pred - y_train) ** 2  # squared error of every sample
    loss.backward()
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
        w.grad = None
        b.grad = None
print(f"baseline train MSE: {loss.mean().item():.4f}")

# 2. A small network.
model = nn.Sequential(
    nn.Linear(n_features, 32),
    nn.ReLU(),
    nn.Linear(32, 1),
)
criterion = nn.MSELoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
batch_size = 64
n_epochs = 5


def evaluate(model, x, y):
    model.eval()
    total = 0.0
    for start in range(0, len(x), batch_size):
        pred = model(x[start:start + batch_size])
        total += criterion(pred, y[start:start + batch_size]).item() * len(pred)
    model.train()
    return total / len(x)


for epoch in range(n_epochs):
    order = torch.randperm(n_train)
    running_loss = 0.0
    for start in range(0, n_train, batch_size):
        batch = order[start:start + batch_size]
        pred = model(x_train[batch])
        loss = criterion(pred, y_train[batch])
        loss.backward()
        optimizer.step()
        running_loss += loss
    train_loss = running_loss / (n_train // batch_size)
    print(f"epoch {epoch}: train {train_loss.item():.4f}  test {evaluate(model, x_test, y_test):.4f}")
