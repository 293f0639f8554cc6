"""Occupancy of a compiled kernel: CTAs per SM and what limits them, from the cubin alone.

The per-architecture limits are the CUDA occupancy calculator's (CUDA C++ Programming Guide,
"Features and Technical Specifications", and cuda_occupancy.h): registers are allocated per warp in
units of 256 (a thread's count rounded up to a multiple of 8), each warp's in one of the SM's 4
sub-partitions, so an SM holds 4 x (its quarter of the register file // a warp's registers) warps;
each CTA also takes 1 KB of shared memory for the system; shared memory is allocated in 128-byte units.
"""

import re
from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import ArgumentError
from ..values import check_int


@dataclass(frozen=True)
class ArchLimits:
    arch: str
    max_threads_per_sm: int
    max_ctas_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    smem_per_sm_bytes: int  # the largest carveout
    max_smem_per_cta_bytes: int  # opt-in
    reserved_smem_per_cta_bytes: int = 1024
    register_unit: int = 256  # registers allocated per warp in units of this many
    smem_unit: int = 128
    registers_per_cta: int = 65536
    sub_partitions: int = 4  # each holds a quarter of the register file; a warp's registers sit in one


ARCHS = {
    "sm_80": ArchLimits("sm_80", 2048, 32, 65536, 255, 167936, 166912),
    "sm_89": ArchLimits("sm_89", 1536, 24, 65536, 255, 102400, 101376),
    "sm_90": ArchLimits("sm_90", 2048, 32, 65536, 255, 233472, 232448),
    "sm_100": ArchLimits("sm_100", 2048, 32, 65536, 255, 233472, 232448),
}


MAX_CTAS_PER_SM = max(lim.max_ctas_per_sm for lim in ARCHS.values())  # what any SM labkit knows holds at once


def limits_for(arch: str) -> ArchLimits:
    """``sm_90``, ``sm_90a``, ``sm_100f``... -> that SM's limits."""
    base = arch.rstrip("af")
    if base not in ARCHS:
        raise ArgumentError(f"arch {arch!r}: labkit knows the limits of {', '.join(ARCHS)}")
    return ARCHS[base]


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass(frozen=True)
class Occupancy:
    """CTAs per SM of one kernel launch shape, each limit's own count, and the one that binds."""

    arch: str
    threads_per_cta: int
    registers_per_thread: int
    smem_per_cta_bytes: int  # static + dynamic + the system's reserve, rounded to the allocation unit
    by_registers: int
    by_shared_memory: int
    by_threads: int
    by_cta_slots: int
    ctas_per_sm: int
    limiter: str  # the binding limits, e.g. "registers" or "registers, shared_memory"
    warps_per_sm: int

    def to_dict(self) -> dict:
        return asdict(self)


def occupancy(*, arch: str, threads_per_cta: int, registers_per_thread: int, static_smem_bytes: int = 0,
              dynamic_smem_bytes: int = 0) -> Occupancy:
    """CTAs per SM and the limiter (registers, shared_memory, threads, cta_slots).

    Raises:
        ArgumentError: a shape that cannot launch at all (too many threads, registers or bytes).
    """
    lim = limits_for(arch)
    threads_per_cta, registers_per_thread, static_smem_bytes, dynamic_smem_bytes = (
        check_int(v, what=f"{name} =", lo=lo) for name, v, lo in (
            ("threads_per_cta", threads_per_cta, 1), ("registers_per_thread", registers_per_thread, 1),
            ("static_smem_bytes", static_smem_bytes, 0), ("dynamic_smem_bytes", dynamic_smem_bytes, 0)))
    if threads_per_cta > 1024:
        raise ArgumentError(f"threads_per_cta {threads_per_cta}: a CTA has at most 1024 threads")
    if registers_per_thread > lim.max_registers_per_thread:
        raise ArgumentError(f"registers_per_thread {registers_per_thread}: {lim.arch} allows "
                            f"{lim.max_registers_per_thread}")
    if static_smem_bytes + dynamic_smem_bytes > lim.max_smem_per_cta_bytes:
        raise ArgumentError(f"{static_smem_bytes} + {dynamic_smem_bytes} B of shared memory: {lim.arch} allows "
                            f"{lim.max_smem_per_cta_bytes} B per CTA")
    warps = -(-threads_per_cta // 32)
    per_warp_regs = _round_up(_round_up(registers_per_thread, 8) * 32, lim.register_unit)
    # the launch check counts the CTA's warps rounded up to whole sub-partitions (cuda_occupancy.h's
    # "hardware check"): 80 registers x 800 threads fit 65536 as 25 warps, not as 28
    per_cta_regs = per_warp_regs * _round_up(warps, lim.sub_partitions)
    if per_cta_regs > lim.registers_per_cta:
        raise ArgumentError(f"{registers_per_thread} registers x {threads_per_cta} threads: a CTA takes {per_cta_regs} "
                            f"registers ({per_warp_regs} a warp, {_round_up(warps, lim.sub_partitions)} warps as the "
                            f"launch counts them, whole sub-partitions); {lim.arch} allows {lim.registers_per_cta}")
    by_regs = (lim.registers_per_sm // lim.sub_partitions // per_warp_regs) * lim.sub_partitions // warps
    smem = _round_up(static_smem_bytes + dynamic_smem_bytes + lim.reserved_smem_per_cta_bytes, lim.smem_unit)
    by_smem = lim.smem_per_sm_bytes // smem
    by_threads = lim.max_threads_per_sm // (warps * 32)
    counts = {"registers": by_regs, "shared_memory": by_smem, "threads": by_threads, "cta_slots": lim.max_ctas_per_sm}
    n = min(counts.values())
    limiter = ", ".join(k for k, v in counts.items() if v == n)  # every limit that binds
    # the target as given (sm_100f, sm_90a), as manifest check names a cubin's: its SM's limits are the same
    return Occupancy(arch, threads_per_cta, registers_per_thread, smem, by_regs, by_smem, by_threads,
                     lim.max_ctas_per_sm, n, limiter, n * warps)


def _family(arch: str) -> str:
    """``sm_90a`` -> ``sm_90``: the SM whose limits a target's code runs under."""
    m = re.match(r"sm_\d+", arch)
    return m.group(0) if m else arch


def cubin_occupancy(cubin: Path | str | bytes, *, kernel: str | None = None, arch: str | None = None,
                    threads_per_cta: int | None = None, dynamic_smem_bytes: int = 0) -> Occupancy:
    """Occupancy of an entry of a cubin: registers and static shared memory from its ELF (the kernel's own: the
    system's reserve, which sm_90 cubins lay inside .nv.shared, counts once, as the limits' reserve), threads per
    CTA from ``__launch_bounds__`` (EIATTR_MAX_THREADS) unless given, the architecture from the cubin
    unless given."""
    from ..manifest.elf import read_cubin

    if arch is not None:
        limits_for(arch)  # a name labkit knows the limits of, before the cubin is read
    if isinstance(cubin, bytes):
        info = read_cubin(cubin)
    else:  # a regular file only: a FIFO or a directory is refused, not waited on
        from .._json import read_bytes, show_path
        from ..errors import FormatError
        from ..manifest.modules import MAX_CUBIN_BYTES

        try:
            info = read_cubin(read_bytes(cubin, what="cubin", max_bytes=MAX_CUBIN_BYTES))
        except FormatError as exc:  # the file's name, then why (a cubin has no JSON path to show)
            raise ArgumentError(f"{show_path(cubin)}: {exc.message}") from None
    names = list(info.entries)
    if kernel is None:
        if len(names) != 1:
            raise ArgumentError(f"the cubin has {len(names)} kernels; pick one (--kernel NAME): {', '.join(names)}")
        kernel = names[0]
    if kernel not in info.entries:
        raise ArgumentError(f"kernel {kernel!r} is not in the cubin; it has: {', '.join(names)}")
    e = info.entries[kernel]
    if e.registers is None:
        raise ArgumentError(f"{kernel}: the cubin records no register count (EIATTR_REGCOUNT)")
    bound = e.max_threads[0] * e.max_threads[1] * e.max_threads[2] if e.max_threads is not None else None
    threads = threads_per_cta
    if threads is None:
        if bound is None:
            raise ArgumentError(f"{kernel} has no __launch_bounds__: give the threads per CTA")
        threads = bound
    if bound is not None and threads > bound:  # the launch would fail: there is no occupancy to give
        raise ArgumentError(f"{kernel}: {threads} threads per CTA is over its __launch_bounds__ of {bound}")
    if arch is not None and info.target is not None and not info.runs_on(divmod(int(_family(arch)[3:]), 10)):
        # an sm_80 cubin runs on an sm_89 GPU, under that SM's limits; an sm_90 one never on an sm_80
        raise ArgumentError(f"--arch {arch}: the cubin is built for {info.target}, which does not run there; compile "
                            "it for that architecture")
    return occupancy(arch=arch or info.target, threads_per_cta=threads, registers_per_thread=e.registers,
                     static_smem_bytes=e.static_smem_bytes, dynamic_smem_bytes=dynamic_smem_bytes)
