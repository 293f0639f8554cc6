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


def test_given_git_sha_outranks_the_checkout(monkeypatch):
    """On a GPU host the copied tree's .git can name an older commit; the sha passed in wins."""
    from labkit.provenance import git_sha

    monkeypatch.setenv("LABKIT_GIT_SHA", "0" * 40)
    assert git_sha() == "0" * 40
    monkeypatch.delenv("LABKIT_GIT_SHA")
    assert git_sha() != "0" * 40
