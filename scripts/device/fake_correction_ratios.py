"""Corrected CUDA API time per operation over the fake runtime's own
ledger, for a few runs of nvtx_client (what correction_e2e_test.py checks
within 5 %), with the calibration's CUPTI and hook costs: a diagnostic of
where a machine's correction stands.

  fake_correction_ratios.py RLSCOPE CLIENT FAKE_CUPTI [RUNS]
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def ledger(prefix):
    with open(glob.glob(prefix + "*")[0]) as f:
        data = json.load(f)
    per_operation = {}
    for call in data["calls"]:
        per_operation[call["operation"]] = per_operation.get(call["operation"], 0) + call["ns"]
    return data["pid"], per_operation, sum(data.get("preempted", {}).values()), data.get("injection", {})


def main(rlscope, client, cupti, runs=3):
    scratch = tempfile.mkdtemp(prefix="rlscope-ratios-")
    env = dict(os.environ, RLSCOPE_FAKE_CUPTI_CALLBACK_NS="5000", RLSCOPE_FAKE_CUDART_SCALE="1",
               XDG_CACHE_HOME=scratch)
    calibration = os.path.join(scratch, "calibration.json")
    subprocess.run([rlscope, "calibrate", "--quick", "--calibration", calibration, "--python", sys.executable],
                   env=env, capture_output=True, check=True)
    with open(calibration) as f:
        costs = json.load(f)["costs"]
    for site in sorted(costs):
        if site.startswith("cupti:") or site in ("cuda_hook", "nvtx_range"):
            print(f"{site:32s} {costs[site]['ns']:10.1f} ns +- {costs[site]['spread_ns']:.1f}")
    for run in range(int(runs)):
        out = os.path.join(scratch, f"run{run}")
        prefix = os.path.join(scratch, f"ledger{run}")
        subprocess.run([rlscope, "run", "--quiet", "--cupti", cupti, "--calibration", calibration, "--out", out,
                        "--", client, "--steps", "300"], env=dict(env, RLSCOPE_FAKE_CUDART_LOG=prefix),
                       capture_output=True, check=True)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        pid, truth, preempted, injection = ledger(prefix)
        corrected, uncorrected = {}, {}
        for rows, into in ((report["rows"], corrected), (report["uncorrected_rows"], uncorrected)):
            for row in rows:
                if row["process"] == pid and row["category"] == "CUDA API":
                    into[row["operation"]] = into.get(row["operation"], 0) + row["ns"]
        print(f"run {run}: preempted {preempted / 1e6:.1f} ms, injection's loader {injection.get('loader_ns', 0) / 1e3:.0f}"
              f" us in {injection.get('operation')}; corrected / ledger (uncorrected / ledger): " +
              "  ".join(f"{op} {corrected.get(op, 0) / ns:.3f} ({uncorrected.get(op, 0) / ns:.2f})"
                        for op, ns in sorted(truth.items()) if ns > 0))


if __name__ == "__main__":
    main(*sys.argv[1:])
