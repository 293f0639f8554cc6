"""Median per (NVTX range, kernel) of run_c.sh's ncu logs (CuPy's sum is two kernels, pass1 and pass2):
python3 ncu_kernels.py read_counters/ncu_cc_none.log read_counters/ncu_cc_all.log"""
import collections
import re
import statistics
import sys

for f in sys.argv[1:]:
    by = collections.defaultdict(lambda: collections.defaultdict(list))
    who = kern = None
    for line in open(f, errors="replace"):
        m = re.match(r"\s+(\S+) \(\d+, \d+, \d+\)x", line)
        if m:
            kern = m.group(1).replace("cupy_cub_sum_with_dtype_", "")
        m = re.search(r"<0,(labkit_\w+)>", line)
        if m:
            who = m.group(1)
            continue
        m = re.match(r"\s+(\S+)\s+(\S+)?\s+([\d,.]+)\s*$", line)
        if m and who and "__" in m.group(1):
            by[(who, kern)][m.group(1)].append(float(m.group(3).replace(",", "")))
    print("==", f)
    for (w, k), ms in by.items():
        print(f"{w:22s} {k[:14]:14s} " + "  ".join(
            f"{n.split('.')[0].replace('dram__bytes_', '')}: {statistics.median(v):8.2f} [{min(v):.1f}-{max(v):.1f}]"
            for n, v in ms.items()))
