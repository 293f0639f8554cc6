"""Parse a launch manifest strictly: ``schema_version`` 4 only, every error with its JSON path."""

import re
from pathlib import Path

from .._json import I32, I64, U32, Node, load_document, parse_text, refuse_other_kind
from .._text import counted
from .model import (
    BUFFER_KINDS,
    DTYPES,
    L2_PROMOTION_BYTES,
    SCALAR_DTYPES,
    SWIZZLE_BYTES,
    BufArg,
    Buffer,
    Call,
    I32Field,
    Launch,
    Manifest,
    Module,
    Op,
    Pack,
    ParamField,
    ParamSig,
    Program,
    Scratch,
    ScratchField,
    TensorMapField,
    Var,
    VarArg,
)

SCHEMA_VERSION = 4
_SIG = re.compile(r"(?:(in|out|inout) )?buffer<(\w+)>")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BYTES = re.compile(r"bytes<([0-9]{1,6})>")  # ASCII digits only (\d also matches full-width ones)
_SOURCE = re.compile(r"[^/\\\x00-\x1f]{1,255}")  # a file name, never a path
MAX_PARAM_BYTES = 32764  # CUDA 12.1+ limit on a kernel's parameter bytes
MAX_BUFFER_BYTES = 1 << 40  # above any GPU's memory: a larger shape is a typo
U64 = (0, 2**64 - 1)


def _name(n: Node, what: str) -> str:
    if not _NAME.fullmatch(n.value if isinstance(n.value, str) else ""):
        raise n.fail(f"a {what} name (letters, digits, _)")
    return n.value


def _dtype(n: Node) -> str:
    return n.str(tuple(DTYPES))


def _sig(n: Node, index: int) -> ParamSig:
    text = n.str()
    m = _SIG.fullmatch(text)
    if m:
        direction, dtype = m.groups()
        if dtype not in DTYPES:
            raise n.fail(f"a buffer dtype in buffer<...> (one of {', '.join(DTYPES)})")
        return ParamSig(index, text, True, dtype, direction or "in")
    if text in SCALAR_DTYPES:
        return ParamSig(index, text, False, text, None)
    raise n.fail(f"'[in|out|inout] buffer<dtype>' or a scalar ({', '.join(SCALAR_DTYPES)})")


def _shape(n: Node, dtype: str) -> tuple[int, ...]:
    shape = n.ints(lo=1, hi=I64[1])
    nbytes = DTYPES.get(dtype, (1,))[0]
    for s in shape:
        nbytes *= s
    if not shape or nbytes > MAX_BUFFER_BYTES:
        raise n.fail(f"1 or more dimensions and at most {MAX_BUFFER_BYTES} bytes in all (got {nbytes} B)")
    return shape


def _field(n: Node):
    n.obj(("at",), ("tensormap", "param", "i32", "scratch"))
    kinds = [k for k in ("tensormap", "param", "i32", "scratch") if k in n.value]
    if len(kinds) != 1:
        raise n.error(f"expected exactly one of tensormap, param, i32, scratch (got {', '.join(kinds) or 'none'})")
    at = n["at"].int(0, MAX_PARAM_BYTES - 1)
    kind = kinds[0]
    if kind == "param":
        return ParamField(at, n["param"].int(0, 1023))
    if kind == "i32":
        return I32Field(at, n["i32"].int(-(2**31), 2**32 - 1))
    if kind == "scratch":
        return ScratchField(at, _name(n["scratch"], "scratch"))
    t = n["tensormap"].obj(("param", "dtype", "dims", "strides", "box", "swizzle", "l2_promotion"),
                           ("element_strides",))
    dims = t["dims"].ints(lo=0, hi=U64[1])
    swz = t["swizzle"].int()
    if swz not in SWIZZLE_BYTES:
        raise t["swizzle"].fail(f"a swizzle span in bytes: {', '.join(map(str, SWIZZLE_BYTES))}")
    l2 = t["l2_promotion"].int()
    if l2 not in L2_PROMOTION_BYTES:
        raise t["l2_promotion"].fail(f"an L2 promotion in bytes: {', '.join(map(str, L2_PROMOTION_BYTES))}")
    es = t["element_strides"].ints(lo=0, hi=U32[1]) if t.get("element_strides") is not None else (1,) * len(dims)
    return TensorMapField(at=at, param=t["param"].int(0, 1023), dtype=_dtype(t["dtype"]), dims=dims,
                          strides=t["strides"].ints(lo=0, hi=U64[1]), box=t["box"].ints(lo=0, hi=U32[1]), swizzle=swz,
                          l2_promotion=l2, element_strides=es)


def _launch(n: Node) -> Launch:
    n.obj(("module", "entry", "params", "block", "grid", "shared_mem", "args"), ("pdl",))
    params = tuple(p.str() for p in n["params"].list(1))
    for p in n["params"].list():
        m = _BYTES.fullmatch(p.value)
        if not m or not 1 <= int(m.group(1)) <= MAX_PARAM_BYTES:
            raise p.fail(f"'bytes<N>' with N in 1..{MAX_PARAM_BYTES} (one by-value parameter block)")
    grid = []
    for g in n["grid"].list(3, 3):
        grid.append(g.value if isinstance(g.value, str) and _name(g, "var") else g.int(1, U32[1]))
    args = []
    for a in n["args"].list(1):
        pk = a.obj(("pack",))["pack"].obj(("size", "fields"))
        args.append(Pack(pk["size"].int(1, MAX_PARAM_BYTES), tuple(_field(f) for f in pk["fields"].list(1))))
    if len(args) != len(params):
        raise n["args"].error(f"has {counted(len(args), 'entry', 'entries')} but params declares {len(params)}: one "
                              "args entry per param")
    return Launch(module=_name(n["module"], "module"), entry=n["entry"].str(), params=params,
                  block=n["block"].ints(3, lo=1, hi=1024), grid=tuple(grid), shared_mem=n["shared_mem"].int(*U32),
                  args=tuple(args), pdl=n["pdl"].bool() if n.get("pdl") is not None else False)


def _op(name: str, n: Node) -> Op:
    n.obj(("params", "impl"))
    sigs = tuple(_sig(p, i) for i, p in enumerate(n["params"].list(1)))
    impl = n["impl"].obj(("launches",), ("scratch",))
    scratch = {}
    if impl.get("scratch"):
        for sname, s in impl["scratch"].items():
            s.obj(("dtype", "shape"))
            scratch[sname] = Scratch(sname, _dtype(s["dtype"]), _shape(s["shape"], s["dtype"].value))
    return Op(name, sigs, scratch, tuple(_launch(x) for x in impl["launches"].list(1)))


def _call(n: Node) -> Call:
    n.obj(("label", "op", "args"))
    args = []
    for a in n["args"].list():
        if isinstance(a.value, dict) and "var" in a.value:
            a.obj(("var",))
            args.append(VarArg(_name(a["var"], "var")))
        elif not isinstance(a.value, dict) or "buf" not in a.value:  # a review: {"vars": ...} read as "missing buf"
            raise a.fail('{"buf": NAME} (a buffer, "offset": BYTES optional) or {"var": NAME} (a var\'s value)')
        else:
            a.obj(("buf",), ("offset",))
            offset = a.get("offset")
            args.append(BufArg(_name(a["buf"], "buffer"), offset.int(0, I64[1]) if offset is not None else 0))
    return Call(n["label"].str(), _name(n["op"], "op"), tuple(args))


def from_node(root: Node) -> Manifest:
    refuse_other_kind(root, "schema_version", "a launch manifest")
    root.obj(("schema_version",), any_keys=True)
    v = root["schema_version"]
    if type(v.value) is not int or v.value != SCHEMA_VERSION:  # 4.0 and true are not 4
        raise v.fail(f"schema_version {SCHEMA_VERSION} (the only version labkit reads)")
    root.obj(("schema_version", "model", "vars", "buffers", "modules", "ops", "programs"))
    vars_ = {}
    for k, n in root["vars"].items():
        vars_[k] = Var(_name(Node(k, n.path, n.source), "var"), n.obj(("max",))["max"].int(1, I64[1]))
    buffers = {}
    for k, n in root["buffers"].items():
        n.obj(("dtype", "shape", "kind"))
        dtype = _dtype(n["dtype"])
        buffers[k] = Buffer(k, dtype, _shape(n["shape"], dtype), n["kind"].str(BUFFER_KINDS))
    modules = {}
    for k, n in root["modules"].items():
        n.obj(("source", "sha256"))
        sha = n["sha256"].str()
        if not re.fullmatch(r"[0-9a-f]{64}", sha):
            raise n["sha256"].fail("64 lowercase hex digits")
        source = n["source"].str()
        if not _SOURCE.fullmatch(source) or source in (".", ".."):
            raise n["source"].fail("a cubin file name (no directory part)")
        modules[k] = Module(_name(Node(k, n.path, n.source), "module"), source, sha)
    ops = {k: _op(_name(Node(k, n.path, n.source), "op"), n) for k, n in root["ops"].items(1)}
    programs = {}
    for k, n in root["programs"].items(1):
        n.obj(("calls",), ("batch",))
        # the seed's {groups, rows}: sequences and query rows per sequence, described, never launched from; read
        # strictly all the same (a review: any keys and values had passed unseen)
        batch = ({k: v.int(1, I32[1]) for k, v in n["batch"].obj((), ("groups", "rows")).items()}
                 if n.get("batch") is not None else {})
        calls = [_call(c) for c in n["calls"].list(1)]
        for i, c in enumerate(calls):  # `manifest run` keys each call's timings by its label: a twin's would overwrite
            if (first := next(j for j, o in enumerate(calls) if o.label == c.label)) != i:
                raise n["calls"][i]["label"].fail(f"a label of its program's calls once (calls[{first}] has it)")
        programs[k] = Program(k, batch, tuple(calls))
    return Manifest(SCHEMA_VERSION, root["model"].str(), vars_, buffers, modules, ops, programs, root.source)


def load(path: Path | str) -> Manifest:
    """Parse a manifest file.

    Raises:
        FormatError: names the file, the JSON path, the value and what was expected.
    """
    return from_node(load_document(path, what="manifest"))


def loads(text: str, source: str | None = None) -> Manifest:
    return from_node(parse_text(text, source))
