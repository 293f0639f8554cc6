"""Read a CUDA cubin's ELF offline: target SM, entries, parameter bytes, static shared memory.

No driver needed. Facts used (checked against NVRTC 13.0 cubins and the seed's ptxas 12.9
cubin): ``e_machine`` 190 (EM_CUDA); the SM number is ``(e_flags >> 8) & 0xff``; the exact
target (``sm_100f``, ``sm_90a``) is in the ``.note.nv.tkinfo`` note as ``-arch sm_XXX`` when
ptxas recorded it, and ``.nv.compat`` attribute 9 = 1 marks an arch-specific (``a``) build.
Per kernel, ``.nv.info.<entry>`` holds EIATTR records (format u8, attribute u8, u16 value or
size): each KPARAM_INFO (0x17) is one parameter (u32 index, u16 ordinal, u16 offset, u32 flags
with the size in bits 18..31); the parameter bytes are the sum of their sizes.
CBANK_PARAM_SIZE (0x19) is the constant-bank extent, which includes leading alignment (an
alignas(64) parameter starts at offset 48 in NVRTC builds). ``.nv.shared.<entry>`` is the
static shared memory; in sm_90 and later cubins (those with a ``.nv.shared.reserved.*`` section)
it begins with the CTA's 1 KB system reserve, which the driver does not count as the kernel's:
1000 B declared is a 2024 B section, for which an H100 (driver 580) gave
``CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`` 1000 and took dynamic sizes up to 232448 - 1000 B.
A kernel compiled with ``__cluster_dims__`` carries them as three u32 in
attribute 0x3d (seen in NVRTC 13.0 sm_90 cubins: (8, 1, 1) for a cluster of 8, absent without).
"""

import os
import re
import struct
from dataclasses import dataclass

from ..errors import FormatError

EM_CUDA = 190
_EIATTR_KPARAM_INFO = 0x17
_EIATTR_KPARAM_INFO_V2 = 0x45  # parameter blocks over 4 KB: (index, ordinal, offset, size in bytes)
_EIATTR_CBANK_PARAM_SIZE = 0x19
_EIATTR_MAX_THREADS = 0x05
_EIATTR_REGCOUNT = 0x2F  # (symbol index, registers per thread)
_EIATTR_CLUSTER_DIMS = 0x3D  # three u32: the cluster shape compiled in (__cluster_dims__)
_EIFMT_SVAL = 0x04


@dataclass(frozen=True)
class Entry:
    name: str
    param_bytes: int
    param_sizes: tuple[int, ...]
    cbank_param_bytes: int
    static_smem_bytes: int
    max_threads: tuple[int, int, int] | None
    registers: int | None = None  # per thread (EIATTR_REGCOUNT); None if the cubin does not say
    cluster_dims: tuple[int, int, int] | None = None  # compiled in with __cluster_dims__; None: none compiled in
    reserved_smem_bytes: int = 0  # the system's reserve inside .nv.shared.<entry>, not in static_smem_bytes


@dataclass(frozen=True)
class CubinInfo:
    sm: int  # e.g. 90, 100
    target: str  # e.g. sm_90, sm_90a, sm_100f
    entries: dict[str, Entry]

    def runs_on(self, cc: tuple[int, int]) -> bool:
        """SASS compatibility: plain sm_XY runs on major X with minor >= Y; ``a`` only on X.Y
        exactly; ``f`` (family) on major X with minor >= Y."""
        major, minor = divmod(self.sm, 10)
        if self.target.endswith("a"):
            return cc == (major, minor)
        return cc[0] == major and cc[1] >= minor


_SHT_NOBITS = 8  # .nv.shared.*: a size, no bytes in the file
_SYSTEM_SMEM_RESERVE = 1024  # per CTA on sm_80 and later; sm_90+ cubins lay it inside each .nv.shared.<entry>


def _unpack(fmt: str, data: bytes, off: int, what: str) -> tuple:
    """struct.unpack_from with the bounds checked first: a corrupt offset is a FormatError."""
    end = off + struct.calcsize(fmt)
    if off < 0 or end > len(data):
        raise FormatError("", f"{what} at bytes {off}..{end - 1} lies outside the {len(data)}-byte file "
                              "(truncated or corrupt cubin)")
    return struct.unpack_from(fmt, data, off)


def _sections(data: bytes) -> dict[str, tuple[int, int, int, int]]:
    """name -> (type, offset, size, info); every offset and count checked against the file."""
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise FormatError("", "not a 64-bit little-endian ELF file (is this a cubin?)")
    (e_machine,) = _unpack("<H", data, 18, "e_machine")
    if e_machine != EM_CUDA:
        raise FormatError("", f"ELF machine {e_machine} is not EM_CUDA ({EM_CUDA}): not a cubin")
    (e_shoff,) = _unpack("<Q", data, 40, "e_shoff")
    e_shentsize, e_shnum, e_shstrndx = _unpack("<HHH", data, 58, "section header fields")
    if e_shentsize < 64 or e_shnum == 0 or e_shstrndx >= e_shnum:
        raise FormatError("", f"section headers: entry size {e_shentsize} (expected >= 64), count {e_shnum}, "
                              f"name table index {e_shstrndx}: corrupt cubin")
    heads = [_unpack("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize, f"section header {i}") for i in range(e_shnum)]

    def span(i: int, head: tuple) -> tuple[int, int]:
        off, size = head[4], head[5]
        if head[1] != _SHT_NOBITS and off + size > len(data):
            raise FormatError("", f"section {i} spans bytes {off}..{off + size - 1} of a {len(data)}-byte file "
                                  "(truncated or corrupt cubin)")
        return off, size

    str_off, str_size = span(e_shstrndx, heads[e_shstrndx])
    strtab = data[str_off:str_off + str_size]
    out = {}
    for i, head in enumerate(heads):
        name_off, sh_type = head[0], head[1]
        end = strtab.find(b"\0", name_off)
        if name_off >= len(strtab) or end < 0:
            raise FormatError("", f"section {i}: name offset {name_off} outside the {len(strtab)}-byte name table")
        try:
            name = strtab[name_off:end].decode("ascii")
        except UnicodeDecodeError:
            raise FormatError("", f"section {i}: its name is not ASCII (corrupt cubin)") from None
        off, size = span(i, head)
        out[name] = (sh_type, off, size, head[7])
    return out


def _eiattrs(blob: bytes):
    i = 0
    while i + 4 <= len(blob):
        fmt, attr, val = struct.unpack_from("<BBH", blob, i)
        i += 4
        if fmt == _EIFMT_SVAL:
            if i + val > len(blob):
                raise FormatError("", f"EIATTR 0x{attr:02x} of {val} B runs past its {len(blob)}-byte .nv.info "
                                      "section (corrupt cubin)")
            yield attr, blob[i:i + val]
            i += val
        else:
            yield attr, val


def read_cubin(data: bytes | str | os.PathLike) -> CubinInfo:
    """Parse a cubin image, or the cubin file at that path (as ``sched.cubin_occupancy`` takes either).

    Raises:
        FormatError: not a CUDA ELF file, or a truncated / corrupt one (never another exception).
    """
    if isinstance(data, (str, os.PathLike)):  # a path had been read as the image's bytes (an API walk)
        from .._json import read_bytes

        data = read_bytes(data, what="cubin", max_bytes=1 << 30)
    secs = _sections(data)
    (e_flags,) = _unpack("<I", data, 48, "e_flags")
    sm = (e_flags >> 8) & 0xFF
    target = f"sm_{sm}"
    note = secs.get(".note.nv.tkinfo")
    m = re.search(rb"-arch (sm_[0-9]+[af]?)", data[note[1]:note[1] + note[2]]) if note else None
    if m:
        target = m.group(1).decode()
    elif ".nv.compat" in secs:
        _, off, size, _ = secs[".nv.compat"]
        blob = data[off:off + size]
        for j in range(0, len(blob) - 3, 4):
            if blob[j] == 2 and blob[j + 1] == 9 and blob[j + 2] == 1:
                target += "a"
                break
    if not re.fullmatch(r"sm_[0-9]+[af]?", target) or sm < 10:
        raise FormatError("", f"target {target!r} from e_flags 0x{e_flags:08x}: not a CUDA SM (corrupt cubin)")
    regcount = {}  # symbol index -> registers per thread (EIATTR_REGCOUNT in the global .nv.info)
    if ".nv.info" in secs:
        _, off, size, _ = secs[".nv.info"]
        for attr, val in _eiattrs(data[off:off + size]):
            if attr == _EIATTR_REGCOUNT and isinstance(val, bytes) and len(val) == 8:
                sym, regs = struct.unpack("<II", val)
                regcount[sym] = regs
    reserve_inside = any(name.startswith(".nv.shared.reserved.") for name in secs)
    entries = {}
    for name, (_, off, size, _) in secs.items():
        if not name.startswith(".nv.info.") or len(name) == len(".nv.info."):
            continue
        entry = name[len(".nv.info."):]
        cbank, params, maxthr, cluster = 0, {}, None, None
        for attr, val in _eiattrs(data[off:off + size]):
            if attr == _EIATTR_CBANK_PARAM_SIZE and isinstance(val, int):
                cbank = val
            elif attr == _EIATTR_KPARAM_INFO and isinstance(val, bytes) and len(val) == 12:
                _, ordinal, _, flags = struct.unpack("<IHHI", val)
                params[ordinal] = (flags >> 18) & 0x3FFF
            elif attr == _EIATTR_KPARAM_INFO_V2 and isinstance(val, bytes) and len(val) == 12:
                _, ordinal, _, size = struct.unpack("<IHHI", val)
                params[ordinal] = size
            elif attr == _EIATTR_MAX_THREADS and isinstance(val, bytes) and len(val) == 12:
                maxthr = struct.unpack("<III", val)
            elif attr == _EIATTR_CLUSTER_DIMS and isinstance(val, bytes) and len(val) == 12:
                cluster = struct.unpack("<III", val)
        smem = secs.get(f".nv.shared.{entry}", (0, 0, 0, 0))[2]
        reserved = _SYSTEM_SMEM_RESERVE if reserve_inside and smem >= _SYSTEM_SMEM_RESERVE else 0
        sizes = tuple(params[k] for k in sorted(params))
        text = secs.get(f".text.{entry}")
        # a function's .text sh_info is its symbol index; sm_75-sm_89 keep its registers in the top byte
        regs = (regcount.get(text[3] & 0xFFFFFF) or (text[3] >> 24) or None) if text else None
        entries[entry] = Entry(entry, sum(sizes), sizes, cbank, smem - reserved, maxthr, regs, cluster, reserved)
    return CubinInfo(sm=sm, target=target, entries=entries)
