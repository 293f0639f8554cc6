"""A decode build's label in words: the ``kernel`` column of every decode table (``mma w4s1c1``, written by
``geometry.kernel_label``; the bench adds a tail's unit count, ``mma w4s3 tail/5 (48 units)``) read back into its
parts, so that a table can say what its names mean."""

import re

from .geometry import kernel_label

# kernel_label's grammar: variant, then warps / dim pairs / stages / keys per warp / Q K^T chains / evict_first as one
# word (fma: row warps and stages), then the cluster, tail, persistent and load words
_HEAD = re.compile(r"(?:mma w(?P<w>\d+)(?:d(?P<d>\d+))?s(?P<s>\d+)(?:k(?P<k>\d+))?(?:c(?P<c>\d+))?(?P<ef>ef)?"
                   r"|fma r(?P<r>\d+)s(?P<fs>\d+))")
_TAIL = re.compile(r"cl(?P<cl>\d+)|tail/(?P<tail>\d+)|(?P<P>P)|(?P<wide>wide)|(?P<rows>rows)|(?P<pp>pp)|(?P<pad>pad)")

# each part of a label, in the order the legend gives them
TERMS = {
    "mma": "mma = tensor cores (mma.sync)",
    "fma": "fma = CUDA cores",
    "w": "wN = N warps per CTA",
    "d": "dN = those warps in groups of N that split head_dim",
    "r": "rN = N row warps per CTA",
    "s": "sN = N K/V stages in flight per CTA",
    "k": "kN = N keys per warp a stage",
    "c": "cN = N Q K^T accumulator chains (2 where no c)",
    "ef": "ef = K/V loads with L2 evict_first",
    "cl": "clN = a unit's splits combined in a cluster of N",
    "tail": "tail/N (M units) = the call's last M (sequence, KV head) units in N splits each",
    "P": "P = persistent CTAs claim the units",
    "wide": "wide = one TMA load per page slice",
    "rows": "rows = one TMA load per page slice, each token row whole",
    "pp": "pp = page ids loaded a stage ahead",
    "pad": "pad = unswizzled K/V rows padded to 136 dims, one TMA load per page slice",
}


def plan_label(plan) -> str:
    """A ``CallPlan``'s build as every decode table names it: ``kernel_label``, and a tail's unit count after it."""
    return kernel_label(plan.kernel) + (f" ({plan.tail_units} units)" if plan.tail_units else "")


def label_parts(label: str) -> set[str] | None:
    """The parts (``TERMS``' keys) that ``label`` names, or None where it is not a label ``kernel_label`` writes
    (an older record's, e.g. ``mma/1``)."""
    units = re.search(r" \(\d+ units\)$", label)  # the bench's count of tail units, after tail/N
    words = label[:units.start()].split(" ") if units else label.split(" ")
    m = _HEAD.fullmatch(" ".join(words[:2]))
    if m is None:
        return None
    parts = {"mma" if m["w"] else "fma"} | {k for k in ("w", "d", "s", "k", "c", "ef", "r") if m[k]}
    if m["fs"]:
        parts.add("s")
    for word in words[2:]:
        t = _TAIL.fullmatch(word)
        if t is None:
            return None
        parts |= {k for k, v in t.groupdict().items() if v}
    return parts if units is None or "tail" in parts else None


def legend(labels) -> list[str]:
    """Lines for under a table whose kernel column holds ``labels``: each part those labels use, in words, and the
    labels this labkit cannot read back (none: no line for them)."""
    named, unread = set(), []
    for label in dict.fromkeys(labels):  # in order, once each
        parts = label_parts(label)
        if parts is None:
            unread.append(label)
        else:
            named |= parts
    lines = []
    if named:
        lines.append("kernel: " + "; ".join(text for key, text in TERMS.items() if key in named))
    if unread:
        lines.append(f"kernel {', '.join(unread)}: an older label this labkit does not spell out")
    return lines
