"""Steps the bundled cart-pole model with mj_step through ctypes inside a
function the default rules call simulation, with MuJoCo's own profiler
timing every step (mjcb_time set to a C clock). Prints MuJoCo's total
mj_step time and call count, and how long the stepping thread waited for a
CPU meanwhile (its schedstat run delay, -1 where the kernel does not say):
  mj_step_ns=N calls=N preempted_ns=N

  mujoco_step_timing.py WORKLOADS_DIR LIBMJTIMER STEPS
"""
import ctypes
import sys

sys.path.insert(0, sys.argv[1])
import mujoco_ctypes  # noqa: E402
from cartpole_env import MODEL_PATH  # noqa: E402

MJ_TIMER_STEP = 0


def run_delay_ns():
    """The calling thread's run delay (test/support/run_delay.h says why)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return -1


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
    delay_before = run_delay_ns()
    for _ in range(int(sys.argv[3]) // 100):
        env.step(100)
    delay_after = run_delay_ns()
    preempted = delay_after - delay_before if delay_before >= 0 and delay_after >= 0 else -1
    timer = env.data._s.timer[MJ_TIMER_STEP]
    print(f"mj_step_ns={int(timer.duration * 1e9)} calls={timer.number} preempted_ns={preempted}")


if __name__ == "__main__":
    main()
