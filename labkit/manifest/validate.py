"""Validation beyond syntax, and the launch plan: everything is checked before any launch.

``check()`` returns every problem at once as an Issue (error / warning / note) whose path is
the manifest's JSON path; errors mean the program cannot run. Kernel-family rules live in
``families.py``.
"""

from dataclasses import dataclass, field

from ..errors import LabkitError
from . import families, tensormap
from .model import (
    BufArg,
    Buffer,
    Launch,
    Manifest,
    Op,
    Pack,
    ParamField,
    ScratchField,
    TensorMapField,
    VarArg,
    dtype_bytes,
)
from .modules import LoadedModule, ModuleError, find, search_dirs
from .pack import Bindings, FieldRow, field_size, pack_bytes

_ALIGN = {"tensormap": 64, "param": 8, "scratch": 8, "i32": 4}


class ManifestError(LabkitError):
    """The manifest cannot run; the message lists every error."""


@dataclass(frozen=True)
class Issue:
    severity: str  # error | warning | note
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message}"


@dataclass(frozen=True)
class LaunchPlan:
    call: str
    op: str
    launch_index: int
    module: str
    entry: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    static_smem: int | None
    pack_size: int
    rows: tuple[FieldRow, ...]
    tensormap_dims: dict[int, tuple[int, ...]]  # field index -> dims with 0s derived
    call_args: tuple
    offline_blob: bytes | None  # the parameter block with pointers and tensor maps zero (no driver)


@dataclass
class CheckResult:
    manifest: Manifest
    program: str
    vars: dict[str, int]
    issues: list[Issue] = field(default_factory=list)
    plans: list[LaunchPlan] = field(default_factory=list)
    modules: dict[str, LoadedModule] = field(default_factory=dict)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def raise_if_errors(self) -> None:
        if self.errors:
            raise ManifestError(f"{len(self.errors)} error(s), nothing launched:\n" +
                                "\n".join(f"  {e}" for e in self.errors))


def _launch_path(op: str, li: int) -> str:
    return f"ops.{op}.impl.launches[{li}]"


def resolve_vars(m: Manifest, overrides: dict[str, int] | None, issues: list[Issue]) -> dict[str, int]:
    """Each var's value: the override, else its max (noted)."""
    values = {}
    for name, v in m.vars.items():
        values[name] = v.max
    for name, value in (overrides or {}).items():
        if name not in m.vars:
            issues.append(Issue("error", f"vars.{name}", f"not declared; declared vars: {', '.join(m.vars)}"))
            continue
        if not 1 <= value <= m.vars[name].max:
            issues.append(Issue("error", f"vars.{name}", f"value {value} outside 1..max {m.vars[name].max}"))
        values[name] = value
    for name in m.vars:
        if name not in (overrides or {}):
            issues.append(Issue("note", f"vars.{name}", f"= {values[name]} (its max; pass --var {name}=N)"))
    return values


def _check_pack(op: Op, li: int, ai: int, pack: Pack, issues: list[Issue]) -> None:
    base = f"{_launch_path(op.name, li)}.args[{ai}].pack"
    spans = []
    for fi, f in enumerate(pack.fields):
        p = f"{base}.fields[{fi}]"
        if isinstance(f, (ParamField, TensorMapField)) and f.param >= len(op.params):
            issues.append(Issue("error", p, f"param {f.param}: op {op.name} has params 0..{len(op.params) - 1}"))
            continue
        size = field_size(f, op)
        if f.at + size > pack.size:
            issues.append(Issue("error", f"{p}.at", f"{f.at} + {size} B ends past the {pack.size} B pack"))
        align = 4 if isinstance(f, ParamField) and not op.params[f.param].is_buffer else _ALIGN[f.kind]
        if f.at % align:
            issues.append(Issue("error", f"{p}.at", f"{f.at}: a {f.kind} field must be {align}-byte aligned"))
        spans.append((f.at, f.at + size, fi))
        if isinstance(f, TensorMapField):
            sig = op.params[f.param]
            if not sig.is_buffer:
                issues.append(Issue("error", f"{p}.tensormap.param", f"param {f.param} is {sig.text}, not a buffer"))
            elif sig.dtype != f.dtype:
                issues.append(Issue("error", f"{p}.tensormap.dtype",
                                    f"{f.dtype} but param {f.param} is {sig.text}"))
            for sub, msg in tensormap.check(f):
                issues.append(Issue("error", f"{p}.tensormap.{sub}", msg))
        if isinstance(f, ScratchField) and f.scratch not in op.scratch:
            issues.append(Issue("error", f"{p}.scratch", f"{f.scratch!r} is not in ops.{op.name}.impl.scratch "
                                                        f"({', '.join(op.scratch) or 'none declared'})"))
    spans.sort()
    for (a0, a1, i), (b0, b1, j) in zip(spans, spans[1:]):
        if b0 < a1:
            issues.append(Issue("error", f"{base}.fields[{j}].at",
                                f"bytes {b0}..{b1 - 1} overlap fields[{i}] (bytes {a0}..{a1 - 1})"))


def _check_launch(m: Manifest, op: Op, li: int, launch: Launch, values: dict[str, int], device, modules,
                  issues: list[Issue]) -> tuple[tuple[int, int, int], int | None]:
    lp = _launch_path(op.name, li)
    for ai, (ptext, pack) in enumerate(zip(launch.params, launch.args)):
        n = int(ptext[6:-1])
        if n != pack.size:
            issues.append(Issue("error", f"{lp}.args[{ai}].pack.size", f"{pack.size} but params[{ai}] is {ptext}"))
        _check_pack(op, li, ai, pack, issues)
    grid = []
    for gi, g in enumerate(launch.grid):
        if isinstance(g, str):
            if g not in values:
                issues.append(Issue("error", f"{lp}.grid[{gi}]", f"names var {g!r}, which is not declared"))
                g = 1
            else:
                g = values[g]
        grid.append(g)
    bx, by, bz = launch.block
    if bx * by * bz > 1024 or bz > 64:
        issues.append(Issue("error", f"{lp}.block", f"{list(launch.block)}: at most 1024 threads and z <= 64"))
    if grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535:
        issues.append(Issue("error", f"{lp}.grid", f"{grid}: x <= 2^31-1, y and z <= 65535"))
    static = None
    lm = modules.get(launch.module)
    if launch.module not in m.modules:
        issues.append(Issue("error", f"{lp}.module", f"{launch.module!r} is not in modules"))
    elif lm is not None:
        entry = lm.info.entries.get(launch.entry)
        if entry is None:
            issues.append(Issue("error", f"{lp}.entry", f"{launch.entry!r} is not a kernel of {lm.path.name} "
                                                        f"(kernels: {', '.join(lm.info.entries)})"))
        else:
            static = entry.static_smem_bytes
            total = sum(p.size for p in launch.args)
            if entry.param_bytes != total:
                issues.append(Issue("error", f"{lp}.params", f"packs {total} B but the kernel takes "
                                                             f"{entry.param_bytes} B ({lm.path.name})"))
            if entry.max_threads and bx * by * bz > entry.max_threads[0] * entry.max_threads[1] * entry.max_threads[2]:
                issues.append(Issue("error", f"{lp}.block", f"{list(launch.block)} exceeds the kernel's "
                                                            f"maxntid {list(entry.max_threads)}"))
    if device is not None:
        need = launch.shared_mem + (static or 0)
        if need > device.smem_per_block_optin_bytes:
            issues.append(Issue("error", f"{lp}.shared_mem",
                                f"{launch.shared_mem} + {static or 0} static = {need} B exceeds {device.name}'s "
                                f"{device.smem_per_block_optin_bytes} B"))
    return tuple(grid), static


def _check_call(m: Manifest, pname: str, ci: int, call, op: Op, issues: list[Issue]) -> tuple:
    cp = f"programs.{pname}.calls[{ci}]"
    if len(call.args) != len(op.params):
        issues.append(Issue("error", f"{cp}.args", f"{len(call.args)} args for op {op.name}'s {len(op.params)} params"))
    bound = []
    for i, (arg, sig) in enumerate(zip(call.args, op.params)):
        ap = f"{cp}.args[{i}]"
        if isinstance(arg, VarArg):
            if sig.is_buffer:
                issues.append(Issue("error", ap, f"var {arg.var!r} given for param {i} ({sig.text})"))
            elif arg.var not in m.vars:
                issues.append(Issue("error", f"{ap}.var", f"{arg.var!r} is not declared in vars"))
            bound.append(arg)
            continue
        buf = m.buffers.get(arg.buf)
        if buf is None:
            issues.append(Issue("error", f"{ap}.buf", f"{arg.buf!r} is not in buffers ({', '.join(m.buffers)})"))
            bound.append(None)
            continue
        if not sig.is_buffer:
            issues.append(Issue("error", ap, f"buffer {arg.buf!r} given for scalar param {i} ({sig.text})"))
        elif buf.dtype != sig.dtype:
            issues.append(Issue("error", f"{ap}.buf", f"{arg.buf} is {buf.dtype} but param {i} is {sig.text}"))
        if sig.is_buffer and sig.direction in ("out", "inout") and buf.kind == "input":
            issues.append(Issue("warning", f"{ap}.buf", f"param {i} writes ({sig.text}) into {arg.buf}, "
                                                        "declared kind input"))
        esize = dtype_bytes(buf.dtype)
        if arg.offset >= buf.nbytes:
            issues.append(Issue("error", f"{ap}.offset", f"{arg.offset} is past the end of {arg.buf} ({buf.nbytes} B)"))
        elif arg.offset % esize:
            issues.append(Issue("error", f"{ap}.offset", f"{arg.offset} is not a multiple of {buf.dtype}'s {esize} B"))
        bound.append(arg)
    return tuple(bound)


def _check_tensormaps(m: Manifest, op: Op, li: int, launch: Launch, bound: tuple, cpath: str,
                      issues: list[Issue]) -> dict[int, tuple[int, ...]]:
    dims_out = {}
    for ai, pack in enumerate(launch.args):
        for fi, f in enumerate(pack.fields):
            if not isinstance(f, TensorMapField) or f.param >= len(bound) or not isinstance(bound[f.param], BufArg):
                continue
            arg: BufArg = bound[f.param]
            buf: Buffer = m.buffers[arg.buf]
            p = f"{_launch_path(op.name, li)}.args[{ai}].pack.fields[{fi}].tensormap"
            dims, derived = tensormap.derive_dims(f, buf.nbytes, arg.offset)
            for di, value in derived.items():
                if value == 0:
                    issues.append(Issue("error", f"{p}.dims[{di}]", f"0, and not even one slab of {arg.buf} fits "
                                                                    f"from offset {arg.offset}"))
                else:
                    issues.append(Issue("warning", f"{p}.dims[{di}]",
                                        f"0 (the driver rejects 0): derived from {arg.buf}'s extent as {value} "
                                        f"({buf.nbytes} B from offset {arg.offset}, stride {f.strides[di - 1]} B) "
                                        f"for {cpath}"))
            if arg.offset % 16:
                issues.append(Issue("error", f"{cpath}.args[{f.param}].offset",
                                    f"{arg.offset}: a tensor map base must be 16-byte aligned"))
            if all(d > 0 for d in dims):
                end = arg.offset + tensormap.footprint_bytes(f, dims)
                if end > buf.nbytes:
                    issues.append(Issue("error", f"{p}.dims", f"{list(dims)} with strides {list(f.strides)} reach "
                                                              f"byte {end} of {arg.buf} ({buf.nbytes} B)"))
            dims_out[fi] = dims
    return dims_out


def check(m: Manifest, *, program: str | None = None, vars: dict[str, int] | None = None, device=None,
          cubin_dirs: tuple = (), find_modules: bool = True) -> CheckResult:
    """Validate ``m`` for one program and build its launch plan.

    Args:
        program: which program (default: the only one, else the first).
        vars: values for the manifest's vars (others default to their max).
        device: a DeviceInfo to check limits and architecture against, or None.
        cubin_dirs: extra directories to search for modules.
    """
    pname = program or next(iter(m.programs))
    res = CheckResult(m, pname, {})
    if pname not in m.programs:
        res.issues.append(Issue("error", "programs", f"no program {pname!r} (have {', '.join(m.programs)})"))
        return res
    res.vars = resolve_vars(m, vars, res.issues)
    used_modules = {la.module for op in m.ops.values() for la in op.launches}
    if find_modules:
        dirs = search_dirs(cubin_dirs)
        for name in sorted(used_modules & set(m.modules)):
            try:
                lm = find(m.modules[name], dirs)
            except ModuleError as exc:
                res.issues.append(Issue("error", f"modules.{name}", str(exc).split(": ", 1)[-1]))
                continue
            res.modules[name] = lm
            if device is not None and not lm.info.runs_on(device.compute_capability):
                res.issues.append(Issue("error", f"modules.{name}",
                                        f"{lm.path.name} is built for {lm.info.target}; {device.name} is "
                                        f"{device.arch} (compute capability {device.compute_capability[0]}."
                                        f"{device.compute_capability[1]}): refusing to load it"))
    for op in m.ops.values():
        packed = {f.param for la in op.launches for pk in la.args for f in pk.fields
                  if isinstance(f, (ParamField, TensorMapField))}
        for i, sig in enumerate(op.params):
            if i not in packed:
                res.issues.append(Issue("warning", f"ops.{op.name}.params[{i}]",
                                        f"{sig.text} is declared but never packed: the kernel never sees it"))
    prog = m.programs[pname]
    for ci, call in enumerate(prog.calls):
        cpath = f"programs.{pname}.calls[{ci}]"
        op = m.ops.get(call.op)
        if op is None:
            res.issues.append(Issue("error", f"{cpath}.op", f"{call.op!r} is not in ops ({', '.join(m.ops)})"))
            continue
        bound = _check_call(m, pname, ci, call, op, res.issues)
        for li, launch in enumerate(op.launches):
            grid, static = _check_launch(m, op, li, launch, res.vars, device, res.modules, res.issues)
            tm_dims = _check_tensormaps(m, op, li, launch, bound, cpath, res.issues)
            params = tuple(res.vars.get(a.var, 0) if isinstance(a, VarArg) else 0 for a in bound)
            names = tuple((f"var {a.var} = {res.vars.get(a.var)}" if isinstance(a, VarArg) else
                           f"{a.buf}+{a.offset}" if isinstance(a, BufArg) else "?") for a in bound)
            rows, blob = [], None
            for pack in launch.args:
                if all(f.param < len(params) for f in pack.fields if isinstance(f, (ParamField, TensorMapField))):
                    blob, r = pack_bytes(pack, op, Bindings(params, names, {}, {}))
                    rows.extend(r)
            res.plans.append(LaunchPlan(call.label, op.name, li, launch.module, launch.entry, grid, launch.block,
                                        launch.shared_mem, static, sum(p.size for p in launch.args), tuple(rows),
                                        tm_dims, bound, blob))
            for fam in families.matching(launch):
                res.issues.extend(fam(m, op, li, launch, call, ci, pname, res.vars, tm_dims))
    return res
