"""The rule's A/B gate: plan (the rule's build) against --build stages=3 (the 4-warp plan before it) at the rule's
points, both rounds. Keep when the mean is at least 0.5 % faster, no run is over 1 % slower and no point is over 0.3 % slower in
both rounds. Prints one line per point and PASS or FAIL."""
import glob, json, os, re, statistics, sys

R = sys.argv[1]
rule = {}
for path in sorted(glob.glob(f"{R}/cmp_*_r*.json")):
    pt, rnd = re.search(r"cmp_(\d+x\d+)_r(\d)", path).groups()
    doc = json.load(open(path))
    rows = {r["build"]: r for rs in doc["split_sweeps"].values() for r in rs}
    if "stages=3" not in rows:
        continue
    d = rows["plan"]["p50_us"] / rows["stages=3"]["p50_us"] - 1
    rule.setdefault(pt, []).append(d)
    print(f"{pt} r{rnd}: plan {rows['plan']['kernel']} x{rows['plan']['splits']} {rows['plan']['p50_us']:.2f} us, "
          f"4-warp {rows['stages=3']['kernel']} x{rows['stages=3']['splits']} {rows['stages=3']['p50_us']:.2f} us: {100 * d:+.2f} %")
allds = [d for ds in rule.values() for d in ds]
ok = (len(allds) >= 10 and statistics.mean(allds) <= -0.005 and max(allds) <= 0.01
      and not any(len(ds) > 1 and min(ds) > 0.003 for ds in rule.values()))
print(f"mean {100 * statistics.mean(allds):+.2f} %, worst {100 * max(allds):+.2f} % over {len(allds)} runs:",
      "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
