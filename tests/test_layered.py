"""`Layered.add_missing` takes another layered dict's entries for the keys this one
lacks, whatever layer (base, changes, removals) either side holds them in."""
from __future__ import annotations

import random

from autograd_lsp.analysis.state import Layered


def _plain(layered: Layered) -> dict:
    return {key: layered.get(key) for key in layered.keys()}


def _random_layered(rng: random.Random) -> Layered:
    layered = Layered({k: ("base", k) for k in rng.sample(range(40), 15)})
    copy = layered.copy()
    for key in rng.sample(range(40), 10):
        if rng.random() < 0.3:
            copy.pop(key)
        else:
            copy[key] = ("top", key)
    if rng.random() < 0.5:
        copy.fold()
    return copy


def test_add_missing_keeps_what_is_there_and_takes_the_rest():
    rng = random.Random(3)
    for _ in range(300):
        mine, other = _random_layered(rng), _random_layered(rng)
        expected = {**_plain(other), **_plain(mine)}
        mine.add_missing(other)
        assert _plain(mine) == expected


def test_fold_keeps_the_contents_and_empties_the_changes():
    layered = Layered({1: "a", 2: "b"}).copy()
    layered[3] = "c"
    layered.pop(1)
    layered.fold()
    assert layered.top == {} and _plain(layered) == {2: "b", 3: "c"}
