"""Typed, frozen model of a schema_version 4 launch manifest (see docs: trtllm-gen manifest)."""

from dataclasses import dataclass

# dtype name -> (bytes, CUtensorMapDataType enum or None)
DTYPES: dict[str, tuple[int, int | None]] = {
    "u8": (1, 0), "i8": (1, 0), "e4m3": (1, 0), "u16": (2, 1), "i16": (2, 1), "u32": (4, 2), "i32": (4, 3),
    "u64": (8, 4), "i64": (8, 5), "f16": (2, 6), "f32": (4, 7), "f64": (8, 8), "bf16": (2, 9),
}
SCALAR_DTYPES = ("i32", "u32", "f32", "i64")
BUFFER_KINDS = ("input", "output", "inout")
SWIZZLE_BYTES = {0: 0, 32: 1, 64: 2, 128: 3}  # manifest byte span -> CUtensorMapSwizzle
L2_PROMOTION_BYTES = {0: 0, 64: 1, 128: 2, 256: 3}  # -> CUtensorMapL2promotion


def dtype_bytes(dtype: str) -> int:
    return DTYPES[dtype][0]


@dataclass(frozen=True)
class Var:
    name: str
    max: int


@dataclass(frozen=True)
class Buffer:
    name: str
    dtype: str
    shape: tuple[int, ...]
    kind: str

    @property
    def nbytes(self) -> int:
        n = dtype_bytes(self.dtype)
        for s in self.shape:
            n *= s
        return n


@dataclass(frozen=True)
class Module:
    name: str
    source: str
    sha256: str


@dataclass(frozen=True)
class ParamSig:
    """One op parameter: ``out buffer<bf16>`` or a scalar such as ``i32``."""

    index: int
    text: str
    is_buffer: bool
    dtype: str
    direction: str | None  # in / out / inout for buffers

    @property
    def packed_bytes(self) -> int:
        """Bytes a ``param`` field writes: a device pointer, or the scalar itself."""
        return 8 if self.is_buffer else dtype_bytes(self.dtype)


@dataclass(frozen=True)
class TensorMapField:
    at: int
    param: int
    dtype: str
    dims: tuple[int, ...]  # innermost first; 0 = derive from the buffer's extent
    strides: tuple[int, ...]  # bytes, rank - 1 entries (innermost stride is the element size)
    box: tuple[int, ...]
    swizzle: int  # bytes: 0, 32, 64, 128
    l2_promotion: int  # bytes: 0, 64, 128, 256
    element_strides: tuple[int, ...]
    size = 128
    kind = "tensormap"


@dataclass(frozen=True)
class ParamField:
    at: int
    param: int
    kind = "param"


@dataclass(frozen=True)
class I32Field:
    at: int
    value: int
    size = 4
    kind = "i32"


@dataclass(frozen=True)
class ScratchField:
    at: int
    scratch: str
    size = 8
    kind = "scratch"


Field = TensorMapField | ParamField | I32Field | ScratchField


@dataclass(frozen=True)
class Pack:
    size: int
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Scratch:
    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return Buffer(self.name, self.dtype, self.shape, "inout").nbytes


@dataclass(frozen=True)
class Launch:
    module: str
    entry: str
    params: tuple[str, ...]
    block: tuple[int, int, int]
    grid: tuple[int | str, int | str, int | str]  # an entry may name a var
    shared_mem: int
    args: tuple[Pack, ...]
    pdl: bool = False  # programmatic dependent launch: may start while the stream's previous kernel finishes


@dataclass(frozen=True)
class Op:
    name: str
    params: tuple[ParamSig, ...]
    scratch: dict[str, Scratch]
    launches: tuple[Launch, ...]


@dataclass(frozen=True)
class BufArg:
    buf: str
    offset: int = 0


@dataclass(frozen=True)
class VarArg:
    var: str


@dataclass(frozen=True)
class Call:
    label: str
    op: str
    args: tuple[BufArg | VarArg, ...]


@dataclass(frozen=True)
class Program:
    name: str
    batch: dict
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class Manifest:
    schema_version: int
    model: str
    vars: dict[str, Var]
    buffers: dict[str, Buffer]
    modules: dict[str, Module]
    ops: dict[str, Op]
    programs: dict[str, Program]
    source: str | None = None
