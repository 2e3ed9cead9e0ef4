"""Records are frozen under the tests and plain, with the same equality and hash, in use."""
import dataclasses
import json
import os
import subprocess
import sys

import pytest

from autograd_lsp.analysis import records
from autograd_lsp.analysis.facts import TensorFacts

# Each line: is the class frozen, do equal fields give equal records and hashes,
# and does an eq=False record compare by identity.
PROBE = """
import dataclasses, json
from autograd_lsp.analysis.facts import TensorFacts, ObjectRef
from autograd_lsp.analysis.records import record
a, b = TensorFacts(tid=1, requires_grad=True), TensorFacts(tid=1, requires_grad=True)
@record(eq=False)
class Box:
    x: int = 0
print(json.dumps({
    "frozen": TensorFacts.__dataclass_params__.frozen,
    "equal": a == b and hash(a) == hash(b) and a != TensorFacts(tid=2),
    "identity": Box(1) != Box(1) and hash(Box(1)) is not None,
}))
"""


def probe(frozen):
    env = dict(os.environ)
    env.pop("AUTOGRAD_LSP_FROZEN_RECORDS", None)
    if frozen:
        env["AUTOGRAD_LSP_FROZEN_RECORDS"] = "1"
    run = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def test_the_test_run_changes_no_record():
    assert records.FROZEN
    facts = TensorFacts(tid=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        facts.requires_grad = True


@pytest.mark.parametrize("frozen", [True, False])
def test_records_compare_and_hash_by_field_either_way(frozen):
    assert probe(frozen) == {"frozen": frozen, "equal": True, "identity": True}
