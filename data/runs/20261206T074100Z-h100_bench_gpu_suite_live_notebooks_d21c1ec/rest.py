# the decode GPU tests the first call did not reach: pytest with every finished test deselected
import os, sys, pytest
ids = ".site/done_ids.txt" if os.path.exists(".site/done_ids.txt") else ".dbg/s85/done_ids.txt"
done = open(ids).read().split()
print(f"deselecting {len(done)} finished tests ({ids})", flush=True)
args = ["-v", "-rs", "-p", "no:cacheprovider", "-m", "gpu", "tests/gpu/test_decode_gpu.py"]
for node in done:
    args += ["--deselect", node]
sys.exit(pytest.main(args))
