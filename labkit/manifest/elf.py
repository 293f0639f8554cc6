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
static shared memory.
"""

import re
import struct
from dataclasses import dataclass

from ..errors import FormatError

EM_CUDA = 190
_EIATTR_KPARAM_INFO = 0x17
_EIATTR_CBANK_PARAM_SIZE = 0x19
_EIATTR_MAX_THREADS = 0x05
_EIFMT_SVAL = 0x04


@dataclass(frozen=True)
class Entry:
    name: str
    param_bytes: int
    param_sizes: tuple[int, ...]
    cbank_param_bytes: int
    static_smem_bytes: int
    max_threads: tuple[int, int, int] | None


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


def _sections(data: bytes) -> dict[str, tuple[int, int, int]]:
    """name -> (type, offset, size)."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise FormatError("", "not a 64-bit little-endian ELF file (is this a cubin?)")
    (e_machine,) = struct.unpack_from("<H", data, 18)
    if e_machine != EM_CUDA:
        raise FormatError("", f"ELF machine {e_machine} is not EM_CUDA ({EM_CUDA}): not a cubin")
    e_shoff, = struct.unpack_from("<Q", data, 40)
    e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHH", data, 58)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    _, _, _, _, str_off, str_size, *_ = heads[e_shstrndx]
    strtab = data[str_off:str_off + str_size]
    out = {}
    for name_off, sh_type, _, _, off, size, *_ in heads:
        name = strtab[name_off:strtab.index(b"\0", name_off)].decode()
        out[name] = (sh_type, off, size)
    return out


def _eiattrs(blob: bytes):
    i = 0
    while i + 4 <= len(blob):
        fmt, attr, val = struct.unpack_from("<BBH", blob, i)
        i += 4
        if fmt == _EIFMT_SVAL:
            yield attr, blob[i:i + val]
            i += val
        else:
            yield attr, val


def read_cubin(data: bytes) -> CubinInfo:
    """Parse a cubin image.

    Raises:
        FormatError: not a CUDA ELF file.
    """
    secs = _sections(data)
    (e_flags,) = struct.unpack_from("<I", data, 48)
    sm = (e_flags >> 8) & 0xFF
    target = f"sm_{sm}"
    note = secs.get(".note.nv.tkinfo")
    m = re.search(rb"-arch (sm_\d+[af]?)", data[note[1]:note[1] + note[2]]) if note else None
    if m:
        target = m.group(1).decode()
    elif ".nv.compat" in secs:
        _, off, size = secs[".nv.compat"]
        blob = data[off:off + size]
        for j in range(0, len(blob) - 3, 4):
            if blob[j] == 2 and blob[j + 1] == 9 and blob[j + 2] == 1:
                target += "a"
    entries = {}
    for name, (_, off, size) in secs.items():
        if not name.startswith(".nv.info."):
            continue
        entry = name[len(".nv.info."):]
        cbank, params, maxthr = 0, {}, None
        for attr, val in _eiattrs(data[off:off + size]):
            if attr == _EIATTR_CBANK_PARAM_SIZE and isinstance(val, int):
                cbank = val
            elif attr == _EIATTR_KPARAM_INFO and isinstance(val, bytes) and len(val) == 12:
                _, ordinal, _, flags = struct.unpack("<IHHI", val)
                params[ordinal] = (flags >> 18) & 0x3FFF
            elif attr == _EIATTR_MAX_THREADS and isinstance(val, bytes) and len(val) == 12:
                maxthr = struct.unpack("<III", val)
        smem = secs.get(f".nv.shared.{entry}", (0, 0, 0))[2]
        sizes = tuple(params[k] for k in sorted(params))
        entries[entry] = Entry(entry, sum(sizes), sizes, cbank, smem, maxthr)
    return CubinInfo(sm=sm, target=target, entries=entries)
