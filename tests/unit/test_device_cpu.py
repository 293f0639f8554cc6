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
    # both paces are timed over the same launches, so a GPU ahead of the host is the clocks' disagreement; the note
    # had guessed at "launches left queued from before the timing", which the synchronize before it rules out
    assert "is faster than the host enqueued them (4.70 us), over the same launches: the host's clock and the GPU's " \
           "disagree" in odd and "left queued" not in odd


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


def test_git_sha_is_the_checkouts_commit_dirty_when_a_tracked_file_differs_and_unknown_outside_git(tmp_path,
                                                                                                    monkeypatch):
    """What a record's git_sha says of the code it came from (a test audit: 'unknown' in every checkout passed)."""
    import subprocess

    import labkit._env
    from labkit.provenance import git_sha

    monkeypatch.delenv("LABKIT_GIT_SHA", raising=False)
    monkeypatch.setattr(labkit._env, "repo_root", lambda: tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # git looks no further up than tmp_path
    assert git_sha() == "unknown"  # no .git here
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "k.cu").write_text("// a kernel\n")
    subprocess.run([*git, "add", "k.cu"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "k"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    assert git_sha() == head
    (tmp_path / "notes.txt").write_text("untracked: not a change to the code\n")
    assert git_sha() == head
    (tmp_path / "k.cu").write_text("// a kernel, edited\n")
    assert git_sha() == head + "-dirty"


def test_versions_name_labkits_own_version_when_it_runs_from_a_source_tree(monkeypatch):
    import importlib.metadata

    from labkit import __version__
    from labkit.provenance import versions

    real = importlib.metadata.version

    def not_installed(name):
        if name == "labkit":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert versions()["labkit"] == __version__


def test_provenance_counts_the_cpus_this_process_may_use_not_the_machines(monkeypatch):
    """A job held to 3 of 64 CPUs (a cgroup or taskset) records 3: what its host-side costs ran on."""
    import os

    from labkit.provenance import host

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2} if pid == 0 else set(range(64)), raising=False)
    assert host().endswith(", 3 CPUs)")


def test_timing_overhead_table_adds_each_wrapper_over_the_bare_launch_and_holds_the_timed_one_to_its_target():
    """What `labkit bench` prints first: one row per wrapper, its cost over the bare launch, and whether labkit's timed
    launch (NVTX + events) stays within 3 us; exactly 3 us meets it."""
    from labkit.probes import timing_overhead_table

    r = {"launches": 2000, "bare_us": 2.0, "nvtx_us": 2.4, "events_us": 3.1, "nvtx_events_us": 3.5,
         "fresh_events_us": 9.25}
    assert timing_overhead_table(r).splitlines() == [
        "host time per launch of an empty kernel, 2000 launches (best of 3)",
        "  bare                2.00 us",
        "  nvtx                2.40 us  (+0.40 over bare)",
        "  events              3.10 us  (+1.10 over bare)",
        "  nvtx_events         3.50 us  (+1.50 over bare)",
        "  fresh_events        9.25 us  (+7.25 over bare)",
        "  labkit's timed launch adds 1.50 us: meets the <= 3 us target"]
    assert timing_overhead_table({**r, "nvtx_events_us": 5.0}).endswith("adds 3.00 us: meets the <= 3 us target")
    assert timing_overhead_table({**r, "nvtx_events_us": 5.5}).endswith("adds 3.50 us: MISSES the <= 3 us target")


def test_the_copy_tables_read_times_under_a_second_and_rates_under_one_tb_per_s():
    """Notebook 00's copy table: p50 in ms from the probe's seconds; and the cold-L2 table keeps a copy slower than
    1 TB/s (a small cold one), where a bound of 1 would have refused the recorded run."""
    from labkit.probes import cold_l2_table, copy_table

    result = {"nbytes": 1 << 30, "mode": "cold", "memcpy": {"p50_s": 2.5e-4, "GBps_read_plus_write": 8589.9},
              "kernel": {"p50_s": 2.6e-4, "GBps_read_plus_write": 8259.5, "name": "copy"}}
    table = copy_table(result)
    assert list(table.index) == ["memcpy", "kernel"] and list(table["bytes"]) == [1 << 30] * 2
    assert list(table["p50_ms"]) == pytest.approx([0.25, 0.26])
    slow = cold_l2_table({"rows": [{"MiB": 16, "mode": "cold", "p50_s": 4e-5, "TBps_read_plus_write": 0.84}]})
    assert slow.to_dict("records") == [{"MiB": 16, "mode": "cold", "p50_us": pytest.approx(40.0), "TBps": 0.84}]


def test_sm_clock_is_nvmls_mhz_in_hz_and_none_without_nvml(monkeypatch):
    import labkit.device as device

    class Clocks(_FakeNvml):
        def nvmlDeviceGetClockInfo(self, h, clock):
            return 1755 if clock == self.NVML_CLOCK_SM else 2619

    monkeypatch.setattr(device, "_nvml_handle", lambda index: (Clocks(), object()))
    assert device.sm_clock_hz(0) == 1_755_000_000
    monkeypatch.setattr(device, "_nvml_handle", lambda index: (None, None))
    assert device.sm_clock_hz(0) is None


def test_a_device_without_nvmls_facts_reads_shows_them_as_not_recorded_and_stays_frozen():
    """A record made without NVML has null clocks and no uuid: it reads, and the notebook's device table says 'not
    recorded' there, each recorded value as it is. A description is frozen: describe() hands out one per device."""
    import dataclasses
    import json

    from labkit.device import DeviceInfo

    from ..conftest import ROOT

    old = json.loads((ROOT / "data" / "runs" / "20261204T185600Z-decode_bench_targets" / "sweep.json").read_text())
    bare = DeviceInfo.from_dict({**old["provenance"]["device"], "sm_clock_max_hz": None, "mem_clock_max_hz": None,
                                 "uuid": None})
    assert bare.sm_clock_max_hz is None and bare.mem_clock_max_hz is None
    shown = bare.to_frame()["value"]
    assert shown["sm_clock_max_hz"] == "not recorded" and shown["uuid"] == "not recorded"
    assert shown["name"] == bare.name and shown["sm_count"] == bare.sm_count
    with pytest.raises(dataclasses.FrozenInstanceError):
        bare.sm_count = 1
    # a new-user review: notebook 00 showed l2_bytes 62914560, memory_bytes 150109880320, sm_clock_max_hz 1980000000
    # and the GPU's index; it shows each in its unit, under a name without the unit
    device = DeviceInfo.from_dict(old["provenance"]["device"])
    units = device.shown()["value"]
    assert "index" not in units and "l2_bytes" not in units
    assert (units["l2"], units["smem_per_sm"], units["smem_per_block_optin"]) == ("60 MiB", "228 KiB", "227 KiB")
    assert units["memory"] == f"{device.memory_bytes / 2**30:.1f} GiB" and units["sm_clock_max"] == "1980 MHz"
    assert units["compute_capability"] == "9.0 (sm_90)" and units["cuda_driver_version"].startswith("CUDA 1")
    assert units["sm_count"] == "132" and units["name"] == "NVIDIA H200"
    assert bare.shown()["value"]["sm_clock_max"] == "not recorded"


def test_notebook_00_shows_the_copy_table_in_mib_us_and_gb_per_s():
    """A new-user review: the copy table showed bytes 1073741824 and 4232.662658 GB/s."""
    from labkit.probes import copy_table, shown_copy

    table = copy_table({"nbytes": 1 << 30, "mode": "cold", "memcpy": {"p50_s": 5.0736e-4, "GBps_read_plus_write":
                                                                      4232.662658},
                        "kernel": {"p50_s": 5.06336e-4, "GBps_read_plus_write": 4241.222744}})
    shown = shown_copy(table)
    assert shown.to_string().splitlines() == ["         MiB  p50_us  GBps_read_plus_write", "method" + " " * 36,
                                              "memcpy  1024  507.36                4232.7",
                                              "kernel  1024  506.34                4241.2"]
    assert table.loc["memcpy", "GBps_read_plus_write"] == 4232.662658  # what the notebook saves keeps every digit


@pytest.mark.parametrize("name, h200", [("NVIDIA H200", True), ("NVIDIA H200 NVL", True),
                                        ("NVIDIA GH200 480GB", False), ("NVIDIA H100 80GB HBM3", False)])
def test_is_h200_names_the_h200s_not_the_gh200(name, h200):
    from labkit.device import is_h200

    assert is_h200(name) is h200


class _Runtime:
    """CuPy's ``cuda.runtime`` as a host without a usable GPU, or with ``count`` devices, answers."""

    def __init__(self, count):
        self.count = count

    def getDeviceCount(self):
        if isinstance(self.count, Exception):
            raise self.count
        return self.count


@pytest.mark.parametrize("count, device_files, said", [
    (RuntimeError("cudaErrorNoDevice"), [],
     (False, "no NVIDIA GPU or driver on this machine (no /dev/nvidia* device)")),
    (RuntimeError("cudaErrorInsufficientDriver"), ["/dev/nvidia0"],
     (False, "CUDA is not usable here: RuntimeError: cudaErrorInsufficientDriver")),
    (RuntimeError("cudaErrorInsufficientDriver"), ["/dev/dxg"],  # WSL: the driver's device is /dev/dxg
     (False, "CUDA is not usable here: RuntimeError: cudaErrorInsufficientDriver")),
    (0, ["/dev/nvidia0"], (False, "the CUDA driver reports no device")),
    (2, ["/dev/nvidia0", "/dev/nvidia1"], (True, "2 CUDA device(s)")),
])
def test_gpu_status_says_why_no_gpu_is_usable_and_require_gpu_refuses_with_it(monkeypatch, count, device_files, said):
    """Found by mutation testing: only this machine's own answer was checked (and only for being non-empty), so a
    host with a driver but a broken CUDA, one with no device and one with GPUs were never told apart."""
    import fnmatch
    import glob
    from types import SimpleNamespace

    import labkit.cuda as cuda

    monkeypatch.setattr(cuda, "cupy", lambda: SimpleNamespace(cuda=SimpleNamespace(runtime=_Runtime(count))))
    monkeypatch.setattr(glob, "glob", lambda pattern: fnmatch.filter(device_files, pattern))
    cuda.gpu_status.cache_clear()
    try:
        assert cuda.gpu_status() == said and cuda.gpu_available() is said[0]
        if said[0]:
            assert cuda.require_gpu("the probe") is None
        else:
            with pytest.raises(NoGPU) as exc:
                cuda.require_gpu("the probe")
            assert str(exc.value) == f"the probe needs a CUDA GPU: {said[1]}"
    finally:
        cuda.gpu_status.cache_clear()  # the next caller asks this machine again


def test_gpu_status_without_cupy_says_what_is_missing(monkeypatch):
    """Found by mutation testing: a host without CuPy is not a GPU host, and the reason is the missing package's."""
    import labkit.cuda as cuda
    from labkit.errors import MissingDependency

    def missing():
        raise MissingDependency("cupy is not installed: pip install 'labkit[gpu]'")

    monkeypatch.setattr(cuda, "cupy", missing)
    cuda.gpu_status.cache_clear()
    try:
        assert cuda.gpu_status() == (False, "cupy is not installed: pip install 'labkit[gpu]'")
    finally:
        cuda.gpu_status.cache_clear()


def test_check_takes_a_bare_result_too():
    """Found by mutation testing: a call that returns its error code alone (not in a tuple) was not checked."""
    class Err(int):
        name = "CUDA_ERROR_NOT_READY"

    assert check(0, "cuBar") is None
    with pytest.raises(LaunchError, match="^cuBar failed: CUDA_ERROR_NOT_READY$"):
        check(Err(600), "cuBar")


@pytest.mark.parametrize("sha", ["xyz", "0123ab", "0" * 65, "0123abcd-clean", "0123ABCD", " 0123abcd"])
def test_a_given_git_sha_that_is_no_commit_is_refused_before_any_command(sha, monkeypatch, tmp_path, capsys):
    """Found by a CLI review: LABKIT_GIT_SHA=xyz was recorded as a run's git_sha; a sha is 7 to 64 hex digits, as git
    prints it (SHA-1 or SHA-256; with -dirty, as git_sha() records a dirty tree), and the CLI refuses another before
    it writes; --help still helps."""
    from labkit import cli
    from labkit.errors import ArgumentError
    from labkit.provenance import git_sha

    monkeypatch.setenv("LABKIT_GIT_SHA", sha)
    said = (f"LABKIT_GIT_SHA={sha!r}: expected the commit's sha, 7 to 64 lowercase hex digits (git rev-parse HEAD), "
            "optionally with -dirty; unset it to ask git")
    with pytest.raises(ArgumentError) as exc:
        git_sha()
    assert str(exc.value) == said
    out = tmp_path / "sw"
    assert cli.main(["sweep", "run", "--workload", "demo.sleep", "--grid", "ms=1", "--out", str(out)]) == 2
    assert capsys.readouterr().err == f"labkit: error: labkit sweep run: {said}\n" and not out.exists()
    with pytest.raises(SystemExit) as help_exit:
        cli.main(["--help"])
    assert help_exit.value.code == 0 and "usage: labkit" in capsys.readouterr().out
    for good in ("0123abc", "0" * 40, "0" * 64, "0123abcd-dirty"):
        monkeypatch.setenv("LABKIT_GIT_SHA", good)
        assert git_sha() == good
