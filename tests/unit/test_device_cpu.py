import pytest

from labkit.cuda import check, gpu_status
from labkit.errors import LaunchError, NoGPU


def test_no_gpu_is_reported_cleanly():
    ok, reason = gpu_status()
    if ok:
        pytest.skip("this machine has a GPU")
    from labkit.device import describe

    with pytest.raises(NoGPU, match="needs a CUDA GPU"):
        describe()
    assert reason


def test_check_unwraps_results():
    class Err(int):
        name = "CUDA_ERROR_INVALID_VALUE"

    assert check((0, 5), "x") == 5
    assert check((0, 1, 2), "x") == (1, 2)
    assert check((0,), "x") is None
    with pytest.raises(LaunchError, match="cuFoo failed: CUDA_ERROR_INVALID_VALUE"):
        check((Err(1),), "cuFoo")
