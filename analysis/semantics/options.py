"""Command-line options read with `argparse`: the settings of a training script
(`args.epochs`, `args.accum_steps`) decide how often its loops run.

`parser.parse_args([])` (a notebook's way, or `parse_args(argv or [])` with no
argv) gives exactly the defaults; `parse_args()` reads the real command line, so
only each option's type is known, never its value."""
from __future__ import annotations

from autograd_lsp.analysis.facts import NONE, UNKNOWN, NumberValue, ObjectRef, StrValue, TupleValue
from autograd_lsp.analysis.semantics import Call, function, method

# How an option stores what it is given, by `action`: (default when absent, type).
_ACTIONS = {"store_true": (NumberValue("bool", False), "bool"),
            "store_false": (NumberValue("bool", True), "bool")}
_TYPES = {"builtins.int": "int", "builtins.float": "float", "builtins.str": "str", "int": "int",
          "float": "float", "str": "str"}
_PREFIX = "option:"


@function("argparse.ArgumentParser")
def _parser(call: Call):
    ref = ObjectRef(call.new_id(), "argparser", "argparse.ArgumentParser")
    call.state.new_object(ref, {})
    return ref


@method("argparser", "add_argument_group", "add_mutually_exclusive_group")
def _group(call: Call):
    """A group adds its options to the parser that made it."""
    return call.receiver


@method("argparser", "add_argument")
def _add_argument(call: Call):
    dest = _dest(call)
    if dest is None:
        return UNKNOWN
    action = call.text(None, "action", "store")
    if action in _ACTIONS:
        default, kind = _ACTIONS[action]
    elif action == "store":
        kind = _type_of(call.kwargs.get("type")) if "nargs" not in call.kwargs else None
        default = call.kwargs.get("default", NONE)
        if isinstance(default, StrValue) and "type" in call.kwargs and kind != "str":
            default = UNKNOWN        # argparse converts a string default with `type`
    else:
        default, kind = UNKNOWN, None
    positional = bool(call.args) and isinstance(call.args[0], StrValue) and \
        not (call.args[0].value or "").startswith("-")
    if call.kwargs.get("required") is not None or (positional and call.text(None, "nargs") not in ("?", "*")):
        default = UNKNOWN        # given on every command line: no default is used
    call.state.set_attr(call.receiver, _PREFIX + dest, TupleValue((default, _typed(kind))))
    return UNKNOWN


def _dest(call: Call) -> str | None:
    given = call.text(None, "dest")
    if given:
        return given
    flags = [a.value for a in call.args if isinstance(a, StrValue) and a.value]
    if len(flags) != len(call.args) or not flags:
        return None
    long = next((f for f in flags if f.startswith("--")), None)
    name = long[2:] if long else flags[0].lstrip("-")
    return name.replace("-", "_") if name else None


def _type_of(value) -> str | None:
    if value is None:
        return None
    qualname = getattr(value, "qualname", None) or getattr(value, "name", None)
    return _TYPES.get(qualname) if isinstance(qualname, str) else None


def _typed(kind: str | None):
    """A value of a known type whose value is not known."""
    if kind == "str":
        return StrValue()
    if kind in ("int", "float", "bool"):
        return NumberValue(kind)
    return UNKNOWN


@method("argparser", "parse_args", "parse_known_args")
def _parse_args(call: Call):
    defaults = _reads_no_command_line(call)
    values = {}
    for key, option in call.state.attrs(call.receiver).items():
        if key.startswith(_PREFIX) and isinstance(option, TupleValue):
            default, typed = option.items
            values[key[len(_PREFIX):]] = default if defaults else typed
    ref = ObjectRef(call.new_id(), "instance", "argparse.Namespace")
    call.state.new_object(ref, values)
    if call.method == "parse_known_args":
        from autograd_lsp.analysis.semantics import containers
        return TupleValue((ref, containers.new_list(call, None)))
    return ref


def _reads_no_command_line(call: Call) -> bool:
    """`parse_args([])`: the arguments given are a known empty list or tuple."""
    from autograd_lsp.analysis.semantics import containers
    given = call.arg(0, "args", None)
    if isinstance(given, TupleValue):
        return not given.items
    if isinstance(given, ObjectRef) and given.kind == "list":
        return containers.known_items(call.state, given) == []
    return False

