#!/usr/bin/env python3
"""The table the device checks print last: one row per `rlscope validate`
run under WORK (WORK/NAME/validate.json), with its raw overhead, the bias
of its corrected wall time and the Python hook's timed time against its
price; every validate.json merged into OUT/validate_all.json. With
--costs, the calibration's costs (OUT/calibration.json) follow.

  validate_table.py WORK OUT [--costs]"""
import glob
import json
import os
import sys


def validation_rows(name, v):
    s = v.get("summary", {})
    if not s:
        return [(name, f"{v.get('status')}: {v.get('message')}")]
    raw, bias = s["raw_overhead"], s.get("bias") or {}
    text = "raw %.3fx [%.3f..%.3f]" % (raw["mean"], raw["min"], raw["max"])
    if bias.get("mean") is not None:
        text += ", bias %+.2f%% [%+.2f..%+.2f] sd %.2f%%" % (100 * bias["mean"], 100 * bias["min"], 100 * bias["max"],
                                                            100 * (bias["stddev"] or 0))
    else:
        text += ", uncorrected: " + str(v.get("correction_message"))
    text += ", unprofiled %.2f s" % s["unprofiled_wall_s"]["mean"]
    rows = [(name, text)]
    # The Python hook timed in-band in each profiled run, against its price.
    reps = [r for r in v.get("repetitions", []) if r.get("python_hook_ns") is not None]
    if reps:
        hook = sum(r["python_hook_ns"] for r in reps) / len(reps)
        priced = sum(r["python_hook_priced_ns"] for r in reps) / len(reps)
        unprofiled = sum(r["unprofiled_wall_ns"] for r in reps) / len(reps)
        rows.append(("  python hook", "timed %.3f s, priced %.3f s (%+.1f %% of unprofiled wall)"
                     % (hook / 1e9, priced / 1e9, 100 * (hook - priced) / unprofiled)))
    return rows


def main():
    work, out = sys.argv[1:3]
    merged, rows = {}, []
    for path in sorted(glob.glob(os.path.join(work, "*", "validate.json"))):
        name = os.path.basename(os.path.dirname(path))
        with open(path) as f:
            merged[name] = json.load(f)
        rows += validation_rows(name, merged[name])
    with open(os.path.join(out, "validate_all.json"), "w") as f:
        json.dump(merged, f, indent=1)
    if "--costs" in sys.argv[3:]:
        with open(os.path.join(out, "calibration.json")) as f:
            costs = json.load(f)["costs"]
        for site in sorted(costs):
            rows.append(("cost " + site, "%.1f ns +- %.1f" % (costs[site]["ns"], costs[site]["spread_ns"])))
    width = max((len(k) for k, _ in rows), default=0)
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
