"""Tensor-map encoding and the proof kernel end to end through its manifest (GPU)."""

import numpy as np
import pytest

from labkit import cli
from labkit.errors import LaunchError
from labkit.manifest import ManifestError, Runner, load, proof
from labkit.manifest.model import TensorMapField

from ..conftest import ROOT

pytestmark = pytest.mark.gpu
SEED = ROOT / "data" / "trtllm_gen_decode_manifest_v4.json"


def test_encode_seed_kv_map_with_derived_pages():
    import cupy as cp

    from labkit.manifest import tensormap

    m = load(SEED)
    f: TensorMapField = m.ops["decode"].launches[0].args[0].fields[1]
    kv = cp.zeros(m.buffers["kv"].nbytes, dtype=cp.uint8)
    dims, derived = tensormap.derive_dims(f, kv.nbytes, 262144)
    assert derived == {3: 22}
    raw = tensormap.encode(f, dims, int(kv.data.ptr) + 262144)
    assert len(raw) == 128 and any(raw)
    with pytest.raises(LaunchError, match="cuTensorMapEncodeTiled"):
        tensormap.encode(f, f.dims, int(kv.data.ptr) + 262144)  # dims[3] = 0: the driver refuses


@pytest.mark.parametrize("rows, cols", [(1000, 200), (33, 36), (64, 64), (1, 4)])
def test_proof_kernel_through_its_manifest(tmp_path, rows, cols):
    import cupy as cp

    path = proof.build(tmp_path, rows, cols, arch="sm_90")
    rng = np.random.default_rng(rows * 7919 + cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    bias = rng.standard_normal(cols).astype(np.float32)
    inputs = {"x": x, "bias": bias}

    r = Runner(load(path), cubin_dirs=(tmp_path,), fill=lambda name, arr: arr.set(inputs[name]))
    assert np.isnan(cp.asnumpy(r.buffers["out"])).all()  # poisoned before the run
    ctas = -(-rows // 32) * -(-cols // 32)
    for _ in range(2):  # the counter is zeroed before every launch
        r.buffers["out"].fill(cp.nan)
        r.buffers["done"].fill(-1)
        r.run_once()
        out = cp.asnumpy(r.buffers["out"])
        np.testing.assert_allclose(out, proof.reference(x, bias), rtol=1e-6, atol=1e-6)
        assert int(r.buffers["done"][0]) == ctas
    timings = r.time(iterations=20)
    assert timings["proof/tma_scale"].stats.count == 20
    g = r.time(iterations=5, mode="graph")["proof/tma_scale"]
    assert g.calls_per_sample >= 10


def test_seed_is_refused_on_this_gpu_before_any_launch():
    with pytest.raises(ManifestError, match="built for sm_100f"):
        Runner(load(SEED), vars={"tokens": 2})


def test_cli_pack_encodes_tensor_maps(tmp_path, capsys):
    out = tmp_path / "blob.bin"
    assert cli.main(["manifest", "pack", str(SEED), "--var", "tokens=2", "--out", str(out)]) == 0
    blob = out.read_bytes()
    assert len(blob) == 1280 and any(blob[0:128]) and any(blob[128:256]) and not any(blob[256:384])
    assert "tensor maps encoded" in capsys.readouterr().out


def test_cli_run_proof(tmp_path, capsys):
    path = proof.build(tmp_path, 256, 128)
    assert cli.main(["manifest", "run", str(path), "--cubin-dir", str(tmp_path), "--iters", "10",
                     "--json", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "proof/tma_scale" in out and (tmp_path / "t.json").is_file()
