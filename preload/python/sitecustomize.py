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
    # PyDLL keeps the GIL held during the call (the hook must be installed
    # with it); dlopen(NULL) reaches the preload's exports.
    process = ctypes.PyDLL(None)
    try:
        attach = process.rlscope_python_attach
        attach_thread = process.rlscope_python_attach_thread
    except AttributeError:
        return  # The preload is not loaded in this process.
    attach.argtypes = attach_thread.argtypes = [ctypes.c_char_p]
    if not attach(threading.current_thread().name.encode("utf-8", "replace")):
        return
    _attach_new_threads(threading, attach_thread)


def _attach_new_threads(threading, attach_thread):
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
