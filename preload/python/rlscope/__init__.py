"""rlscope's Python API: optional, explicit operation boundaries.

rlscope infers operations (simulation, inference, backprop, replay) from
your code's function names with no change to it. Where you want other
names or sharper boundaries:

    import rlscope

    with rlscope.operation("rollout"):
        ...

    @rlscope.operation("evaluate")
    def evaluate(policy): ...

Explicit operations take precedence over inferred ones. Outside
`rlscope run` (the launcher makes this module importable) every call is a
no-op, so the annotation can stay in the code.

After a run, `rlscope.load(DIR)` reads DIR/report.json as tables (pandas
DataFrames when pandas is installed): see its docstring.
"""
import contextlib
import ctypes

from .run_tables import RunTables, load

__all__ = ["operation", "load", "RunTables"]


def _entry_points():
    try:
        process = ctypes.PyDLL(None)
        push, pop = process.rlscope_operation_push, process.rlscope_operation_pop
    except (OSError, AttributeError):
        return None, None
    push.argtypes, push.restype = [ctypes.c_char_p], ctypes.c_uint64
    pop.argtypes, pop.restype = [ctypes.c_uint64], None
    return push, pop


_push, _pop = _entry_points()


class operation(contextlib.ContextDecorator):
    """Marks the enclosed code (a with-block or a decorated function) as the
    operation `name` on the calling thread. Blocks need not nest: each exit
    closes the operation its own entry opened (asyncio tasks, generators)."""

    def __init__(self, name):
        self._name = str(name).encode("utf-8", "replace")
        self._tokens = []

    def _recreate_cm(self):
        # A decorated function gets a fresh instance per call, so recursive
        # and concurrent calls each keep their own token.
        return operation(self._name.decode("utf-8"))

    def __enter__(self):
        if _push is not None:
            self._tokens.append(_push(self._name))
        return self

    def __exit__(self, *exception):
        if _pop is not None and self._tokens:
            _pop(self._tokens.pop())
        return False
