# As run on the device from the repository root (bash .dbg/l2pf/run_l2pf.sh <full sha> [A/B seconds] [points]): the
# prefetch builds' GPU tests, then the L2-prefetch A/B (none of the plan's builds change), then a SASS check.
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.mem,power.limit,temperature.gpu --format=csv > $R/smi.csv; cat $R/smi.csv
s=$(date +%s); timeout 120 python3 -m pytest -q -m gpu tests/gpu/test_decode_gpu.py -k l2_prefetch -p no:cacheprovider > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; echo "pytest $(( $(date +%s) - s )) s"; tail -3 $R/gpu_tests.log
timeout ${2:-420} python3 .dbg/l2pf/ab_l2pf.py ${@:3} > $R/ab_l2pf.log 2>&1 || echo "rc $?"
grep -E "^AB|elapsed|Error|differs|check" $R/ab_l2pf.log | cut -c1-130
python3 - <<'PY' > $R/sass_check.log 2>&1
from labkit.workloads.decode.geometry import DecodeGeometry
from labkit.workloads.decode.plan import plan_call
from labkit.workloads.decode.build import compile_kernel
import subprocess, tempfile, os
g = DecodeGeometry(1, 32, 8, 128, 64, 128, 128)
with tempfile.TemporaryDirectory() as d:
    for pf in (None, 5):
        kb = plan_call(g, l2_prefetch=pf).kernel
        path = os.path.join(d, f"k{pf}.cubin"); open(path, "wb").write(compile_kernel(kb).image)
        sass = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True).stdout
        print(pf, {op: sass.count(op) for op in ("UTMALDG", "UTMAPF", "UBLKPF")})
PY
cat $R/sass_check.log
