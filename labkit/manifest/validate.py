"""Validation beyond syntax: everything is checked before any launch, and nothing here packs.

``check()`` returns every problem at once as an Issue (error / warning / note) whose path is the manifest's JSON path;
errors mean the program cannot run. It never builds bytes: the launch plans (``plan.py``) are made afterwards, only for
launches without errors, so a broken manifest is reported in full and never crashes the packer. Kernel-family rules
live in ``families.py`` and run on error-free launches only.
"""

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path

from .._json import I32, I64, U32
from ..errors import ArgumentError
from ..values import plain_mapping
from . import families, tensormap
from .issues import Issue, ManifestError
from .model import (
    BufArg,
    Buffer,
    Call,
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
from .pack import field_size
from .parse import load as load_manifest

_ALIGN = {"tensormap": 64, "param": 8, "scratch": 8, "i32": 4}
# the values a var may take when it is packed as a scalar of this dtype
SCALAR_RANGE = {"i32": (1, I32[1]), "u32": (1, U32[1]), "i64": (1, I64[1]), "f32": (1, 2**24)}
__all__ = ["CheckResult", "Issue", "LaunchCheck", "ManifestError", "check", "resolve_vars"]


@dataclass(frozen=True)
class LaunchCheck:
    """One launch of one call as checked: what planning and the family rules need."""

    call_index: int
    call: Call
    op: Op
    launch_index: int
    launch: Launch
    grid: tuple[int, int, int]
    static_smem: int | None
    bound: tuple  # per op param: BufArg, VarArg or None (unbound)
    tensormap_dims: dict[int, tuple[int, ...]]  # field index -> dims with 0s derived
    ok: bool  # no error anywhere in the call, the op's launch or the vars: safe to pack


@dataclass
class CheckResult:
    manifest: Manifest
    program: str
    vars: dict[str, int]
    issues: list[Issue] = field(default_factory=list)
    launches: list[LaunchCheck] = field(default_factory=list)
    modules: dict[str, LoadedModule] = field(default_factory=dict)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    @cached_property
    def plans(self) -> list:
        """Launch plans (parameter bytes included) of the launches without errors."""
        from .plan import plan_launches

        return plan_launches(self)

    def raise_if_errors(self, outcome: str = "nothing launched") -> None:
        """ManifestError naming the file, the errors and what did not happen (``outcome``: pack writes nothing)."""
        errs = self.errors
        if errs:
            where = f"{self.manifest.source}: " if self.manifest.source else ""
            raise ManifestError(f"{where}{len(errs)} error(s), {outcome}: " + " | ".join(map(str, errs)))


def _launch_path(op: str, li: int) -> str:
    return f"ops.{op}.impl.launches[{li}]"


def resolve_vars(m: Manifest, overrides: dict[str, int] | None, issues: list[Issue]) -> dict[str, int]:
    """Each var's value: the override, else its max (noted). Values outside 1..max are errors."""
    overrides = plain_mapping(overrides, what="vars")  # a list of pairs had been an AttributeError (an API walk)
    values = {name: v.max for name, v in m.vars.items()}
    for name, value in overrides.items():
        if name not in m.vars:
            declared = ", ".join(m.vars) or "none"
            issues.append(Issue("error", f"vars.{name}", f"not declared; declared vars: {declared}"))
            continue
        if type(value) is not int:  # kept out of values: the calls' checks compare it with integers
            issues.append(Issue("error", f"vars.{name}", f"value {value!r} ({type(value).__name__}): expected an "
                                                         f"integer in 1..max {m.vars[name].max}"))
            continue
        if not 1 <= value <= m.vars[name].max:
            issues.append(Issue("error", f"vars.{name}", f"value {value} outside 1..max {m.vars[name].max}"))
        values[name] = value
    for name in m.vars:
        if name not in overrides:
            issues.append(Issue("note", f"vars.{name}", f"= {values[name]} (its max; pass --var {name}=N)"))
    return values


def _check_pack(op: Op, li: int, ai: int, pack: Pack, issues: list[Issue]) -> None:
    base = f"{_launch_path(op.name, li)}.args[{ai}].pack"
    spans = []
    for fi, f in enumerate(pack.fields):
        p = f"{base}.fields[{fi}]"
        if isinstance(f, (ParamField, TensorMapField)) and f.param >= len(op.params):
            where = f"{p}.tensormap.param" if isinstance(f, TensorMapField) else f"{p}.param"
            issues.append(Issue("error", where, f"param {f.param}: op {op.name} has params 0..{len(op.params) - 1}"))
            continue
        size = field_size(f, op)
        if f.at + size > pack.size:
            issues.append(Issue("error", f"{p}.at", f"{f.at} + {size} B ends past the {pack.size} B pack"))
        # a scalar on its own size (an i64 on 8 bytes, as in any by-value struct), a pointer on 8
        align = op.params[f.param].packed_bytes if isinstance(f, ParamField) else _ALIGN[f.kind]
        if f.at % align:
            issues.append(Issue("error", f"{p}.at", f"{f.at}: {f.kind} fields must be {align}-byte aligned"))
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
    reach = None  # the field that reaches furthest so far: a field inside a long one is not only its neighbour's
    for b0, b1, j in spans:
        if reach is not None and b0 < reach[1]:
            a0, a1, i = reach
            issues.append(Issue("error", f"{base}.fields[{j}].at",
                                f"bytes {b0}..{b1 - 1} overlap fields[{i}] (bytes {a0}..{a1 - 1})"))
        if reach is None or b1 > reach[1]:
            reach = (b0, b1, j)


def _check_launch(m: Manifest, op: Op, li: int, launch: Launch, values: dict[str, int], device, modules,
                  issues: list[Issue]) -> tuple[tuple[int, int, int], int | None]:
    lp = _launch_path(op.name, li)
    if len(launch.args) != 1:  # the runner passes one pointer to one block (cuLaunchKernelEx kernelParams)
        issues.append(Issue("error", f"{lp}.params", f"{len(launch.args)} parameter blocks: labkit launches "
                                                     "exactly one by-value block per kernel"))
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
    need = launch.shared_mem + (static or 0)
    if device is not None:
        if need > device.smem_per_block_optin_bytes:
            issues.append(Issue("error", f"{lp}.shared_mem",
                                f"{launch.shared_mem} + {static or 0} static = {need} B exceeds {device.name}'s "
                                f"{device.smem_per_block_optin_bytes} B"))
    elif lm is not None and (cap := _smem_optin(lm.info.target)) is not None and need > cap:
        issues.append(Issue("error", f"{lp}.shared_mem", f"{launch.shared_mem} + {static or 0} static = {need} B "
                                                         f"exceeds the {cap} B a CTA of {lm.info.target} may take"))
    return (grid[0], grid[1], grid[2]), static


def _smem_optin(target: str) -> int | None:
    """Shared memory a CTA of ``target`` may opt into (None: an architecture labkit has no table for)."""
    from ..sched.occupancy import limits_for

    try:
        return limits_for(target).max_smem_per_cta_bytes
    except ArgumentError:
        return None


def _check_call(m: Manifest, pname: str, ci: int, call, op: Op, values: dict[str, int], issues: list[Issue]) -> tuple:
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
            else:
                lo, hi = SCALAR_RANGE[sig.dtype]
                if not lo <= values[arg.var] <= hi:
                    issues.append(Issue("error", f"{ap}.var", f"{arg.var} = {values[arg.var]} does not fit param {i} "
                                                              f"({sig.text}: {lo}..{hi})"))
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
    """Dims derived from the bound buffers; only for maps whose own rules hold (derive_dims
    needs rank - 1 non-zero strides)."""
    dims_out = {}
    for ai, pack in enumerate(launch.args[:1]):
        for fi, f in enumerate(pack.fields):
            if not isinstance(f, TensorMapField) or f.param >= len(bound) or not isinstance(bound[f.param], BufArg):
                continue
            arg: BufArg = bound[f.param]
            buf: Buffer | None = m.buffers.get(arg.buf)
            if buf is None or tensormap.check(f) or arg.offset >= buf.nbytes:
                continue  # already an error of its own
            p = f"{_launch_path(op.name, li)}.args[{ai}].pack.fields[{fi}].tensormap"
            if (zeros := sum(d == 0 for d in f.dims)) > 1:  # which takes the room is a guess: 1 page, or 1 head
                issues.append(Issue("error", f"{p}.dims",
                                    f"{list(f.dims)}: {zeros} zero dims; one (the seed's page dim) can be derived from "
                                    f"{arg.buf}'s extent: give the others"))
                continue
            dims, derived = tensormap.derive_dims(f, buf.nbytes, arg.offset)
            for di, value in derived.items():
                stride = f.strides[di - 1] if di else dtype_bytes(f.dtype)
                if value == 0:
                    issues.append(Issue("error", f"{p}.dims[{di}]", f"0, and not even one slab of {arg.buf} fits "
                                                                    f"from offset {arg.offset}"))
                elif value > 2**32:
                    issues.append(Issue("error", f"{p}.dims[{di}]", f"0: derived as {value} from {arg.buf}'s extent, "
                                                                    "above the driver's 2^32"))
                else:
                    issues.append(Issue("warning", f"{p}.dims[{di}]",
                                        f"0 (the driver rejects 0): derived from {arg.buf}'s extent as {value} "
                                        f"({buf.nbytes} B from offset {arg.offset}, stride {stride} B) "
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


def _find_modules(m: Manifest, res: CheckResult, device, cubin_dirs: tuple) -> None:
    used = {la.module for op in m.ops.values() for la in op.launches}
    beside = (Path(m.source).parent,) if m.source and Path(m.source).is_file() else ()  # a built manifest's cubin
    dirs = search_dirs((*cubin_dirs, *beside))
    for name in sorted(used & set(m.modules)):
        try:
            lm = find(m.modules[name], dirs, model=m.model)
        except ModuleError as exc:
            res.issues.append(Issue("error", f"modules.{name}", str(exc).split(": ", 1)[-1]))
            continue
        res.modules[name] = lm
        if lm.path.name != Path(m.modules[name].source).name:  # found by its sha256 under another name: say which
            res.issues.append(Issue("note", f"modules.{name}.source", f"{m.modules[name].source!r} is not there; "
                                    f"the cubin of its sha256 is {lm.path} (loaded)"))
        if device is not None and not lm.info.runs_on(device.compute_capability):
            res.issues.append(Issue("error", f"modules.{name}",
                                    f"{lm.path.name} is built for {lm.info.target}; {device.name} is "
                                    f"{device.arch} (compute capability {device.compute_capability[0]}."
                                    f"{device.compute_capability[1]}): refusing to load it"))


def check(m: Manifest | str | Path, *, program: str | None = None, vars: dict[str, int] | None = None, device=None,
          cubin_dirs: tuple = (), find_modules: bool = True) -> CheckResult:
    """Validate ``m`` (or the manifest file at that path) for one program: every problem as an Issue; never packs or
    raises on content. Returns a CheckResult; its ``plans`` (built on first use) cover the launches without errors.

    Args:
        program: which program (default: the first).
        vars: values for the manifest's vars (others default to their max).
        device: a DeviceInfo to check limits and architecture against, or None.
        cubin_dirs: extra directories to search for modules.
    """
    m = m if isinstance(m, Manifest) else load_manifest(m)  # a path had failed with "'str' object has no attribute"
    pname = program if program is not None else next(iter(m.programs), "")
    res = CheckResult(m, pname, {})
    if pname not in m.programs:
        res.issues.append(Issue("error", "programs", f"no program {pname!r} (have {', '.join(m.programs) or 'none'})"))
        return res
    res.vars = resolve_vars(m, vars := plain_mapping(vars, what="vars"), res.issues)
    if res.errors:  # a --var refused: the rest is checked as if it were not given, so mending it shows no new warning
        valid = {k: v for k, v in vars.items() if k in m.vars and type(v) is int and 1 <= v <= m.vars[k].max}
        return _with_vars_refused(res, check(m, program=program, vars=valid, device=device, cubin_dirs=cubin_dirs,
                                             find_modules=find_modules))
    if find_modules:
        _find_modules(m, res, device, cubin_dirs)
    for op in m.ops.values():
        packed = {f.param for la in op.launches for pk in la.args for f in pk.fields
                  if isinstance(f, (ParamField, TensorMapField))}
        for i, sig in enumerate(op.params):
            if i not in packed:
                res.issues.append(Issue("warning", f"ops.{op.name}.params[{i}]",
                                        f"{sig.text} is declared but never packed: the kernel never sees it"))
        scratch_packed = {f.scratch for la in op.launches for pk in la.args for f in pk.fields
                          if isinstance(f, ScratchField)}
        for name in op.scratch:  # allocated (and zeroed) by the runner, but no pointer to it reaches the kernel
            if name not in scratch_packed:
                res.issues.append(Issue("warning", f"ops.{op.name}.impl.scratch.{name}",
                                        f"scratch {name!r} is declared but never packed: the kernel never sees it"))
    for ci, call in enumerate(m.programs[pname].calls):
        cpath = f"programs.{pname}.calls[{ci}]"
        op = m.ops.get(call.op)
        if op is None:
            res.issues.append(Issue("error", f"{cpath}.op", f"{call.op!r} is not in ops ({', '.join(m.ops)})"))
            continue
        before = len(res.errors)
        bound = _check_call(m, pname, ci, call, op, res.vars, res.issues)
        call_ok = len(res.errors) == before
        for li, launch in enumerate(op.launches):
            before = len(res.errors)
            grid, static = _check_launch(m, op, li, launch, res.vars, device, res.modules, res.issues)
            tm_dims = _check_tensormaps(m, op, li, launch, bound, cpath, res.issues)
            lc = LaunchCheck(ci, call, op, li, launch, grid, static, bound, tm_dims,
                             ok=call_ok and len(res.errors) == before)
            res.launches.append(lc)
            if lc.ok:
                for rule in families.matching(launch):
                    res.issues.extend(rule(families.FamilyContext(m, pname, res.vars, lc, res.modules)))
    # a family rule that explains an unpacked parameter (what the kernel then assumes) replaces the generic warning
    generic = "the kernel never sees it"
    explained = {i.path for i in res.issues if "never packed" in i.message and generic not in i.message}
    res.issues[:] = [i for i in res.issues if not (i.path in explained and i.message.endswith(generic))]
    return res


def _with_vars_refused(refused: CheckResult, rest: CheckResult) -> CheckResult:
    """``refused``'s errors about vars, then what checking with the valid ones found (a refused var at its max, said
    in a note), none of its launches ready to pack: the family rules (page dim 0, an unpacked cu_seqlens_q) had been
    skipped, so the fix of a --var brought warnings the first check had not shown."""
    errors = [i for i in refused.issues if i.severity == "error"]
    bad = {i.path for i in errors}
    stand_ins = ", ".join(f"{k} = {v}" for k, v in rest.vars.items() if f"vars.{k}" in bad)
    said = [Issue("note", "vars", f"the other checks ran with {stand_ins} (the max) in place of the value refused")]
    return replace(rest, vars=refused.vars, issues=[*errors, *said[:bool(stand_ins)],
                                                    *(i for i in rest.issues if i.path not in bad)],
                   launches=[replace(lc, ok=False) for lc in rest.launches])
