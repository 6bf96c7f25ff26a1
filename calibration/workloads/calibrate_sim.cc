// librlscope_calibrate_sim.so: the stand-in simulator library of
// rlscope-calibrate-native's trampoline cases. rlscope calibrate hooks its
// functions with `--sim '*librlscope_calibrate_sim*:rlscope_calibrate_*'`.
// Each does a trivial amount of work: the calibration prices the hook, not
// the function. They are only ever reached through the caller's PLT/GOT
// (another shared object), so nothing can inline them.
#define RLSCOPE_CALIBRATE_EXPORT extern "C" __attribute__((visibility("default"), noinline))

// `trampoline`: one hooked call per iteration.
RLSCOPE_CALIBRATE_EXPORT int rlscope_calibrate_step(int x) { return x * 3 + 1; }

// `trampoline_nested`: a hooked call made while another is running. rlscope
// never patches a simulator library's own GOT (its internal calls are part
// of the outer call), so a call from here straight to
// rlscope_calibrate_inner would pass no trampoline at all. Instead the outer
// function calls back into the program, which calls rlscope_calibrate_inner
// through its own (patched) PLT: the shape of a simulator callback that
// calls the simulator again, the nested trampoline rlscope does pay for.
RLSCOPE_CALIBRATE_EXPORT int rlscope_calibrate_outer(int (*callback)(int), int x) { return callback(x) + 1; }

RLSCOPE_CALIBRATE_EXPORT int rlscope_calibrate_inner(int x) { return x ^ 0x5a; }
