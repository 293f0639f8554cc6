"""Median per (context, kernel, shape) of the ncu logs of run_a.sh: duration, DRAM bytes, instructions, SM clock."""
import collections
import re
import statistics
import sys

for path in sys.argv[1:]:
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    who = None
    passes = set()
    for line in open(path, errors="replace"):
        m = re.search(r"<0,(labkit_\w+)>", line)
        if m:
            who = m.group(1)
            continue
        m = re.search(r"(\d+) pass", line)
        if m:
            passes.add(int(m.group(1)))
        m = re.match(r"\s+(\S+)\s+(\S+)?\s+([\d,.]+)\s*$", line)
        if m and who and "__" in m.group(1):
            by[who][m.group(1)].append(float(m.group(3).replace(",", "")))
    print(f"== {path.rsplit('/', 1)[-1]} (passes {sorted(passes)})")
    for who, metrics in by.items():
        cells = [f"{k.split('.')[0].replace('gpu__time_duration', 'us').replace('dram__bytes_', 'dram_')}"
                 f" {statistics.median(v):10.2f}" for k, v in metrics.items()]
        n = len(next(iter(metrics.values())))
        print(f"{who:16s} n={n}  " + "  ".join(cells) + "   all us: "
              + " ".join(f"{x:.1f}" for x in metrics.get("gpu__time_duration.sum", [])))
