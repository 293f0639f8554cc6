"""A caller's build knobs for one decode call (``plan.plan_call``'s overrides) and the checks of the ones that go
together, each refusing a bad combination in one line before anything is built or launched."""

from ...errors import ArgumentError
from ...values import check_int, plain_mapping
from .geometry import DecodeGeometry, KernelBuild

OVERRIDES = ("variant", "row_warps", "stages", "warps", "keys_per_warp", "qk_chains", "dim_warps", "kv_evict_first",
             "cluster", "tail_units", "tail_splits", "persistent", "wide_boxes", "row_boxes", "page_prefetch",
             "padded_rows")
TAIL_MAX_SPLITS = 16  # TAIL_SPLITS in kernels/paged_decode_mma.cu


def check_overrides(overrides: dict) -> dict:
    """``run_decode``'s build knobs: a name outside ``OVERRIDES`` refused (a review: ``sms=`` or ``arch=`` had reached
    the plan, ``foo=`` a TypeError), a notebook's numpy integers and bools as Python's (their reprs had been said)."""
    unknown = [k for k in overrides if k not in OVERRIDES]
    if unknown:
        raise ArgumentError(f"{', '.join(unknown)}: not a build knob of the decode call; expected any of "
                            f"{', '.join(OVERRIDES)}")
    return plain_mapping(overrides, what="build knobs")


def check_call_args(splits, sms, arch) -> None:
    """``plan_call``'s split count, SMs and architecture, refused by name before anything is planned (an API walk:
    splits 0, 1000 or '2' were planned and refused only at build, 0 SMs divided by zero, arch 'h200' reached NVRTC).
    A count within range is checked against the call's pages when it is built."""
    import re

    from .build import MAX_SPLITS  # build imports this module

    if splits is not None:
        check_int(splits, what="splits (None: the plan's)", lo=1, hi=MAX_SPLITS)
    check_int(sms, what="sms (the GPU's SM count)", lo=1)
    if not isinstance(arch, str) or not re.fullmatch(r"sm_\d+[af]?", arch):
        raise ArgumentError(f"arch {arch!r}: expected a CUDA target such as sm_90")


def check_persistent(kb: KernelBuild, splits, cluster, tail_units) -> None:
    """Persistent CTAs take whole units (one split, no cluster or tail) of a tensor-core build with q in registers."""
    if kb.variant != "mma" or kb.head_dim // kb.dim_warps > 128:
        raise ArgumentError(f"persistent: a tensor-core build whose warps hold q in registers (head_dim / dim_warps "
                            f"<= 128); this call builds {kb.variant}, head_dim {kb.head_dim}, dim_warps {kb.dim_warps}")
    wrong = (("splits", splits, splits not in (None, 1)), ("cluster", cluster, bool(cluster)),
             ("tail_units", tail_units, tail_units is not None))
    given = [f"{k}={int(v) if isinstance(v, bool) else v}" for k, v, bad in wrong if bad]
    if given:
        raise ArgumentError(f"persistent: CTAs claim whole units, so one split and no cluster or tail; drop "
                            f"{', '.join(given)}")


def check_tail(g: DecodeGeometry, tail_units, tail_splits, cluster) -> None:
    """The tail knobs: both given, in range, and no cluster (its splits are fixed per unit)."""
    top = min(TAIL_MAX_SPLITS, g.max_pages)
    if tail_units is None or tail_splits is None:
        raise ArgumentError("tail_units and tail_splits go together: how many of the last units, in how many splits")
    if isinstance(tail_units, bool) or not isinstance(tail_units, int) or tail_units < 1:
        raise ArgumentError(f"tail_units {tail_units!r}: expected a positive count of the call's last units")
    if isinstance(tail_splits, bool) or not isinstance(tail_splits, int) or not 2 <= tail_splits <= top:
        raise ArgumentError(f"tail_splits {tail_splits!r}: expected 2..{top} (at most one per page of the "
                            f"{g.max_pages}, and at most {TAIL_MAX_SPLITS})")
    if cluster:
        raise ArgumentError("tail_units: a cluster combines a fixed number of splits per unit; tails take none")
