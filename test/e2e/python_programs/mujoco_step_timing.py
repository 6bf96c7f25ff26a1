"""Steps the bundled cart-pole model with mj_step through ctypes inside a
function the default rules call simulation, with MuJoCo's own profiler
timing every step (mjcb_time set to a C clock). Prints MuJoCo's total
mj_step time and call count:  mj_step_ns=N calls=N

  mujoco_step_timing.py WORKLOADS_DIR LIBMJTIMER STEPS
"""
import ctypes
import sys

sys.path.insert(0, sys.argv[1])
import mujoco_ctypes  # noqa: E402
from cartpole_env import MODEL_PATH  # noqa: E402

MJ_TIMER_STEP = 0


class TimingEnv:
    def __init__(self):
        self.model = mujoco_ctypes.MjModel(MODEL_PATH)
        self.data = mujoco_ctypes.MjData(self.model)

    def step(self, steps):
        self.data.step(steps)


def main():
    clock = ctypes.CDLL(sys.argv[2]).rlscope_test_monotonic_seconds
    ctypes.c_void_p.in_dll(mujoco_ctypes.lib(), "mjcb_time").value = ctypes.cast(clock, ctypes.c_void_p).value
    env = TimingEnv()
    # No mj_resetData in between: it also clears MuJoCo's timers.
    for _ in range(int(sys.argv[3]) // 100):
        env.step(100)
    timer = env.data._s.timer[MJ_TIMER_STEP]
    print(f"mj_step_ns={int(timer.duration * 1e9)} calls={timer.number}")


if __name__ == "__main__":
    main()
