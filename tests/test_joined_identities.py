"""A tensor whose identity is a join (a helper returning `t.cuda()` on one path
and `t` on the other) is made anew at each call: where paths meet, facts of an
earlier call's tensor (the last epoch's) are not this one's. Seen in a seq2seq
course: attention scores written into `scores[i]`, made by such a helper in
another module and run in two nested loops, were taken for one graph that every
epoch backwarded again (a false `double-backward`)."""
from __future__ import annotations

from autograd_lsp.analysis.facts import TensorFacts, join_tensors, replace
from autograd_lsp.analysis.state import State


def _made(state: State, site: str, node) -> TensorFacts:
    return state.created(TensorFacts(tid=site, requires_grad=True, is_leaf=False,
                                     saved_nodes=frozenset({node})))


def test_facts_of_a_join_made_before_its_members_were_made_again_are_dropped():
    state = State()
    last_epoch = join_tensors(_made(state, "cuda", "old-a"), _made(state, "cpu", "old-b"))
    state.update_tensor(last_epoch)
    this_epoch = join_tensors(_made(state, "cuda", "new-a"), _made(state, "cpu", "new-b"))
    assert this_epoch.tid == last_epoch.tid
    # A loop that may run no pass: one path still holds the last epoch's facts
    # (nothing of this epoch wrote them), the other this epoch's.
    skipped, ran = state.copy(), state.copy()
    skipped.update_tensor(last_epoch)
    ran.update_tensor(this_epoch)
    joined = skipped.joined(ran)
    assert joined.tensor(this_epoch.tid).saved_nodes == {"new-a", "new-b"}


def test_facts_of_a_join_newer_than_its_members_are_kept():
    state = State()
    current = join_tensors(_made(state, "cuda", "a"), _made(state, "cpu", "b"))
    first, second = state.copy(), state.copy()
    first.update_tensor(current)
    second.update_tensor(replace(current, saved_nodes=current.saved_nodes | {"c"}))
    joined = first.joined(second)
    assert "a" in joined.tensor(current.tid).saved_nodes


def test_a_join_of_joins_is_flat():
    ab = join_tensors(TensorFacts(tid="a"), TensorFacts(tid="b"))
    bc = join_tensors(TensorFacts(tid="b"), TensorFacts(tid="c"))
    assert join_tensors(ab, bc).tid == ("join", "a", "b", "c")
    assert join_tensors(ab, join_tensors(TensorFacts(tid="b"), TensorFacts(tid="a"))).tid == ab.tid


# A replay pool of past fakes (CycleGAN's ImagePool): a list whose items are joined
# over every pass of nested loops and random branches.
_POOL = """\
import random
import torch
class Pool:
    def __init__(self, size):
        self.size, self.images = size, []
    def query(self, images):
        out = []
        for image in images.detach():
            if len(self.images) < self.size:
                self.images.append(image.clone())
                out.append(image)
            elif random.random() > 0.5:
                i = random.randrange(self.size)
                out.append(self.images[i].clone())
                self.images[i] = image.clone()
            else:
                out.append(image)
        return torch.stack(out)
g_a, g_b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 4)
pool_a, pool_b = Pool(8), Pool(8)
def step(x, y):
    return pool_a.query(g_a(x)).sum() + pool_b.query(g_b(y)).sum()
for epoch in range(3):
    for batch in range(4):
        step(torch.randn(2, 4), torch.randn(2, 4))
"""


def test_identities_stay_flat_through_loops_that_join_lists_of_tensors():
    from autograd_lsp.analysis.engine import Analyzer
    analyzer = Analyzer()
    analyzer.analyze(_POOL)
    tids = [value.tid for trace in analyzer.last.traces for event in trace.events
            for value in vars(event).values() if isinstance(value, TensorFacts)]
    assert tids
    for tid in tids:
        members = tid[1:] if isinstance(tid, tuple) and tid and tid[0] == "join" else ()
        assert not any(isinstance(m, tuple) and m and m[0] == "join" for m in members)
