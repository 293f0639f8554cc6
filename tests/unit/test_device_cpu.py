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


def test_provenance_names_the_hosts_cpu():
    """Host-side costs scale with the CPU: a record says which CPU, from /proc/cpuinfo, and how many there are."""
    import os
    import platform
    from pathlib import Path

    from labkit.provenance import collect

    host = collect()["host"]
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert host.startswith(platform.node() + " (") and host.endswith(f", {usable} CPUs)")
    cpuinfo = Path("/proc/cpuinfo")
    model = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                  if line.startswith("model name")), None) if cpuinfo.exists() else None
    if model is not None:  # aarch64 hosts (GH200) have no "model name" line
        assert f"({model}," in host


def test_launch_overhead_note_tells_a_host_paced_bar_from_the_gpus_rate():
    from labkit.probes import launch_overhead_note

    paced = launch_overhead_note({"gpu_back_to_back_us": 7.48, "host_enqueue_us": 7.60, "gpu_graph_us": 0.68})
    assert "is the host's enqueue rate (7.60 us)" in paced and "one costs 0.68 us" in paced
    # a review: the first version had these two the wrong way round (a GPU slower than the host called host-paced)
    own = launch_overhead_note({"gpu_back_to_back_us": 3.0, "host_enqueue_us": 1.5, "gpu_graph_us": 0.68})
    assert "is slower than the host's enqueue (1.50 us): the launches queued" in own and "the GPU's own rate" in own
    odd = launch_overhead_note({"gpu_back_to_back_us": 2.1, "host_enqueue_us": 4.7, "gpu_graph_us": 0.68})
    assert "the two loops disagree" in odd


class _FakeNvml:
    """NVML's calls that labkit.device makes, answering as the H200s' driver does (bytes from older bindings)."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2

    def __init__(self, vbios=b"96.00.AF.00.01", board=b"692-2G520-0282-001"):
        self.vbios, self.board = vbios, board

    def nvmlDeviceGetMaxClockInfo(self, h, clock):
        return 1980 if clock == self.NVML_CLOCK_SM else 3201

    def nvmlSystemGetDriverVersion(self):
        return "580.159.04"

    def nvmlDeviceGetUUID(self, h):
        return b"GPU-c3c27dd3-95ef-d1cc-f680-ea7733b19a22"

    def nvmlDeviceGetVbiosVersion(self, h):
        if isinstance(self.vbios, Exception):
            raise self.vbios
        return self.vbios

    def nvmlDeviceGetBoardPartNumber(self, h):
        if isinstance(self.board, Exception):
            raise self.board
        return self.board


def test_nvml_facts_keep_the_vbios_and_board_and_a_driver_without_them_keeps_the_rest(monkeypatch):
    """The VBIOS and the board part number go into every record's device (what sets an H200's state is not known;
    the board revision is a candidate, the firmware was the same in both states), and an NVML that cannot give one
    still gives the rest."""
    import labkit.device as device

    monkeypatch.setattr(device, "_nvml_handle", lambda index: (_FakeNvml(), object()))
    assert device.nvml_facts(0) == {"sm_clock_max_hz": 1_980_000_000, "mem_clock_max_hz": 3_201_000_000,
                                    "driver_version": "580.159.04", "uuid": "GPU-c3c27dd3-95ef-d1cc-f680-ea7733b19a22",
                                    "vbios_version": "96.00.AF.00.01", "board_part_number": "692-2G520-0282-001"}
    monkeypatch.setattr(device, "_nvml_handle", lambda index: (_FakeNvml(RuntimeError("not supported")), object()))
    facts = device.nvml_facts(0)
    assert "vbios_version" not in facts and facts["uuid"].startswith("GPU-c3c27dd3")
    assert facts["board_part_number"] == "692-2G520-0282-001"
    no_board = _FakeNvml(board=RuntimeError("not supported"))
    monkeypatch.setattr(device, "_nvml_handle", lambda index: (no_board, object()))
    facts = device.nvml_facts(0)
    assert "board_part_number" not in facts and facts["vbios_version"] == "96.00.AF.00.01"
    monkeypatch.setattr(device, "_nvml_handle", lambda index: (None, None))
    assert device.nvml_facts(0) == {}


def test_device_info_reads_records_with_and_without_the_vbios_and_board():
    import json

    from labkit.device import DeviceInfo
    from labkit.errors import LabkitError

    from ..conftest import ROOT

    old = json.loads((ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json").read_text())
    old = old["provenance"]["device"]
    assert "vbios_version" not in old and DeviceInfo.from_dict(old).vbios_version is None
    dev = DeviceInfo.from_dict({**old, "vbios_version": "96.00.AF.00.01"})
    assert dev.vbios_version == "96.00.AF.00.01" and DeviceInfo.from_dict(dev.to_dict()) == dev
    with pytest.raises(LabkitError, match="vbios_version"):
        DeviceInfo.from_dict({**old, "vbios_version": 96})
    assert DeviceInfo.from_dict(old).board_part_number is None
    dev = DeviceInfo.from_dict({**old, "vbios_version": "96.00.A5.00.1A", "board_part_number": "692-2G520-0282-000"})
    assert dev.board_part_number == "692-2G520-0282-000" and DeviceInfo.from_dict(dev.to_dict()) == dev
    with pytest.raises(LabkitError, match="board_part_number"):
        DeviceInfo.from_dict({**old, "board_part_number": ["692"]})
