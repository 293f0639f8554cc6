"""The fused mainloop's schedule and the scheduler fields it implies (pure: no GPU).

Field meanings follow the seed report: q_ctas_per_head = ceil(q_len / cta_q),
k_iterations_per_cta = ceil(kv_len / cta_k), tails = len mod tile (0 = no tail),
scheduled_q_rows = q_ctas_per_head * cta_q, q_row_efficiency = q_len / scheduled_q_rows.
"""

from dataclasses import asdict, dataclass

from ...errors import ArgumentError
from ...report.model import Scheduler
from ...values import check_int, parse_int

MAX_SMEM_BYTES = 232448  # dynamic shared memory per CTA, opt-in, on sm_90 and sm_100
MAINLOOPS = ("seed", "sm90")
SM90_STAGES = 3  # K+V stages of attn_fwd_sm90.cu (STAGES there)
SM90_CTA_Q = 192  # CTA_Q there: three consumer warpgroups of 64 rows


@dataclass(frozen=True)
class Schedule:
    """Compile-time parameters of attn_fwd.cu; defaults = the seed's Sage2 kernel.

    ``pv_terms`` 1 is Sage2 (P and V one e4m3 term each); 2 splits both into two e4m3 terms
    (three P.V MMAs and a V_lo tile per stage) for about a third of the error on N(0, 1) inputs.
    """

    cta_q: int = 128
    cta_k: int = 64
    warp_q: int = 32
    explicit_pipeline_stages: int = 2
    pv_terms: int = 1
    mainloop: str = "seed"  # "seed": attn_fwd.cu (mma.sync); "sm90": attn_fwd_sm90.cu (wgmma + TMA, sm_90a)

    def __post_init__(self):
        if self.mainloop not in MAINLOOPS:
            raise ArgumentError(f"mainloop {self.mainloop!r}: expected one of {', '.join(MAINLOOPS)}")
        if self.mainloop == "sm90":
            fixed = {"cta_q": SM90_CTA_Q, "cta_k": 128, "warp_q": 16, "explicit_pipeline_stages": SM90_STAGES,
                     "pv_terms": 1}
            wrong = {k: getattr(self, k) for k, v in fixed.items() if getattr(self, k) != v}
            if wrong:
                raise ArgumentError(f"the sm90 mainloop has fixed tiles {fixed}; got {wrong} (use Schedule.sm90())")
            return
        for name in ("cta_q", "cta_k", "warp_q", "explicit_pipeline_stages", "pv_terms"):
            check_int(getattr(self, name), what=name, lo=1)  # before any modulo: 0 divides nothing
        odd_k = self.cta_k & (self.cta_k - 1)  # V's swizzle maps a row's chunks one to one only for a power of two
        odd_q = self.warp_q > 64 and self.warp_q % 64  # quant_int8.cu's threads take whole shares of 64 rows
        if (self.cta_q % self.warp_q or self.warp_q % 16 or self.cta_k % 64 or self.cta_q // self.warp_q > 8 or odd_k
                or odd_q):
            # the broken rules are worded inside the raise: what a raise says leaves recorded runs current (staleness)
            raise ArgumentError(f"unsupported schedule {self.text()}: " + "; ".join(rule for broken, rule in (
                (self.cta_q % self.warp_q, f"cta_q {self.cta_q} is not a multiple of warp_q {self.warp_q}"),
                (self.warp_q % 16, f"warp_q {self.warp_q} is not a multiple of 16"),
                (self.cta_k % 64, f"cta_k {self.cta_k} is not a multiple of 64"),
                (odd_k and not self.cta_k % 64, f"cta_k {self.cta_k} is not a power of two (64, 128, 256)"),
                (odd_q, f"warp_q {self.warp_q} is above 64 and not a multiple of 64"),
                (self.cta_q // self.warp_q > 8,
                 f"cta_q {self.cta_q} / warp_q {self.warp_q} is {self.cta_q // self.warp_q} warps per CTA, above 8"),
            ) if broken))
        if self.explicit_pipeline_stages != 2:  # not a define: attn_fwd.cu always runs two stages
            raise ArgumentError(f"explicit_pipeline_stages {self.explicit_pipeline_stages}: attn_fwd.cu has 2")
        if self.pv_terms not in (1, 2):
            raise ArgumentError(f"pv_terms must be 1 (Sage2) or 2 (two-term fp8 P and V), got {self.pv_terms}")
        if self.dynamic_smem_bytes(128) > MAX_SMEM_BYTES:
            raise ArgumentError(f"schedule {self.text()}: {self.dynamic_smem_bytes(128)} B of shared memory at "
                                f"head_dim 128, above the {MAX_SMEM_BYTES} B a CTA can have (sm_90 / sm_100); a "
                                "schedule must fit the largest head_dim the kernels take, whatever the shape's")

    @classmethod
    def sm90(cls) -> "Schedule":
        """The wgmma + TMA mainloop (attn_fwd_sm90.cu): 192 x 128 tiles, Q scales per 16 rows, K per 128 keys."""
        return cls(cta_q=SM90_CTA_Q, cta_k=128, warp_q=16, explicit_pipeline_stages=SM90_STAGES, mainloop="sm90")

    def text(self) -> str:
        """``CTA_Q/CTA_K/WARP_Q/PV_TERMS`` (or ``sm90``), the form ``parse`` reads."""
        return "sm90" if self.mainloop == "sm90" else f"{self.cta_q}/{self.cta_k}/{self.warp_q}/{self.pv_terms}"

    @classmethod
    def parse(cls, text: str) -> "Schedule":
        """``seed``, ``sm90``, or ``CTA_Q/CTA_K/WARP_Q/PV_TERMS`` (e.g. ``128/64/32/1``) of the seed-style mainloop."""
        if text in ("seed", "sm90"):
            return cls() if text == "seed" else cls.sm90()
        parts = text.split("/") if isinstance(text, str) else []
        if len(parts) != 4:
            raise ArgumentError(f"schedule {text!r}: expected seed, sm90 or CTA_Q/CTA_K/WARP_Q/PV_TERMS (4 integers)")
        cq, ck, wq, pv = (parse_int(v, what=f"schedule {text!r}: {n}") for v, n in
                          zip(parts, ("CTA_Q", "CTA_K", "WARP_Q", "PV_TERMS")))
        return cls(cta_q=cq, cta_k=ck, warp_q=wq, pv_terms=pv)

    @classmethod
    def parse_list(cls, text: str) -> list["Schedule"]:
        """Comma-separated schedules, each seed, sm90 or CTA_Q/CTA_K/WARP_Q/PV_TERMS (e.g. seed,128/64/32/2,sm90)."""
        return [cls.parse(item) for item in text.split(",")]

    @property
    def warp_k(self) -> int:
        return self.cta_k  # each warp sweeps the whole KV block

    @property
    def warps_per_cta(self) -> int:
        if self.mainloop == "sm90":
            return 4 * (1 + self.cta_q // 64)  # a producer warpgroup and consumer warpgroups of 64 rows
        return self.cta_q // self.warp_q

    @property
    def threads_per_cta(self) -> int:
        return 32 * self.warps_per_cta

    def dynamic_smem_bytes(self, head_dim: int = 128) -> int:
        """Seed-style: Q tile (int8) and two K/V stages (K, V and, with pv_terms 2, V_lo); the second
        stage reuses the Q tile. sm90 (SMEM_BYTES there, which refuses a smaller launch): 1024 B to align the
        swizzle atoms, the Q tile and SM90_STAGES stages of K, V^T and a 1 KB ones block (V^T's rows 128-135)."""
        if self.mainloop == "sm90":
            return 1024 + self.cta_q * 128 + SM90_STAGES * (2 * self.cta_k * 128 + 1024)
        q, kv = self.cta_q * head_dim, (1 + self.pv_terms) * self.cta_k * head_dim
        return max(q, kv) + kv

    def defines(self) -> tuple[str, ...]:
        return (f"-DCTA_Q={self.cta_q}", f"-DCTA_K={self.cta_k}", f"-DWARP_Q={self.warp_q}",
                f"-DPV_TERMS={self.pv_terms}")

    def to_dict(self) -> dict:
        return asdict(self)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def tail_fields(q_len: int, kv_len: int, s: Schedule = Schedule()) -> dict:
    """The per-point geometry fields of the seed's tail study."""
    if q_len < 1 or kv_len < 1:
        raise ArgumentError(f"q_len and kv_len must be >= 1, got {q_len}, {kv_len}")
    q_ctas = ceil_div(q_len, s.cta_q)
    return {"q_ctas_per_head": q_ctas, "k_iterations_per_cta": ceil_div(kv_len, s.cta_k),
            "q_tail_rows": q_len % s.cta_q, "k_tail_rows": kv_len % s.cta_k,
            "scheduled_q_rows": q_ctas * s.cta_q, "q_row_efficiency": q_len / (q_ctas * s.cta_q)}


def scheduler(batch: int, q_len: int, kv_len: int, heads: int, head_dim: int = 128,
              s: Schedule = Schedule()) -> Scheduler:
    """The report's ``scheduler`` section for one launch of the mainloop."""
    t = tail_fields(q_len, kv_len, s)
    return Scheduler(cta_q=s.cta_q, cta_k=s.cta_k, warp_q=s.warp_q, warp_k=s.warp_k, warps_per_cta=s.warps_per_cta,
                     threads_per_cta=s.threads_per_cta, dynamic_shared_memory_bytes=s.dynamic_smem_bytes(head_dim),
                     q_ctas_per_head=t["q_ctas_per_head"], heads=heads, grid_ctas=t["q_ctas_per_head"] * heads * batch,
                     k_iterations_per_cta=t["k_iterations_per_cta"], q_tail_rows=t["q_tail_rows"],
                     k_tail_rows=t["k_tail_rows"], explicit_pipeline_stages=s.explicit_pipeline_stages)


def waves(grid_ctas: int, sms: int, ctas_per_sm: int) -> tuple[int, float]:
    """(waves, wave efficiency) of a non-persistent grid: ceil(ctas / slots), ctas / (waves * slots)."""
    slots = sms * ctas_per_sm
    w = ceil_div(grid_ctas, slots)
    return w, grid_ctas / (w * slots)
