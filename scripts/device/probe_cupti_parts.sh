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
#   bare       the program without rlscope: the loops' own time and the
#              wall time the others' corrections aim at
# Programs: CleanRL's sac on Pendulum-v1 (STEPS, default 1500, learning
# from step 1000), and scripts/device/gpu_loops.py's torch_hot and
# torch_cold (8 tiny launches a step; cold walks 16 MB of host memory
# between steps) and torch_queued (8 launches of 40 us of GPU work a step:
# the GPU bounds it, so CUPTI's GPU-side cost shows in the loop's time and
# a correction of CPU-side costs over-corrects it). REPS rounds, the configurations interleaved. Per run:
# launches, the CUDA calls' measured time per launch, CUPTI's price per
# launch, kernels not tied to a launch, the loop's own time, the wall
# time as measured and as corrected. With .device carried and CleanRL
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
configs="${CONFIGS:-bare nocupti all driver none slowflush}"
programs="${PROGRAMS:-torch_hot torch_cold torch_queued sac}"

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
  if [[ "$config" == bare ]]; then
    mkdir -p "$dir"
    local begin_ns end_ns
    begin_ns=$(date +%s%N)
    timeout 400 "${command[@]}" >"$dir.stdout" 2>"$dir.stderr"
    local code=$?
    end_ns=$(date +%s%N)
    echo "$((end_ns - begin_ns))" >"$dir/bare_wall_ns"
    echo "$program $config $i exit $code $(tail -1 "$dir.stdout" 2>/dev/null)"
    return
  fi
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
import collections, glob, json, os, re, statistics, sys
rows = collections.defaultdict(list)   # (program, config) -> ns a CUDA call
loops = collections.defaultdict(list)  # (program, config) -> the loop's own ms
walls = collections.defaultdict(list)  # (program, config) -> (wall, corrected wall) s
def loop_ms(run_dir):
    try:
        match = re.search(r" ([0-9.]+) ms ", open(run_dir + ".stdout").read())
        return float(match.group(1)) if match else None
    except OSError:
        return None
for run_dir in sorted(glob.glob(os.path.join(sys.argv[1], "*_*_*[0-9]"))):
    if not os.path.isdir(run_dir):
        continue
    name = os.path.basename(run_dir)
    program, config, _ = name.rsplit("_", 2)
    ms = loop_ms(run_dir)
    if ms is not None:
        loops[(program, config)].append(ms)
    if config == "bare":
        try:
            wall = int(open(os.path.join(run_dir, "bare_wall_ns")).read()) / 1e9
            walls[(program, config)].append((wall, wall))
            print(f"{name}: wall {wall:.2f} s, loop {ms} ms")
        except (OSError, ValueError):
            pass
        continue
    path = os.path.join(run_dir, "report.json")
    if not os.path.exists(path):
        continue
    report = json.load(open(path))
    api = sum(r["ns"] for r in report.get("uncorrected_rows") or report["rows"] if r.get("category") == "CUDA API")
    sites = (report.get("correction") or {}).get("sites") or {}
    priced = sum(s["ns"] for k, s in sites.items() if k.startswith("cupti:"))
    restored = (report.get("correction") or {}).get("wait_restored_ns", 0)
    launches = unattributed = kernels = 0
    for process in report["processes"]:
        gpu = process.get("gpu") or {}
        launches += gpu.get("launch_calls", 0)
        unattributed += gpu.get("unattributed", 0)
        kernels += gpu.get("kernels", 0)
    calls = sum(t.get("cuda_api_calls", 0) for p in report["processes"] for t in p.get("threads", []))
    per = api / calls if calls else float("nan")
    rows[(program, config)].append(per)
    wall = report["wall_ns"] / 1e9
    corrected = report.get("corrected_wall_ns", report["wall_ns"]) / 1e9
    walls[(program, config)].append((wall, corrected))
    print(f"{name}: wall {wall:.2f} s, corrected {corrected:.2f} s, loop {ms} ms, CUDA calls {calls}, "
          f"measured {api / 1e9:.3f} s ({per:.0f} ns a call), CUPTI priced {priced / 1e9:.3f} s, "
          f"given back to waits {restored / 1e9:.3f} s, "
          f"launches {launches}, kernels {kernels}, unattributed {unattributed}")
    # Where the rest of the time went: the measured rows by category and
    # resource, GPU busy time and what CUPTI reported as its own overhead.
    by_category = collections.Counter()
    for r in report.get("uncorrected_rows") or report["rows"]:
        by_category[f"{r.get('category')}/{r.get('resource')}"] += r["ns"]
    busy = sum((p.get("gpu") or {}).get("busy_ns", 0) for p in report["processes"])
    cupti_own = sum((p.get("gpu") or {}).get("cupti_overhead_ns", 0) for p in report["processes"])
    threads = sum(len(p.get("threads", [])) for p in report["processes"])
    print("    rows: " + ", ".join(f"{k} {v / 1e9:.2f}" for k, v in by_category.most_common(8)) +
          f"; GPU busy {busy / 1e9:.2f} s; CUPTI's own overhead records {cupti_own / 1e9:.3f} s; threads {threads}")
def median(values):
    return statistics.median(values) if values else float("nan")
print("== table: median ns a CUDA call and its excess over nocupti; the loop's own ms; "
      "wall and corrected wall (s), corrected against bare")
for program in sorted({p for p, _ in walls}):
    base = median(rows.get((program, "nocupti"), []))
    bare_wall = median([w for w, _ in walls.get((program, "bare"), [])])
    for config in ["bare", "nocupti", "all", "driver", "none", "slowflush"]:
        if (program, config) not in walls:
            continue
        per = median(rows.get((program, config), []))
        ms = median(loops.get((program, config), []))
        wall = median([w for w, _ in walls[(program, config)]])
        corrected = median([c for _, c in walls[(program, config)]])
        bias = (corrected - bare_wall) / bare_wall * 100 if bare_wall == bare_wall else float("nan")
        print(f"{program:<12} {config:<10} call {per:6.0f} ns (+{per - base:5.0f})  loop {ms:8.1f} ms  "
              f"wall {wall:6.2f}  corrected {corrected:6.2f} ({bias:+5.1f} %)  runs {len(walls[(program, config)])}")
PY
