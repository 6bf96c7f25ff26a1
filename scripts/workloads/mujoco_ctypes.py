"""Minimal ctypes binding to the MuJoCo 2.2.2 C library (libmujoco.so.2.2.2).

Only what the bundled workloads need: load an MJCF file, make/reset/delete
mjData, mj_step, mj_forward, and read/write qpos, qvel, ctrl and time.

Why ctypes and not the `mujoco` Python package: the package is not installed
here, and, more importantly for rlscope, every mj_step below is a call through
a ctypes function pointer taken from libmujoco itself -- the exact path the
profiler has to intercept. Nothing batches steps in C.

Library lookup order:
  1. $RLSCOPE_MUJOCO_LIB (a path or a soname), if set;
  2. ctypes.util.find_library('mujoco');
  3. the Debian path /usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2.

Layouts: mjModel and mjData are large C structs. We declare only their leading
fields (ctypes.Structure prefixes), copied by hand from
/usr/include/mujoco/mjmodel.h and mjdata.h of MuJoCo 2.2.2. A different
MuJoCo version can move those fields, so loading checks, loudly:
  * mj_version() == 222;
  * nq/nv/nu read through the prefix equal what the caller expects from its
    model file (see MjModel(expect=...));
  * opt.timestep (past ~60 ints of sizes) matches what the caller expects;
  * mjData.nstack equals mjModel.nstack, and the qpos/qvel/ctrl pointers lie
    inside mjData's main buffer (catches a shifted mjData prefix).
`/usr/bin/python3 mujoco_ctypes.py --selftest` additionally compiles a tiny C
program against the installed headers (if a C compiler exists) and compares
its offsetof() values with the ctypes offsets.
"""

import ctypes
import ctypes.util
import os
import sys

import numpy as np

EXPECTED_VERSION = 222  # mj_version() of MuJoCo 2.2.2
_DEBIAN_PATH = "/usr/lib/x86_64-linux-gnu/libmujoco.so.2.2.2"

mjtNum = ctypes.c_double  # mjtnum.h: double unless mjUSESINGLE (Debian: double)


class MuJoCoError(RuntimeError):
    pass


# ----------------------------------------------------------------- layouts

# mjModel: the int "sizes" block, in header order (mjmodel.h, struct mjModel_),
# followed by mjOption opt. We stop after opt; nothing later is needed.
_MODEL_INTS = (
    "nq nv nu na nbody njnt ngeom nsite ncam nlight nmesh nmeshvert "
    "nmeshtexvert nmeshface nmeshgraph nskin nskinvert nskintexvert "
    "nskinface nskinbone nskinbonevert nhfield nhfielddata ntex ntexdata "
    "nmat npair nexclude neq ntendon nwrap nsensor nnumeric nnumericdata "
    "ntext ntextdata ntuple ntupledata nkey nmocap nuser_body nuser_jnt "
    "nuser_geom nuser_site nuser_cam nuser_tendon nuser_actuator "
    "nuser_sensor nnames nM nD nemax njmax nconmax nstack nuserdata "
    "nsensordata nbuffer"
).split()

_mjNREF, _mjNIMP = 2, 5


class mjOption(ctypes.Structure):
    _fields_ = [
        ("timestep", mjtNum), ("apirate", mjtNum),
        ("impratio", mjtNum), ("tolerance", mjtNum),
        ("noslip_tolerance", mjtNum), ("mpr_tolerance", mjtNum),
        ("gravity", mjtNum * 3), ("wind", mjtNum * 3),
        ("magnetic", mjtNum * 3), ("density", mjtNum), ("viscosity", mjtNum),
        ("o_margin", mjtNum), ("o_solref", mjtNum * _mjNREF),
        ("o_solimp", mjtNum * _mjNIMP),
        ("integrator", ctypes.c_int), ("collision", ctypes.c_int),
        ("cone", ctypes.c_int), ("jacobian", ctypes.c_int),
        ("solver", ctypes.c_int), ("iterations", ctypes.c_int),
        ("noslip_iterations", ctypes.c_int), ("mpr_iterations", ctypes.c_int),
        ("disableflags", ctypes.c_int), ("enableflags", ctypes.c_int),
    ]


class mjModelPrefix(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in _MODEL_INTS] + [("opt", mjOption)]


# mjData (mjdata.h, struct mjData_), up to and including ctrl.
_mjNWARNING, _mjNTIMER, _mjNSOLVER = 8, 13, 1000


class _mjWarningStat(ctypes.Structure):
    _fields_ = [("lastinfo", ctypes.c_int), ("number", ctypes.c_int)]


class _mjTimerStat(ctypes.Structure):
    _fields_ = [("duration", mjtNum), ("number", ctypes.c_int)]


class _mjSolverStat(ctypes.Structure):
    _fields_ = [
        ("improvement", mjtNum), ("gradient", mjtNum), ("lineslope", mjtNum),
        ("nactive", ctypes.c_int), ("nchange", ctypes.c_int),
        ("neval", ctypes.c_int), ("nupdate", ctypes.c_int),
    ]


class mjDataPrefix(ctypes.Structure):
    _fields_ = [
        ("nstack", ctypes.c_int), ("nbuffer", ctypes.c_int),
        ("pstack", ctypes.c_int),
        ("maxuse_stack", ctypes.c_int), ("maxuse_con", ctypes.c_int),
        ("maxuse_efc", ctypes.c_int),
        ("warning", _mjWarningStat * _mjNWARNING),
        ("timer", _mjTimerStat * _mjNTIMER),
        ("solver", _mjSolverStat * _mjNSOLVER),
        ("solver_iter", ctypes.c_int), ("solver_nnz", ctypes.c_int),
        ("solver_fwdinv", mjtNum * 2),
        ("ne", ctypes.c_int), ("nf", ctypes.c_int),
        ("nefc", ctypes.c_int), ("ncon", ctypes.c_int),
        ("time", mjtNum), ("energy", mjtNum * 2),
        ("buffer", ctypes.c_void_p), ("stack", ctypes.POINTER(mjtNum)),
        ("qpos", ctypes.POINTER(mjtNum)), ("qvel", ctypes.POINTER(mjtNum)),
        ("act", ctypes.POINTER(mjtNum)),
        ("qacc_warmstart", ctypes.POINTER(mjtNum)),
        ("ctrl", ctypes.POINTER(mjtNum)),
    ]


# ----------------------------------------------------------------- library

_lib = None


def _candidates():
    env = os.environ.get("RLSCOPE_MUJOCO_LIB")
    if env:
        return [env]  # an explicit override is not second-guessed
    found = ctypes.util.find_library("mujoco")
    return [c for c in (found, _DEBIAN_PATH) if c]


def lib():
    """Load libmujoco once, declare the prototypes we use, check the version."""
    global _lib
    if _lib is not None:
        return _lib
    errors = []
    handle = None
    for cand in _candidates():
        try:
            handle = ctypes.CDLL(cand)
            break
        except OSError as e:
            errors.append(f"{cand}: {e}")
    if handle is None:
        raise MuJoCoError(
            "mujoco_ctypes: cannot load libmujoco (tried "
            + "; ".join(errors or ["nothing found"])
            + "). Install Debian's libmujoco2.2.2 or set RLSCOPE_MUJOCO_LIB.")

    P = ctypes.c_void_p  # opaque mjModel* / mjData*
    sigs = {
        "mj_version": (ctypes.c_int, []),
        "mj_loadXML": (P, [ctypes.c_char_p, P, ctypes.c_char_p, ctypes.c_int]),
        "mj_deleteModel": (None, [P]),
        "mj_makeData": (P, [P]),
        "mj_resetData": (None, [P, P]),
        "mj_deleteData": (None, [P]),
        "mj_step": (None, [P, P]),
        "mj_forward": (None, [P, P]),
    }
    for name, (res, args) in sigs.items():
        fn = getattr(handle, name)  # a ctypes function pointer into libmujoco
        fn.restype, fn.argtypes = res, args

    version = handle.mj_version()
    if version != EXPECTED_VERSION:
        raise MuJoCoError(
            f"mujoco_ctypes: libmujoco reports mj_version()={version}, but this "
            f"binding hard-codes the mjModel/mjData layouts of MuJoCo 2.2.2 "
            f"({EXPECTED_VERSION}); refusing to read struct fields that may "
            f"have moved. Point RLSCOPE_MUJOCO_LIB at libmujoco.so.2.2.2.")
    _lib = handle
    return _lib


# ----------------------------------------------------------------- objects

class MjModel:
    """An mjModel* loaded from an MJCF file.

    expect: optional dict of values the caller knows from its own model file,
    e.g. {"nq": 2, "nv": 2, "nu": 1, "timestep": 0.01}; each is compared with
    what the struct prefix reads, so a layout mismatch fails here, loudly.
    """

    def __init__(self, path, expect=None):
        L = lib()
        err = ctypes.create_string_buffer(1000)
        ptr = L.mj_loadXML(os.fsencode(path), None, err, len(err))
        if not ptr:
            raise MuJoCoError(f"mj_loadXML({path!r}) failed: "
                              f"{err.value.decode(errors='replace')}")
        self._ptr = ptr
        self._s = mjModelPrefix.from_address(ptr)
        self._check(expect or {})

    def _check(self, expect):
        got = {"nq": self.nq, "nv": self.nv, "nu": self.nu,
               "timestep": self.timestep}
        bad = [f"{k}: read {got[k]!r}, expected {v!r}"
               for k, v in expect.items()
               if (abs(got[k] - v) > 1e-12 if k == "timestep" else got[k] != v)]
        # Independent of the caller: sizes are small non-negative ints.
        if not (0 <= self.nq < 10**6 and 0 <= self.nv < 10**6
                and 0 <= self.nu < 10**6 and 0 < self.timestep < 1):
            bad.append(f"implausible sizes nq={self.nq} nv={self.nv} "
                       f"timestep={self._s.opt.timestep}")
        if bad:
            self.close()
            raise MuJoCoError(
                "mujoco_ctypes: mjModel layout self-check FAILED ("
                + "; ".join(bad) + "). The struct prefix in mujoco_ctypes.py "
                "does not match this libmujoco; it was written for 2.2.2.")

    @property
    def ptr(self):
        if not self._ptr:
            raise MuJoCoError("mjModel already deleted")
        return self._ptr

    nq = property(lambda self: self._s.nq)
    nv = property(lambda self: self._s.nv)
    nu = property(lambda self: self._s.nu)
    nstack = property(lambda self: self._s.nstack)
    timestep = property(lambda self: self._s.opt.timestep)

    def close(self):
        if self._ptr:
            lib().mj_deleteModel(self._ptr)
            self._ptr = None
            self._s = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


class MjData:
    """An mjData* for a given MjModel.

    qpos/qvel/ctrl are numpy arrays that VIEW mjData's own memory (no copy):
    writes go straight to MuJoCo. MuJoCo allocates mjData's buffer once, in
    mj_makeData, so the views stay valid across mj_step/mj_resetData; they
    must not be used after close().
    """

    def __init__(self, model):
        L = lib()
        self.model = model
        ptr = L.mj_makeData(model.ptr)
        if not ptr:
            raise MuJoCoError("mj_makeData returned NULL")
        self._ptr = ptr
        self._s = mjDataPrefix.from_address(ptr)
        self._check()
        self.qpos = np.ctypeslib.as_array(self._s.qpos, shape=(model.nq,))
        self.qvel = np.ctypeslib.as_array(self._s.qvel, shape=(model.nv,))
        self.ctrl = np.ctypeslib.as_array(self._s.ctrl, shape=(model.nu,))
        # Cache the function pointers and raw handles: env.step calls these in
        # a loop, and attribute lookups on the CDLL are not free.
        self._mj_step = L.mj_step
        self._mj_forward = L.mj_forward

    def _check(self):
        s, m = self._s, self.model
        bad = []
        if s.nstack != m.nstack:
            bad.append(f"mjData.nstack={s.nstack} != mjModel.nstack={m.nstack}")
        lo, hi = s.buffer or 0, (s.buffer or 0) + s.nbuffer
        for name in ("qpos", "qvel", "ctrl"):
            addr = ctypes.cast(getattr(s, name), ctypes.c_void_p).value or 0
            if not lo <= addr < hi:
                bad.append(f"mjData.{name}={addr:#x} outside buffer "
                           f"[{lo:#x}, {hi:#x})")
        if bad:
            lib().mj_deleteData(self._ptr)
            self._ptr = None
            raise MuJoCoError("mujoco_ctypes: mjData layout self-check FAILED ("
                              + "; ".join(bad) + ").")

    @property
    def ptr(self):
        if not self._ptr:
            raise MuJoCoError("mjData already deleted")
        return self._ptr

    @property
    def time(self):
        return self._s.time

    @time.setter
    def time(self, value):
        self._s.time = value

    def reset(self):
        lib().mj_resetData(self.model.ptr, self.ptr)

    def step(self, n=1):
        # One ctypes call per mj_step, on purpose (see module docstring).
        m, d, fn = self.model.ptr, self.ptr, self._mj_step
        for _ in range(n):
            fn(m, d)

    def forward(self):
        self._mj_forward(self.model.ptr, self.ptr)

    def close(self):
        if self._ptr:
            # Drop the numpy views first: they point into memory freed below.
            self.qpos = self.qvel = self.ctrl = None
            self._s = None
            lib().mj_deleteData(self._ptr)
            self._ptr = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


# ----------------------------------------------------------------- self-test

_C_PROBE = r"""
#include <stddef.h>
#include <stdio.h>
#include <mujoco/mujoco.h>
int main(void) {
  printf("mjModel.nq %zu\n", offsetof(mjModel, nq));
  printf("mjModel.nu %zu\n", offsetof(mjModel, nu));
  printf("mjModel.nstack %zu\n", offsetof(mjModel, nstack));
  printf("mjModel.nbuffer %zu\n", offsetof(mjModel, nbuffer));
  printf("mjModel.opt %zu\n", offsetof(mjModel, opt));
  printf("mjOption.size %zu\n", sizeof(mjOption));
  printf("mjData.time %zu\n", offsetof(mjData, time));
  printf("mjData.buffer %zu\n", offsetof(mjData, buffer));
  printf("mjData.qpos %zu\n", offsetof(mjData, qpos));
  printf("mjData.qvel %zu\n", offsetof(mjData, qvel));
  printf("mjData.ctrl %zu\n", offsetof(mjData, ctrl));
  return 0;
}
"""


def _selftest():
    import shutil
    import subprocess
    import tempfile

    ours = {
        "mjModel.nq": mjModelPrefix.nq.offset,
        "mjModel.nu": mjModelPrefix.nu.offset,
        "mjModel.nstack": mjModelPrefix.nstack.offset,
        "mjModel.nbuffer": mjModelPrefix.nbuffer.offset,
        "mjModel.opt": mjModelPrefix.opt.offset,
        "mjOption.size": ctypes.sizeof(mjOption),
        "mjData.time": mjDataPrefix.time.offset,
        "mjData.buffer": mjDataPrefix.buffer.offset,
        "mjData.qpos": mjDataPrefix.qpos.offset,
        "mjData.qvel": mjDataPrefix.qvel.offset,
        "mjData.ctrl": mjDataPrefix.ctrl.offset,
    }
    print(f"libmujoco mj_version() = {lib().mj_version()}")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc or not os.path.exists("/usr/include/mujoco/mujoco.h"):
        print("no C compiler or MuJoCo headers: skipped the offsetof check")
    else:
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, "p.c"), os.path.join(tmp, "p")
            with open(src, "w") as f:
                f.write(_C_PROBE)
            subprocess.run([cc, src, "-o", exe], check=True)
            out = subprocess.run([exe], check=True, capture_output=True,
                                 text=True).stdout
        theirs = {k: int(v) for k, v in (l.split() for l in out.splitlines())}
        for k, v in ours.items():
            status = "ok" if theirs[k] == v else "MISMATCH"
            print(f"  {k:16s} ctypes={v:6d} C={theirs[k]:6d} {status}")
        if theirs != ours:
            sys.exit("mujoco_ctypes: offset self-test FAILED")
    here = os.path.dirname(os.path.abspath(__file__))
    m = MjModel(os.path.join(here, "cartpole.xml"),
                expect={"nq": 2, "nv": 2, "nu": 1, "timestep": 0.01})
    d = MjData(m)
    d.ctrl[:] = 1.0
    d.step(10)
    print(f"cartpole: nq={m.nq} nv={m.nv} nu={m.nu} dt={m.timestep} "
          f"after 10 steps: time={d.time:.3f} qpos={d.qpos} qvel={d.qvel}")
    d.close()
    m.close()
    print("mujoco_ctypes: self-test ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--selftest"]:
        _selftest()
    else:
        sys.exit("usage: mujoco_ctypes.py --selftest")
