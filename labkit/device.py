"""What the GPU at hand is: one frozen description, read once per device."""

import dataclasses
import functools
import re
from dataclasses import dataclass

from . import _deps
from .cuda import cupy, require_gpu


@dataclass(frozen=True)
class DeviceInfo:
    """Static facts about one CUDA device, with units in the field names."""

    index: int
    name: str
    compute_capability: tuple[int, int]
    sm_count: int
    l2_bytes: int
    smem_per_sm_bytes: int
    smem_per_block_optin_bytes: int
    max_threads_per_sm: int
    max_ctas_per_sm: int
    regs_per_sm: int
    memory_bytes: int
    sm_clock_max_hz: int | None
    mem_clock_max_hz: int | None
    driver_version: str
    cuda_driver_version: int
    cuda_runtime_version: int
    # NVML's GPU-<hex> id: which physical GPU ran, since results can differ between chips of one model (on the
    # H200, which SMs stream faster); None where NVML is absent and in records made before it was kept
    uuid: str | None = None
    # the board's firmware: H200s run DRAM-bound calls in two states about 2 % apart (docs/decode.md, "Two states of
    # the H200s"), and what sets the state is not known; None without NVML and in records made before it was kept
    vbios_version: str | None = None
    # the board's part number: the H200s probed on 2026-12-04 all ran the same VBIOS, and the seven boards read
    # matched the state (692-2G520-0282-000 faster, -001 slower; docs/decode.md); None as for the VBIOS
    board_part_number: str | None = None

    @property
    def arch(self) -> str:
        """NVRTC/nvcc target name, e.g. ``sm_90``."""
        return f"sm_{self.compute_capability[0]}{self.compute_capability[1]}"

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["compute_capability"] = list(self.compute_capability)
        return d

    @classmethod
    def from_dict(cls, d) -> "DeviceInfo":
        """Validate a ``to_dict`` document (a recorded run's ``device.json``, or a ``Node`` within a report, whose
        errors then name their place in it) field by field."""
        from ._json import Node

        optional = ["uuid", "vbios_version", "board_part_number"]
        keys = [f.name for f in dataclasses.fields(cls) if f.name not in optional]
        n = (d if isinstance(d, Node) else Node(d)).obj(keys, optional=optional)
        text_or_none = lambda k: None if n.get(k) is None or n[k].value is None else n[k].str()  # noqa: E731
        optional_int = lambda k: None if n[k].value is None else n[k].int(0)  # noqa: E731
        return cls(index=n["index"].int(0), name=n["name"].str(),
                   compute_capability=n["compute_capability"].ints(2, 0),
                   **{k: n[k].int(0) for k in ("sm_count", "l2_bytes", "smem_per_sm_bytes",
                                               "smem_per_block_optin_bytes", "max_threads_per_sm", "max_ctas_per_sm",
                                               "regs_per_sm", "memory_bytes", "cuda_driver_version",
                                               "cuda_runtime_version")},
                   sm_clock_max_hz=optional_int("sm_clock_max_hz"), mem_clock_max_hz=optional_int("mem_clock_max_hz"),
                   driver_version=n["driver_version"].str(),
                   uuid=text_or_none("uuid"), vbios_version=text_or_none("vbios_version"),
                   board_part_number=text_or_none("board_part_number"))

    def to_frame(self):
        pd = _deps.require("pandas")
        # None is a field NVML did not give on that machine (or a record from before labkit read it)
        rows = [(k, "not recorded" if v is None else v) for k, v in self.to_dict().items()]
        return pd.DataFrame(rows, columns=["property", "value"]).set_index("property")

    def shown(self):
        """``to_frame`` as a notebook shows it: sizes, clocks and versions in their units (60 MiB, 1980 MHz, CUDA
        13.0), the arch beside the compute capability; not l2_bytes 62914560 or sm_clock_max_hz 1980000000."""
        frame = self.to_frame()
        frame["value"] = [_shown_property(k, v) for k, v in frame["value"].items()]
        frame.index = [k.removesuffix("_bytes").removesuffix("_hz") for k in frame.index]  # the value says its unit
        frame.index.name = "property"
        return frame.drop(index="index")  # which GPU of the machine: 0 in every record, and not a property of it


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:g} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} B"


def _shown_property(name: str, value) -> str:
    if value == "not recorded":
        return value
    if name.endswith("_bytes"):
        return _size(value)
    if name.endswith("_hz"):
        return f"{value / 1e6:g} MHz"
    if name == "compute_capability":
        return f"{value[0]}.{value[1]} (sm_{value[0]}{value[1]})"
    if name in ("cuda_driver_version", "cuda_runtime_version"):  # CUDA's 1000 x major + 10 x minor
        return f"CUDA {value // 1000}.{value % 1000 // 10}"
    return str(value)


def _nvml_handle(index: int):
    pynvml = _deps.optional("pynvml")
    if pynvml is None:
        return None, None
    try:
        pynvml.nvmlInit()
        return pynvml, pynvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return None, None


def sm_clock_hz(index: int = 0) -> int | None:
    """Current SM clock from NVML, or None when NVML is unavailable."""
    pynvml, h = _nvml_handle(index)
    if h is None:
        return None
    try:
        return int(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)) * 1_000_000
    except Exception:
        return None


def nvml_facts(index: int = 0) -> dict:
    """What NVML says of device ``index`` that CUDA does not: max SM and memory clocks, driver version, uuid and
    VBIOS version and board part number; a fact NVML cannot give is left out (no NVML: an empty dict). The VBIOS and
    the part number have a try each, so a driver without them keeps the rest."""
    pynvml, h = _nvml_handle(index)
    if h is None:
        return {}

    def text(v) -> str:
        return v.decode() if isinstance(v, bytes) else str(v)

    facts = {}
    try:
        facts["sm_clock_max_hz"] = int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)) * 1_000_000
        facts["mem_clock_max_hz"] = int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)) * 1_000_000
        facts["driver_version"] = text(pynvml.nvmlSystemGetDriverVersion())
        facts["uuid"] = text(pynvml.nvmlDeviceGetUUID(h))
    except Exception:
        pass
    for key, call in (("vbios_version", "nvmlDeviceGetVbiosVersion"),
                      ("board_part_number", "nvmlDeviceGetBoardPartNumber")):
        try:
            facts[key] = text(getattr(pynvml, call)(h))
        except Exception:
            pass
    return facts


@functools.cache
def describe(index: int = 0) -> DeviceInfo:
    """Describe CUDA device ``index``.

    Raises:
        NoGPU: no driver or no device; the message says which.
    """
    require_gpu("describing the GPU")
    cp = cupy()
    rt = cp.cuda.runtime
    count = rt.getDeviceCount()
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
        from .errors import ArgumentError

        raise ArgumentError(f"device index {index!r}: this machine has devices 0..{count - 1}")
    p = rt.getDeviceProperties(index)

    def attr(a: int) -> int:
        return int(rt.deviceGetAttribute(a, index))

    name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
    nvml = nvml_facts(index)
    sm_max, mem_max = nvml.get("sm_clock_max_hz"), nvml.get("mem_clock_max_hz")
    if sm_max is None:
        sm_max = attr(rt.cudaDevAttrClockRate) * 1000 if hasattr(rt, "cudaDevAttrClockRate") else None
    return DeviceInfo(
        index=index,
        name=name,
        compute_capability=(int(p["major"]), int(p["minor"])),
        sm_count=int(p["multiProcessorCount"]),
        l2_bytes=int(p["l2CacheSize"]),
        smem_per_sm_bytes=int(p["sharedMemPerMultiprocessor"]),
        smem_per_block_optin_bytes=int(p["sharedMemPerBlockOptin"]),
        max_threads_per_sm=int(p["maxThreadsPerMultiProcessor"]),
        max_ctas_per_sm=int(p.get("maxBlocksPerMultiProcessor", 0)),
        regs_per_sm=int(p["regsPerMultiprocessor"]),
        memory_bytes=int(p["totalGlobalMem"]),
        sm_clock_max_hz=sm_max,
        mem_clock_max_hz=mem_max,
        driver_version=nvml.get("driver_version", "unknown"),
        cuda_driver_version=int(rt.driverGetVersion()),
        cuda_runtime_version=int(rt.runtimeGetVersion()),
        uuid=nvml.get("uuid"),
        vbios_version=nvml.get("vbios_version"),
        board_part_number=nvml.get("board_part_number"),
    )


def is_h200(name: str) -> bool:
    """Whether NVML's ``name`` is an H200 ('NVIDIA H200', 'NVIDIA H200 NVL'), where labkit's absolute targets were
    set; not the GH200, an H100-class part."""
    return re.search(r"\bH200\b", name) is not None
