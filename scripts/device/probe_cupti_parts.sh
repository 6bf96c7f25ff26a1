#!/usr/bin/env bash
# Which part of CUPTI slows a training script's CUDA calls, and whether a
# cold launch path is what the calibration misses. The Python level is
# off in every profiled run (RLSCOPE_PYTHON_HOOK=off), so the CUDA calls'
# measured time (the libcudart hook's, report.json) differs between the
# configurations by CUPTI alone:
#   nocupti    --no-cupti
#   all        CUPTI as shipped: runtime and driver callbacks, activity
#   driver     RLSCOPE_CUPTI_CALLBACKS=driver (the driver's callbacks only)
#   none       RLSCOPE_CUPTI_CALLBACKS=none (activity records alone)
#   slowflush  RLSCOPE_CUPTI_FLUSH_MS=5000 (completed buffers handed over
#              every 5 s instead of every 250 ms)
# Programs: CleanRL's sac on Pendulum-v1 (STEPS, default 1500, learning
# from step 1000), and scripts/device/gpu_loops.py's torch_hot and
# torch_cold (8 tiny launches a step; cold walks 16 MB of host memory
# between steps). REPS rounds, the configurations interleaved. Per run:
# launches, the CUDA calls' measured time per launch, CUPTI's price per
# launch, kernels not tied to a launch. With .device carried and CleanRL
# in .device/bench_sources; CALIBRATION_IN=FILE reuses a calibration.
# Table last; logs in $OUT.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" probe_cupti_parts.log
reps="${REPS:-2}"
fresh_work /tmp/rlscope-cupti-parts
calibration_into_out
use_cleanrl
cd "$work" || exit 1
loops="$root/scripts/device/gpu_loops.py"
configs="${CONFIGS:-nocupti all driver none slowflush}"
programs="${PROGRAMS:-torch_hot torch_cold sac}"

profile() {  # program, config, round
  local program="$1" config="$2" i="$3" options=() env_extra=(RLSCOPE_PYTHON_HOOK=off)
  case "$config" in
    nocupti) options=(--no-cupti) ;;
    driver) env_extra+=(RLSCOPE_CUPTI_CALLBACKS=driver) ;;
    none) env_extra+=(RLSCOPE_CUPTI_CALLBACKS=none) ;;
    slowflush) env_extra+=(RLSCOPE_CUPTI_FLUSH_MS=5000) ;;
  esac
  local command=()
  case "$program" in
    sac) command=("${cleanrl[@]}" "$scripts/sac_continuous_action.py" --env-id Pendulum-v1
      --total-timesteps "${STEPS:-1500}" --learning-starts 1000 --cuda) ;;
    *) command=(python3 "$loops" "$program" "${LOOP_STEPS:-3000}") ;;
  esac
  local dir="$work/${program}_${config}_$i"
  env "${env_extra[@]}" timeout 400 "$rlscope" run --quiet --calibration "$out/calibration.json" --out "$dir" \
    "${options[@]}" -- "${command[@]}" >"$dir.stdout" 2>"$dir.stderr"
  echo "$program $config $i exit $? $(tail -1 "$dir.stdout" 2>/dev/null)"
}

for ((i = 1; i <= reps; i++)); do
  for program in $programs; do
    for config in $configs; do
      [[ -n "${DEADLINE_S:-}" ]] && ((SECONDS >= DEADLINE_S)) && break 3
      profile "$program" "$config" "$i"
    done
  done
done

echo "== summary: per run; CUDA calls measured by the hook, per launch (ns)"
python3 - "$work" <<'PY'
import collections, glob, json, os, statistics, sys
rows = collections.defaultdict(list)
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*_*_*", "report.json"))):
    name = os.path.basename(os.path.dirname(path))
    program, config, _ = name.rsplit("_", 2)
    report = json.load(open(path))
    api = sum(r["ns"] for r in report.get("uncorrected_rows") or report["rows"] if r.get("category") == "CUDA API")
    sites = (report.get("correction") or {}).get("sites") or {}
    priced = sum(s["ns"] for k, s in sites.items() if k.startswith("cupti:"))
    launches = unattributed = kernels = 0
    for process in report["processes"]:
        gpu = process.get("gpu") or {}
        launches += gpu.get("launch_calls", 0)
        unattributed += gpu.get("unattributed", 0)
        kernels += gpu.get("kernels", 0)
    calls = sum(t.get("cuda_api_calls", 0) for p in report["processes"] for t in p.get("threads", []))
    per = api / calls if calls else float("nan")
    rows[(program, config)].append(per)
    print(f"{name}: wall {report['wall_ns'] / 1e9:.2f} s, CUDA calls {calls}, measured {api / 1e9:.3f} s "
          f"({per:.0f} ns a call), CUPTI priced {priced / 1e9:.3f} s, launches {launches}, kernels {kernels}, "
          f"unattributed {unattributed}")
print("== table: median ns a CUDA call (runs), and its excess over nocupti")
for program in sorted({p for p, _ in rows}):
    base = statistics.median(rows.get((program, "nocupti"), [float("nan")]))
    for config in ["nocupti", "all", "driver", "none", "slowflush"]:
        values = rows.get((program, config))
        if not values:
            continue
        m = statistics.median(values)
        print(f"{program:<11} {config:<10} {m:7.0f} ns  (+{m - base:5.0f})  runs {len(values)} "
              f"[{min(values):.0f}..{max(values):.0f}]")
PY
