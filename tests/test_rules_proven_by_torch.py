"""Every rule example, run with real torch, does what the rule says.

Bad examples raise (or warn, or compute the wrong value) exactly as stated in
their `runtime`; good examples run without exception and without UserWarning.
All examples run in this one process: importing torch costs over a second.
"""
from __future__ import annotations

import signal
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is a test dependency: pip install -e '.[test]'")

from autograd_lsp.analysis.rule import Clean, Raises, Silent, Warns  # noqa: E402
from tests.rule_examples import ALL  # noqa: E402

TIME_LIMIT = 60


def run_example(code: str):
    """Run `code` as a script; return (exception or None, warnings, globals)."""
    namespace = {"__name__": "__main__"}
    error = None

    def on_alarm(signum, frame):
        raise TimeoutError(f"example ran over {TIME_LIMIT}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(TIME_LIMIT)
    torch.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<example>", "exec"), namespace)
        except Exception as exc:  # the example's own failure is what we inspect
            error = exc
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    return error, list(caught), namespace


@pytest.mark.parametrize("rule,example", ALL)
def test_example_runtime(rule, example, capsys):
    error, caught, namespace = run_example(example.code)
    expected = example.runtime
    if isinstance(expected, Raises):
        assert error is not None, f"expected {expected.exception}, ran clean"
        names = [c.__name__ for c in type(error).__mro__]
        assert expected.exception in names, f"raised {type(error).__name__}: {error}"
        assert expected.match in str(error), f"message was: {error}"
        return
    assert error is None, f"raised {type(error).__name__}: {error}"
    if isinstance(expected, Warns):
        texts = [str(w.message) for w in caught
                 if expected.category in [c.__name__ for c in w.category.__mro__]]
        assert any(expected.match in t for t in texts), f"warnings were: {texts}"
    elif isinstance(expected, Silent):
        assert eval(expected.check, namespace), f"the wrong result did not happen: {expected.check}"
    elif isinstance(expected, Clean):
        user = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        assert not user, f"UserWarning on correct code: {user}"
