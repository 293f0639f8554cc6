"""The launches notebook 05 profiles and times: the Sage2 mainloop (seed shape and a tail study) and a
paged-decode sweep, each in its own NVTX range ``ncu/<case name>`` (domain ``labkit``).

The same ``CasePlan`` is launched once per case under ncu (``labkit ncu cases SPEC.json``, NVTX filter
``labkit@ncu/``, kernel-name filter per workload) and timed with CUDA events in a separate, un-profiled
process: events inside an ncu run time the replay (every pass, save and restore), not the kernel.
The plan is pure data; only ``launch`` and ``time_cases`` touch the GPU.
"""

import re
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .._json import Node, load_document, refuse_other_kind
from .._write import dumps, write_text
from ..errors import ArgumentError, NcuError

RANGE = "ncu"  # the outer NVTX range of every case: --nvtx-include labkit@ncu/
SAGE2_KERNEL, DECODE_KERNEL = "attn_fwd", "paged_decode"  # kernel-name filters (regex)


@dataclass(frozen=True)
class Sage2Case:
    name: str
    group: str  # seed, q_tail or kv_tail
    shape: tuple[int, int, int, int]  # B, N, H, D of the prepared q = k = v
    q_len: int
    kv_len: int


@dataclass(frozen=True)
class DecodeCase:
    name: str
    batch: int
    kv_len: int
    head_dim: int
    heads_q: int
    heads_kv: int
    page_size: int

    @property
    def source(self) -> str:
        """The kernel source this call runs (``paged_decode_mma.cu`` or ``paged_decode.cu``)."""
        from ..workloads.decode.geometry import kernel_build
        from ..workloads.decode.run import geometry_for

        return kernel_build(geometry_for(self.batch, self.kv_len, heads_q=self.heads_q, heads_kv=self.heads_kv,
                                         head_dim=self.head_dim, page_size=self.page_size)).source


@dataclass(frozen=True)
class CasePlan:
    sage2: tuple[Sage2Case, ...] = ()
    decode: tuple[DecodeCase, ...] = ()
    repeat: int = field(default=1)  # launches per case under ncu (each becomes one report row)

    @property
    def names(self) -> list[str]:
        return [c.name for c in (*self.sage2, *self.decode)]

    def only(self, names) -> "CasePlan":
        keep = set(names)
        return CasePlan(tuple(c for c in self.sage2 if c.name in keep), tuple(c for c in self.decode if c.name in keep),
                        self.repeat)

    def to_dict(self) -> dict:
        return {"sage2": [asdict(c) for c in self.sage2], "decode": [asdict(c) for c in self.decode],
                "repeat": self.repeat}

    @classmethod
    def from_node(cls, n: Node) -> "CasePlan":
        """Strictly, each case checked as its launch will take it (a Sage2 shape and lengths, a decode geometry the
        kernels build), so a bad plan is one line naming its place before any workload is made."""
        from ..values import Shape
        from ..workloads.decode.run import geometry_for

        refuse_other_kind(n, "sage2", "an ncu case plan")
        n.obj(("sage2", "decode", "repeat"))

        def name(c):  # an NVTX path component (ncu/<name>) and a report row: no '/', no blanks, not empty
            text = c["name"].str(max_len=128)
            if not re.fullmatch(r"[A-Za-z0-9_.+-]+", text):
                raise c["name"].fail("a case name of letters, digits and _ . + - (it names the NVTX range ncu/<name>)")
            return text

        sage2 = []
        for c in n["sage2"].list():
            c.obj(("name", "group", "shape", "q_len", "kv_len"))
            shape = c["shape"].ints(4, lo=1)
            try:
                s = Shape.of(shape)
            except ArgumentError as exc:
                raise c["shape"].error(str(exc)) from None
            sage2.append(Sage2Case(name(c), c["group"].str(("seed", "q_tail", "kv_tail")), shape,
                                   c["q_len"].int(1, s.seq_len), c["kv_len"].int(1, s.seq_len)))
        decode = []
        for c in n["decode"].list():
            c.obj(("name", "batch", "kv_len", "head_dim", "heads_q", "heads_kv", "page_size"))
            case = DecodeCase(name(c), c["batch"].int(1, 1 << 20), c["kv_len"].int(1, 1 << 31),
                              *(c[k].int(1, 4096) for k in ("head_dim", "heads_q", "heads_kv", "page_size")))
            try:
                geometry_for(case.batch, case.kv_len, heads_q=case.heads_q, heads_kv=case.heads_kv,
                             head_dim=case.head_dim, page_size=case.page_size)
            except ArgumentError as exc:
                raise c.error(str(exc)) from None
            decode.append(case)
        if any(c.shape != sage2[0].shape for c in sage2):
            raise n["sage2"].error("the Sage2 cases of one plan share one prepared shape (the tail study's lengths "
                                   f"are q_len and kv_len); got {sorted({c.shape for c in sage2})}")
        names = [c.name for c in (*sage2, *decode)]
        if len(set(names)) != len(names):
            raise n.error(f"case names repeat ({', '.join(sorted({x for x in names if names.count(x) > 1}))}): each "
                          "names an NVTX range and a report row")
        return cls(tuple(sage2), tuple(decode), n["repeat"].int(1, 1000))

    def save(self, path: Path) -> Path:
        return write_text(path, dumps(self.to_dict(), indent=1, source=str(path)) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> "CasePlan":
        """Read a case plan (``labkit ncu cases``' SPEC).

        Raises:
            FormatError: one line naming the file, the JSON path and what was expected.
        """
        return cls.from_node(load_document(Path(path), what="case plan"))


def sage2_cases(shape, q_tail=(), kv_tail=()) -> tuple[Sage2Case, ...]:
    """The seed-shape mainloop and the tail study's (q_len, N) and (N, kv_len) points (lengths checked)."""
    from ..values import Shape

    s = Shape.of(shape)
    n = s.seq_len
    q_tail = s.lengths(list(q_tail), "q_tail") if q_tail else ()
    kv_tail = s.lengths(list(kv_tail), "kv_tail") if kv_tail else ()
    out = [Sage2Case("sage2_seed", "seed", tuple(s), n, n)]
    out += [Sage2Case(f"sage2_q{ql}", "q_tail", tuple(s), ql, n) for ql in dict.fromkeys(q_tail) if ql != n]
    out += [Sage2Case(f"sage2_kv{kl}", "kv_tail", tuple(s), n, kl) for kl in dict.fromkeys(kv_tail) if kl != n]
    return tuple(out)


def decode_cases(batches, kv_lens, *, head_dim: int = 128, heads_q: int = 32, heads_kv: int = 8,
                 page_size: int = 64) -> tuple[DecodeCase, ...]:
    """One case per (batch, kv_len); points whose K+V pass the decode bench's limit are left out."""
    from ..workloads.decode.bench import MAX_KV_BYTES

    return tuple(DecodeCase(f"decode_b{b}_kv{n}", b, n, head_dim, heads_q, heads_kv, page_size)
                 for b in dict.fromkeys(batches) for n in dict.fromkeys(kv_lens)
                 if 2 * b * n * heads_kv * head_dim * 2 <= MAX_KV_BYTES)


def _prepared(plan: CasePlan):
    """(case, fn, setup) for every case in order, each workload built when its turn comes (GPU)."""
    from ..cuda import cupy

    cp = cupy()
    if plan.sage2:
        from ..workloads.sage2.inputs import check_inputs, random_inputs
        from ..workloads.sage2.plan import Sage2Plan

        b, n, h, d = plan.sage2[0].shape
        if any(c.shape != (b, n, h, d) for c in plan.sage2):
            raise NcuError("the Sage2 cases of one plan share one prepared shape")
        p = Sage2Plan(check_inputs(*random_inputs(b, n, n, h, h, d)))
        p.run()  # the prep kernels, outside the profiled ranges
        for c in plan.sage2:
            yield c, (lambda c=c: p.mainloop(c.q_len, c.kv_len)), None
        del p
        cp.get_default_memory_pool().free_all_blocks()
    for c in plan.decode:
        from ..workloads.decode.bench import _gpu_fill
        from ..workloads.decode.run import decode_runner, geometry_for

        g = geometry_for(c.batch, c.kv_len, heads_q=c.heads_q, heads_kv=c.heads_kv, head_dim=c.head_dim,
                         page_size=c.page_size)
        with tempfile.TemporaryDirectory() as tmp:
            runner, _ = decode_runner(g, None, tmp, _gpu_fill(g, c.kv_len, seed=c.batch * 7 + c.kv_len))
            runner.run_once()  # checks the call and warms up, outside the profiled ranges
            yield c, (lambda r=runner: r.launch_call(0)), runner.zero_scratch
            del runner
        cp.get_default_memory_pool().free_all_blocks()


def launch(plan: CasePlan, progress=None) -> None:
    """Each case ``plan.repeat`` times inside NVTX ``ncu/<name>`` (what runs under ncu)."""
    from ..cuda import cupy, require_gpu
    from ..timing import nvtx_range

    if not plan.names:  # run under ncu, nothing launched would be "no kernel profiled" with no reason
        raise ArgumentError("the case plan holds no cases: nothing to launch")
    require_gpu("launching the cases")
    cp = cupy()
    outer = nvtx_range(RANGE)
    for c, fn, setup in _prepared(plan):
        for _ in range(plan.repeat):
            if setup is not None:
                setup()
            with outer, nvtx_range(c.name):
                fn()
        cp.cuda.get_current_stream().synchronize()
        if progress is not None:
            print(f"  launched {c.name} x {plan.repeat}", file=progress, flush=True)


def time_cases(plan: CasePlan, *, iterations: int, progress=None) -> dict[str, dict]:
    """Cold-L2 CUDA-event timing of every case (no profiler attached): name -> Timing.to_dict()."""
    from ..timing import time_gpu

    out = {}
    for c, fn, setup in _prepared(plan):
        t = time_gpu(fn, name=c.name, mode="cold", iterations=iterations, setup=setup)
        out[c.name] = t.to_dict()
        if progress is not None:
            print(f"  timed {c.name}: p50 {t.stats.p50_s * 1e6:.1f} us", file=progress, flush=True)
    return out
