"""Turn a pack's fields into the exact parameter-block bytes (pure: tested on CPU).

Everything a field does not write is zero, as FlashInfer memsets its KernelParams.
"""

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial

from .model import I32Field, Op, Pack, ParamField, ScratchField, TensorMapField


def f32_bits(x: float) -> int:
    """The i32 field value whose bytes are the f32 ``x`` (a block's float constants are written as i32 fields)."""
    return struct.unpack("<i", struct.pack("<f", x))[0]


@dataclass(frozen=True)
class FieldRow:
    """One line of the parameter-block map: the manifest's ``pack.fields[field]`` (the index the check's messages
    name), and ``member``, the kernel ABI's name for the bytes at ``at`` where a kernel family knows it, else ""."""

    field: int
    at: int
    size: int
    kind: str
    source: str
    value: str
    member: str = ""

    def cells(self) -> tuple:
        """The row under ``FIELD_COLUMNS``, its field named as the check's messages name it."""
        return f"fields[{self.field}]", self.at, self.size, self.kind, self.member, self.source, self.value


FIELD_COLUMNS = ("field", "at", "size", "kind", "member", "source", "value")  # the check's text and notebook 01's table


@dataclass(frozen=True)
class Bindings:
    """Values for the fields: per op param a device pointer (buffers) or a scalar; scratch
    pointers; encoded tensor maps by field index (None: not encoded, as in a plan with no GPU buffers bound: zeros)."""

    params: tuple[int | float, ...]
    param_names: tuple[str, ...]
    scratch: dict[str, int]
    tensormaps: dict[int, bytes | None]


def field_size(f, op: Op) -> int:
    if isinstance(f, ParamField):
        return op.params[f.param].packed_bytes if f.param < len(op.params) else 8
    return f.size


_SCALAR_FMT = {"i32": "<i", "u32": "<I", "f32": "<f", "i64": "<q"}


def pack_bytes(pack: Pack, op: Op, b: Bindings, members: Mapping[int, str] | None = None
               ) -> tuple[bytes, list[FieldRow]]:
    """The parameter block and its field map (sorted by offset; ``members``: the ABI's member names by offset)."""
    blob = bytearray(pack.size)
    rows = []
    for i, f in enumerate(pack.fields):
        row = partial(FieldRow, i, f.at, member=(members or {}).get(f.at, ""))
        if f.at + field_size(f, op) > pack.size:  # validation reports it; never write past the block
            rows.append(row(field_size(f, op), f.kind, "-", "outside the pack: not written"))
            continue
        if isinstance(f, TensorMapField):
            raw = b.tensormaps.get(i)
            if raw is not None:
                blob[f.at:f.at + 128] = raw
            name = b.param_names[f.param]
            rows.append(row(128, "tensormap", f"param {f.param} ({name})",
                            "encoded" if raw is not None else "zero-filled (not encoded: no GPU buffer bound)"))
        elif isinstance(f, ParamField):
            sig = op.params[f.param]
            value = b.params[f.param]
            if sig.is_buffer:
                struct.pack_into("<Q", blob, f.at, int(value))
                shown = f"0x{int(value):x}" if value else "0 (no GPU buffer bound)"
            else:
                struct.pack_into(_SCALAR_FMT[sig.dtype], blob, f.at, value)
                shown = str(value)
            rows.append(row(sig.packed_bytes, "param", f"param {f.param} ({b.param_names[f.param]})", shown))
        elif isinstance(f, I32Field):
            struct.pack_into("<I", blob, f.at, f.value & 0xFFFFFFFF)
            as_f32 = struct.unpack("<f", struct.pack("<I", f.value & 0xFFFFFFFF))[0]
            shown = f"{f.value} (0x{f.value & 0xFFFFFFFF:08x}"
            shown += f", f32 {as_f32:.8g})" if 1e-4 < abs(as_f32) < 1e6 else ")"  # only when it reads as a float
            rows.append(row(4, "i32", "constant", shown))
        elif isinstance(f, ScratchField):
            ptr = b.scratch.get(f.scratch, 0)
            struct.pack_into("<Q", blob, f.at, ptr)
            rows.append(row(8, "scratch", f"scratch {f.scratch}",
                            f"0x{ptr:x}" if ptr else "0 (no GPU buffer bound)"))
    rows.sort(key=lambda r: r.at)
    return bytes(blob), rows
