"""The server's bounds on work and memory: incremental caches for a few
documents only, and a debounce that can be set."""
from __future__ import annotations

from autograd_lsp.server.documents import DEBOUNCE_SECONDS, Documents, debounce_from


def test_only_the_most_recently_analysed_documents_keep_an_analyzer():
    documents = Documents(max_analyzers=2)
    states = [documents.get(f"file:///f{n}.py") for n in range(3)]
    first = documents.analyzer_for(states[0])
    documents.analyzer_for(states[1])
    assert documents.analyzer_for(states[0]) is first       # reused, and now most recent
    documents.analyzer_for(states[2])
    assert states[1].analyzer is None                        # least recently analysed: dropped
    assert states[0].analyzer is first and states[2].analyzer is not None
    assert documents.analyzer_for(states[1]) is not None     # comes back fresh


def test_closing_a_document_frees_its_slot():
    documents = Documents(max_analyzers=1)
    kept = documents.get("file:///a.py")
    documents.analyzer_for(kept)
    documents.close("file:///a.py")
    other = documents.get("file:///b.py")
    documents.analyzer_for(other)
    assert other.analyzer is not None


def test_debounce_setting_in_milliseconds():
    assert debounce_from("0", DEBOUNCE_SECONDS) == 0
    assert debounce_from(40, DEBOUNCE_SECONDS) == 0.04
    for bad in (None, "fast", -1, 10 ** 9, [], float("nan")):
        assert debounce_from(bad, DEBOUNCE_SECONDS) == DEBOUNCE_SECONDS
