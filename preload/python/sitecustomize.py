"""rlscope's sitecustomize: attaches rlscope's C-level profile hook to this
Python process and to the threads it starts, then runs the sitecustomize
module this one shadows (if any), so nothing of the environment is lost.
Afterwards `import sitecustomize` gives what it gives without rlscope: the
shadowed module, or ModuleNotFoundError when there is none.

`rlscope run` puts this directory first on PYTHONPATH; outside a profiled run
(no RLSCOPE_SOCKET) it only chains. It never raises: a failure to attach is
one line on stderr and the program runs unprofiled at the Python level.
"""


def _rlscope_attach():
    import ctypes
    import os
    import threading

    if not os.environ.get("RLSCOPE_SOCKET"):
        return
    # RLSCOPE_PYTHON_HOOK=off: no Python level at all (the other levels
    # stay), to tell what the Python hook costs a program from the rest.
    if os.environ.get("RLSCOPE_PYTHON_HOOK") == "off":
        return
    # PyDLL keeps the GIL held during the call (the hook must be installed
    # with it); dlopen(NULL) reaches the preload's exports.
    process = ctypes.PyDLL(None)
    try:
        attach = process.rlscope_python_attach
        attach_thread = process.rlscope_python_attach_thread
    except AttributeError:
        return  # The preload is not loaded in this process.
    attach.argtypes = attach_thread.argtypes = [ctypes.c_char_p]
    name = threading.current_thread().name.encode("utf-8", "replace")
    if not _attach_monitoring(process, name) and not attach(name):
        return
    _attach_new_threads(threading, attach_thread)


# sys.monitoring tool ids rlscope may take, in order: ones CPython names
# no use for. Not PROFILER_ID (2): cProfile and profile take it on 3.12+,
# and a program using them must not fail because rlscope holds it; nor
# DEBUGGER_ID (0), COVERAGE_ID (1) or OPTIMIZER_ID (5).
_MONITORING_TOOL_IDS = (4, 3)


def _attach_monitoring(process, name):
    # CPython 3.12+: rlscope is a sys.monitoring tool (PEP 669) of its own;
    # the C side gives the callbacks. Both ids taken by other tools: say so
    # (the report carries it) and use the profile function.
    # RLSCOPE_PYTHON_HOOK=profile asks for the profile function anyway (to
    # compare the two).
    import ctypes
    import os
    import sys

    monitoring = getattr(sys, "monitoring", None)
    prepare = getattr(process, "rlscope_python_monitoring_prepare", None)
    if monitoring is None or prepare is None or os.environ.get("RLSCOPE_PYTHON_HOOK") == "profile":
        return False
    prepare.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.py_object, ctypes.py_object]
    prepare.restype = ctypes.py_object
    free = [tool for tool in _MONITORING_TOOL_IDS if monitoring.get_tool(tool) is None]
    holders = None
    if not free:
        holders = ", ".join(str(monitoring.get_tool(held)) for held in _MONITORING_TOOL_IDS).encode("utf-8", "replace")
    callbacks = prepare(name, holders, monitoring.DISABLE, monitoring.restart_events)
    if callbacks is None:
        return False
    tool = free[0]
    try:
        monitoring.use_tool_id(tool, "rlscope")
        events = 0
        for event, callback in callbacks.items():
            number = getattr(monitoring.events, event)
            monitoring.register_callback(tool, number, callback)
            events |= number
        monitoring.set_events(tool, events)
    except Exception:  # Then the profile function (the caller attaches it).
        if monitoring.get_tool(tool) == "rlscope":
            monitoring.set_events(tool, 0)
            monitoring.free_tool_id(tool)
        return False
    return True


def _attach_new_threads(threading, attach_thread):
    # Under sys.monitoring every thread is seen already: this names it.
    # On 3.11 a profile function is per thread: each threading.Thread gets
    # the C hook as it starts. Not through threading.setprofile, which
    # the program can see (threading.getprofile()) and replace: the
    # thread's bootstrap attaches first, then runs as before. A profile
    # function the program set (threading.setprofile, sys.setprofile)
    # replaces rlscope's hook on that thread as it would replace any other
    # and is called as without rlscope: rlscope gives way there, and the
    # report says the hook was replaced.
    import functools

    bootstrap = getattr(threading.Thread, "_bootstrap_inner", None)
    if bootstrap is None:
        return  # Another threading: new threads run unprofiled at the Python level.

    @functools.wraps(bootstrap)
    def _bootstrap_inner(self):
        attach_thread(self.name.encode("utf-8", "replace"))
        bootstrap(self)

    threading.Thread._bootstrap_inner = _bootstrap_inner


def _chain_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    path = [entry for entry in sys.path if os.path.abspath(entry or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        # Without rlscope there would be no sitecustomize: a later
        # `import sitecustomize` raises ModuleNotFoundError as it would
        # (None in sys.modules halts the import; site's own import, running
        # this file, is already past that check).
        sys.modules["sitecustomize"] = None
        return
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as the import system does (it may import
    # itself), and left there: `import sitecustomize` gives the program
    # that module, not this one. If it raises, the import system removes
    # it and site reports the error as it would without rlscope.
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


import sys as _sys

# Python 2 children (still seen in old tool chains) can parse this file but
# are not profiled at the Python level.
if _sys.version_info[0] >= 3:
    try:
        _rlscope_attach()
    except Exception as error:  # Never break the program over profiling.
        _sys.stderr.write("rlscope: Python-level capture is off (%s)\n" % (error,))
    _chain_shadowed_sitecustomize()
