# As run on the device (bash .dbg/paging/run_order_test.sh <full sha>): the new ordering test, the same check with the
# wrapper labkit had before f54f87c (ExternalStream of CuPy's current stream, the null one included), the timing GPU tests
# and the decode peers test, then the Sage2 bench at a small shape (its torch SDPA and FA3 peers use the shared wrapper).
export R=/tmp/res; mkdir -p $R; trap 'cp /tmp/res/* $OUT/ 2>/dev/null; true' EXIT
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl_min/*.whl .whl_peers/*.whl 2>&1 | tail -2
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 LABKIT_BATCH=1 MPLBACKEND=Agg LABKIT_CACHE=/tmp/labkit-cache LABKIT_GIT_SHA=$1
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv > $R/smi.csv; cat $R/smi.csv
python3 - > $R/old_wrapper.log 2>&1 <<'PY'
import cupy as cp, torch, sys
sys.path.insert(0, "tests/gpu")
from test_timing_gpu import _ordering_seen
def old(call):
    def run():
        with torch.cuda.stream(torch.cuda.ExternalStream(cp.cuda.get_current_stream().ptr)):
            return call()
    return run
for name, ctx in (("null", cp.cuda.Stream.null), ("own", cp.cuda.Stream(non_blocking=True))):
    for i in range(3):
        with ctx:
            print("old wrapper", name, i, "(seen, written):", _ordering_seen(cp, old), flush=True)
PY
cat $R/old_wrapper.log
timeout 240 python3 -m pytest -q -m gpu tests/gpu/test_timing_gpu.py "tests/gpu/test_decode_gpu.py::test_peers_run_on_labkits_own_kv_and_agree_with_its_output" -p no:cacheprovider -rs --durations=5 > $R/gpu_tests.log 2>&1 || echo "pytest rc $?"; tail -12 $R/gpu_tests.log
timeout 150 python3 -m labkit bench --shape 1,4096,8,128 --iterations 3 > $R/sage2_bench.log 2>&1 || echo "sage2 bench rc $?"; tail -14 $R/sage2_bench.log | cut -c1-200
