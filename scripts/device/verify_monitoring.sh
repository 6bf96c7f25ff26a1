#!/usr/bin/env bash
# Device check of the sys.monitoring backend (CPython 3.12+) on the GPU
# machine, with .device carried (scripts/device/bundle.sh; for part 3 the
# pinned third-party sources in .device/bench_sources, see
# verify_inference_accuracy.sh):
#   1. raw overhead: the bundled dqn, ppo and dqn_jax with --device cuda,
#      unprofiled, under rlscope with sys.monitoring, and under rlscope with
#      the profile function (RLSCOPE_PYTHON_HOOK=profile), interleaved,
#      ROUNDS rounds (default 2)
#   2. what each backend shows of the JAX run: per operation and level
#   3. the inference-accuracy benchmark under sys.monitoring
# Full logs in $OUT; a short table is printed last.
#   device: bash scripts/device/verify_monitoring.sh [ROUNDS]
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh" verify_monitoring.log
rounds="${1:-2}"
python="$(command -v python3)"
echo "== machine"; "$python" -c 'import sys, torch, jax; print(sys.version.split()[0], "torch", torch.__version__, "jax", jax.__version__)'
declare -A args=([dqn]="dqn.py --device cuda --steps 800" [ppo]="ppo.py --device cuda --steps 1500"
                 [jax]="dqn_jax.py --device cuda --steps 800")
for round in $(seq "$rounds"); do
  for name in dqn ppo jax; do
    read -r -a command <<< "${args[$name]}"
    command[0]="$workloads/${command[0]}"
    echo "== round $round $name plain"
    "$python" "${command[@]}" --quiet | tee -a "$out/$name.plain.txt"
    echo "== round $round $name monitoring"
    "$rlscope" run --quiet --out "$out/$name.monitoring.$round" -- "$python" "${command[@]}" --quiet |
      tee -a "$out/$name.monitoring.txt"
    echo "== round $round $name profile"
    RLSCOPE_PYTHON_HOOK=profile "$rlscope" run --quiet --out "$out/$name.profile.$round" -- "$python" "${command[@]}" \
      --quiet | tee -a "$out/$name.profile.txt"
  done
done
sources=()
if [[ -d "$bundle/bench_sources" ]]; then sources=(--sources "$bundle/bench_sources"); fi
echo "== 3. inference accuracy (sys.monitoring)"
"$python" "$root/scripts/bench/inference_accuracy.py" run --rlscope "$rlscope" --python "$python" "${sources[@]}" \
  --keep "$out/accuracy" --markdown > "$out/accuracy.md" 2>&1
echo "== summary"
"$python" - "$out" "$rounds" <<'PY'
import json, os, re, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def walls(name, mode):
    path = os.path.join(out, f"{name}.{mode}.txt")
    return [float(x) for x in re.findall(r"wall_s=([0-9.]+)", open(path).read())] if os.path.exists(path) else []
print("| workload | plain wall_s | sys.monitoring wall_s | profile function wall_s | raw, min/min: monitoring / profile |")
print("|---|---|---|---|---|")
for name in ("dqn", "ppo", "jax"):
    plain, mon, prof = walls(name, "plain"), walls(name, "monitoring"), walls(name, "profile")
    ratio = lambda xs: f"{min(xs) / min(plain):.3f}x" if xs and plain else "-"
    print(f"| {name} | {' '.join(map(str, plain))} | {' '.join(map(str, mon))} | {' '.join(map(str, prof))} | "
          f"{ratio(mon)} / {ratio(prof)} |")
for mode in ("monitoring", "profile"):
    try:
        report = json.load(open(os.path.join(out, f"jax.{mode}.1", "report.json")))
    except Exception as error:
        print(f"jax {mode}: no report ({error})")
        continue
    by = {}
    for r in report["rows"]:
        if r["resource"] != "GPU":
            by.setdefault(r["operation"], {}).setdefault(r["category"], 0)
            by[r["operation"]][r["category"]] += r["ns"]
    problems = [p for proc in report["processes"] for p in proc["problems"]]
    print(f"jax {mode}: " + "; ".join(f"{op} " + ",".join(f"{c}={ns / 1e6:.0f}ms" for c, ns in sorted(cats.items()))
                                      for op, cats in sorted(by.items(), key=lambda kv: -sum(kv[1].values()))[:6]))
    print(f"jax {mode}: problems {problems[:3]}")
text = open(os.path.join(out, "accuracy.md")).read() if os.path.exists(os.path.join(out, "accuracy.md")) else ""
print("\n".join(line for line in text.splitlines() if line.startswith("|"))[-3000:])
PY
