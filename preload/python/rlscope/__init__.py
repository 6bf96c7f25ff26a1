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

To profile only part of a long run, run it with `rlscope run
--capture-range api` and mark the part:

    rlscope.start()   # or: with rlscope.capture(): ...
    ...
    rlscope.stop()

Without --capture-range api everything is captured and these do nothing.

After a run, `rlscope.load(DIR)` reads DIR/report.json as tables (pandas
DataFrames when pandas is installed): see its docstring.
"""
import contextlib
import ctypes

from .run_tables import RunTables, load

__all__ = ["operation", "start", "stop", "capture", "load", "RunTables"]


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


def _capture_entry_point():
    try:
        capture_set = ctypes.PyDLL(None).rlscope_capture_set
    except (OSError, AttributeError):
        return None
    capture_set.argtypes, capture_set.restype = [ctypes.c_int], ctypes.c_int
    return capture_set


_capture_set = _capture_entry_point()


def start():
    """Opens capture: from here on rlscope records everything (under `rlscope
    run --capture-range api`, which starts with capture closed). Returns
    True when this call controls capture, False when it does not (outside
    `rlscope run`, or run without --capture-range api, where everything is
    captured anyway)."""
    return _capture_set is not None and _capture_set(1) >= 0


def stop():
    """Closes capture (see start()): until the next start(), rlscope records
    only operation boundaries, so instances are still counted. Returns as
    start() does."""
    return _capture_set is not None and _capture_set(0) >= 0


@contextlib.contextmanager
def capture():
    """Captures the enclosed block: start() on entry, stop() on exit."""
    start()
    try:
        yield
    finally:
        stop()


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
