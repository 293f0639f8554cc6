"""The peers a decode kernel is measured against, on the same shape in the same process: torch SDPA
(cuDNN and flash backends) and FlashAttention-3 (PyPI ``fa3-fwd``, non-paged) on labkit's own K/V
gathered contiguous through its page table, timed interleaved with labkit's call in a shuffled order
(cold L2; ``labkit_beside_peers`` is labkit's own rate there), and torch's FlexAttention on a paged
pool of its own (a shuffled page table as the block mask's KV indices, one page per KV block;
compiled once per shape, so only at ``FLEX_POINTS``), one query token, GQA. A peer that is absent or
refuses the shape is reported as such, and so is one whose output is not labkit's (``output_disagreement``,
checked once before the timing): it is not timed."""

import contextlib
import logging
import os
import sys
import tempfile

from ..._text import cut_at_word
from ...cuda import cupy, torch_on_cupy_stream
from ...timing import interleave, time_gpu
from ...timing.stats import median_interval

PEERS = ("sdpa_cudnn", "sdpa_flash", "fa3", "flex_paged")
FLEX_POINTS = {(1, 8192, 128), (8, 8192, 128), (64, 8192, 128), (64, 32768, 128), (64, 8192, 256)}  # the issue's


def best_peer(rates) -> tuple[str, float] | None:
    """The fastest of ``PEERS`` in ``rates`` (name -> TB/s, or the reason it has none) as (name, TB/s); None if none
    has a rate. ``labkit decode bench --peers`` divides by it, ``labkit report map`` names it."""
    timed = [(name, v) for name, v in rates.items() if name in PEERS and isinstance(v, float)]
    return max(timed, key=lambda nv: nv[1], default=None)


# A peer's output may differ from labkit's by a few bf16 roundings of the same attention (2^-5 of the largest |value| is
# four steps at the top binade); one that read the wrong K/V is off by the output's own size.
PEER_TOLERANCE = 2.0 ** -5


def output_disagreement(got, want) -> str | None:
    """Why a peer's output ``got`` is not labkit's ``want`` on the same call, or None when it is: both float arrays of
    one shape, compared element by element against ``PEER_TOLERANCE`` x labkit's largest |value|."""
    import numpy as np

    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    if got.shape != want.shape:
        return f"output shape {list(got.shape)}, expected {list(want.shape)}"
    allowed = PEER_TOLERANCE * float(np.abs(want).max())
    bad = ~(np.abs(got - want) <= allowed)  # NaN counts as bad
    if not bad.any():
        return None
    worst = float(np.nanmax(np.where(np.isnan(got), np.inf, np.abs(got - want))))
    return (f"wrong output: {int(bad.sum())} of {bad.size} values differ from labkit's by more than {allowed:.3g} "
            f"(max |diff| {worst:.3g})")


def peer_rates(batch: int, kv_len: int, head_dim: int, *, heads_q: int = 32, heads_kv: int = 8,
               iterations: int = 20, page_size: int = 64, mode: str = "cold", **overrides) -> dict[str, float | str]:
    """K+V TB/s of each peer (q_len 1) and of labkit's call beside them (``labkit_beside_peers``; ``overrides``:
    ``plan_call``'s build knobs, as for ``bench_point``), or why a peer did not run; every sample in ``mode``
    (``cold`` or ``cold_clean``, ``labkit.timing``)."""
    try:
        import torch
    except ImportError:
        return {name: "torch not importable" for name in PEERS}
    out, per_round = _beside_labkit(batch, kv_len, head_dim, heads_q, heads_kv, page_size, iterations, overrides, mode)
    torch.cuda.empty_cache()
    if (batch, kv_len, head_dim) in FLEX_POINTS:
        out["flex_paged"] = _flex_paged(batch, kv_len, head_dim, heads_q, heads_kv, page_size, iterations, mode)
    torch.cuda.empty_cache()  # the peers' K/V copies are gone: give the memory back for the next point
    out.update(x_best_peer_interval(out, per_round))
    return out


def x_best_peer_interval(rates: dict, per_round: dict) -> dict[str, float]:
    """``x_best_peer_low`` and ``x_best_peer_high``: a 95 % interval for the median of labkit's rate over the best
    peer's round by round (``per_round``: peer -> labkit's rate / the peer's, one per interleaved round), so a
    reader can tell x 0.999 that the samples' spread covers from a gap they resolve; none where the best peer was
    not timed in labkit's rounds (FlexAttention) or the rounds are too few (``median_interval``)."""
    best = best_peer(rates)
    ratios = per_round.get(best[0]) if best else None
    interval = median_interval(ratios) if ratios else None
    return {} if interval is None else {"x_best_peer_low": interval[0], "x_best_peer_high": interval[1]}


def interval_label(low: float, high: float) -> str:
    """``x_best_peer_interval``'s two ends as tables and lines print them: ``0.994-1.004``."""
    return f"{low:.3f}-{high:.3f}"


def inside_noise(high: float | None) -> bool:
    """Whether a call behind the best peer is behind by less than its rounds can tell: the top of its 95 % interval
    (None where its report kept none) reaches 1."""
    return high is not None and high >= 1.0


def beyond_noise(highs: list[float | None]) -> str:
    """Of calls behind the best peer (the tops of their intervals; None where a report kept none), at how many the
    rounds resolve the gap, their whole 95 % interval under 1: one phrase, '' where none has an interval."""
    known = [h for h in highs if h is not None]
    if not known:
        return ""
    of = f"the {len(known)} with an interval" if len(known) < len(highs) else f"{len(highs)}"
    resolved = sum(not inside_noise(h) for h in known)
    return f"behind beyond the rounds' noise (95 % interval under 1) at {resolved} of {of}"


def gather_contiguous(pool, table, batch: int, kv_len: int):
    """[batch, kv_len, heads_kv, head_dim] from a plain pool [pages, heads_kv, page_size, head_dim] through the
    page table [batch, max_pages] (CuPy or NumPy arrays)."""
    _, hk, ps, d = pool.shape
    pages = -(-kv_len // ps)
    x = pool[table[:, :pages]]  # [batch, pages, Hkv, P, D]
    return x.transpose(0, 1, 3, 2, 4).reshape(batch, pages * ps, hk, d)[:, :kv_len].copy(order="C")


def _beside_labkit(batch: int, kv_len: int, head_dim: int, heads_q: int, heads_kv: int, page_size: int,
                   iterations: int, overrides: dict, mode: str) -> tuple[dict, dict]:
    """labkit's call (the bench point's runner and data) and SDPA / FA3 on its q and its K/V gathered contiguous,
    one cold sample of each per round in a shuffled order; labkit's output must not change while timed. The rates,
    and per peer labkit's rate over the peer's in each round."""
    from .bench import shape_runner

    shape = {"heads_q": heads_q, "heads_kv": heads_kv, "page_size": page_size}
    with shape_runner(batch, kv_len, head_dim, **shape, **overrides) as (runner, _, _):
        timed = _time_beside(runner, batch, kv_len, head_dim, heads_q, heads_kv, iterations, mode)  # K/V copies die
        del runner  # its buffers go back before the pool is emptied
    return timed


def _time_beside(runner, batch: int, kv_len: int, head_dim: int, heads_q: int, heads_kv: int,
                 iterations: int, mode: str) -> tuple[dict, dict]:
    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from .inputs import bf16_to_f32

    cp = cupy()
    out: dict[str, float | str] = {}
    runner.run_once()
    first = runner.buffers["out"].copy()
    want = cp.asnumpy(bf16_to_f32(first)).reshape(batch, heads_q, head_dim)

    def as_torch(a):  # bf16 words -> a torch bf16 tensor on the same memory
        return torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)

    table = runner.buffers["table"]
    k, v = (as_torch(gather_contiguous(runner.buffers[n], table, batch, kv_len)) for n in ("k_pool", "v_pool"))
    q = as_torch(runner.buffers["q"]).view(batch, 1, heads_q, head_dim)
    qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))  # SDPA takes [B, H, N, D]
    cp.cuda.get_current_stream().synchronize()  # the gather is done before any peer starts, whatever its stream

    def sdpa(backend):
        with sdpa_kernel([backend]):
            return torch.nn.functional.scaled_dot_product_attention(qt, kt, vt, enable_gqa=True)[:, :, 0]

    def fa3():
        o = flash_attn_func(q, k, v, num_splits=0)  # 0: its own split heuristic
        return (o[0] if isinstance(o, tuple) else o)[:, 0]  # some builds also return the softmax's log-sum-exp

    calls = {"sdpa_cudnn": lambda: sdpa(SDPBackend.CUDNN_ATTENTION),
             "sdpa_flash": lambda: sdpa(SDPBackend.FLASH_ATTENTION)}
    try:
        from fa3_fwd_interface import flash_attn_func

        calls["fa3"] = fa3
    except Exception as exc:  # noqa: BLE001 - an optional peer: say why it is missing
        out["fa3"] = f"not available ({_why(exc)})"
    fns = {"labkit_beside_peers": lambda: runner.launch_call(0)}  # its split counter resets itself
    for name, call in calls.items():
        try:  # a first call outside the timing: a peer refusing a shape is a result, not a failure
            run = torch_on_cupy_stream(call)
            got = run()
            cp.cuda.get_current_stream().synchronize()
            why = output_disagreement(got.float().cpu().numpy(), want)  # [batch, heads_q, head_dim]
        except Exception as exc:  # noqa: BLE001
            out[name] = _why(exc)
            continue
        if why:  # timed, it would be a rate for some other computation
            out[name] = why
        else:
            fns[name] = run
    timing = interleave(fns, iterations=iterations, warmup=1, mode=mode, order="shuffle")
    if not bool(cp.all(runner.buffers["out"] == first)):
        raise AssertionError("decode: the calls timed beside the peers wrote a different output than the first")
    nbytes = 2 * batch * kv_len * heads_kv * head_dim * 2
    out.update({name: nbytes / t.stats.p50_s / 1e12 for name, t in timing.items()})
    ours = timing.pop("labkit_beside_peers").samples_s  # interleave keeps every sample, in round order
    return out, {name: tuple(p / o for p, o in zip(t.samples_s, ours, strict=True)) for name, t in timing.items()}


REASON_KEPT = 4000  # characters of a peer's error a report keeps (the decode report reads strings of up to 4096)
REASON_SHOWN = 100  # characters of it a printed line shows
OLD_REASON_KEPT = 200  # what reports kept of it before they kept it whole
# torch's advice under every compile error, not its cause: a printed line that ended in it had cut the cause off
TORCH_ADVICE = "Set TORCHDYNAMO_VERBOSE="
COMPILE_ERRORS = ("InductorError", "BackendCompilerFailed")  # torch.compile's, as a peer's reason starts with them


def _why(exc: Exception) -> str:
    """Why a peer did not run, as the report keeps it: the exception's type and its whole message (Inductor wraps a
    subprocess's traceback, whose cause is near its end); one over ``REASON_KEPT`` characters keeps its start and its
    end. ``shown_reason`` makes the printed line of it."""
    text = f"{type(exc).__name__}: {str(exc).strip()}"
    if len(text) <= REASON_KEPT:
        return text
    gap, was = "", None
    while gap != was:  # the marker takes room too: what it says is left out counts its own length, digits and all
        was, gap = gap, f"\n[... {len(text) - REASON_KEPT + len(gap)} characters left out ...]\n"
    head = (REASON_KEPT - len(gap)) // 4
    return text[:head] + gap + text[len(text) - (REASON_KEPT - len(gap) - head):]


def shown_reason(peer: str, why: str, *, saved_in: str | None = None, limit: int = REASON_SHOWN) -> str:
    """A peer's reason on one printed line: a message of one or two lines whole, a traceback by its type and its last
    line (its cause), torch's advice under a compile error left out, cut at a word to ``limit`` characters with
    ' ...'; then led by what it means where that is known (flex_paged's compile error: torch.compile failed for
    FlexAttention at this shape), and, where the line is shorter than the reason, followed by where the reason is
    kept (``saved_in``), whole or, in reports older than that, as they cut it."""
    lines = [ln.split(TORCH_ADVICE)[0].strip() for ln in why.splitlines() if not ln.strip().startswith(TORCH_ADVICE)]
    lines = [ln for ln in lines if ln]
    if len(lines) > 2:  # a traceback: its first line says that an exception occurred (its type kept), its last which
        lines = [lines[0].split(": ")[0] + ": ...", lines[-1]]
    text = cut_at_word(" ".join(" ".join(lines).split()), limit)
    shortened = text != " ".join(why.split())
    if peer == "flex_paged" and text.startswith(COMPILE_ERRORS):
        text = f"torch.compile failed for FlexAttention at this shape: {text}"
    if not (saved_in and shortened):
        return text
    # reports before the whole message was kept hold its first and last line cut to 200 characters, ending "..."
    cut_then = len(why) <= OLD_REASON_KEPT and why.endswith("...")
    return text + f" (shortened; {'as recorded, itself cut' if cut_then else 'the whole reason'}: {saved_in})"


COMPILE_LOGGERS = ("torch._inductor", "torch._dynamo")


@contextlib.contextmanager
def quiet_compile(loggers: tuple[str, ...] = COMPILE_LOGGERS):
    """torch.compile's own report of a failed compile left out: Inductor logs a Triton compile that fails with the
    kernel's whole source, about 100 lines in notebook 03's bandwidth cell at 64 x 32k (live, on an H100), from this
    process and from its compile workers, which write to file descriptor 2. The peer's reason keeps the error
    (``_why``), so while torch compiles its loggers stay quiet and descriptor 2 goes to a file that is then dropped
    (a worker started meanwhile keeps writing there, to no one)."""
    quiet = [logging.getLogger(name) for name in loggers]
    levels = [log.level for log in quiet]
    for log in quiet:
        log.setLevel(logging.CRITICAL + 1)
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        for log, level in zip(quiet, levels):
            log.setLevel(level)


def _flex_paged(batch: int, kv_len: int, head_dim: int, heads_q: int, heads_kv: int, page_size: int,
                iterations: int, mode: str) -> float | str:
    """FlexAttention (torch.compile'd) over a paged pool [1, Hkv, pages x page_size, D]: the block mask
    visits each sequence's pages in its (shuffled) page-table order, one KV block per page."""
    import torch

    try:
        from torch.nn.attention.flex_attention import BlockMask, flex_attention
    except ImportError as exc:
        return f"not available ({exc})"
    if kv_len % page_size:
        return f"kv_len {kv_len} is not whole pages of {page_size}"
    pages = kv_len // page_size
    gen = torch.Generator(device="cuda").manual_seed(1)
    q = torch.randn(batch, heads_q, 1, head_dim, device="cuda", dtype=torch.bfloat16, generator=gen)
    pool = [torch.randn(1, heads_kv, batch * pages * page_size, head_dim, device="cuda", dtype=torch.bfloat16,
                        generator=gen) for _ in range(2)]
    # kv_indices' last dim spans every KV block of the pool (BlockMask scatters by block id); each row
    # lists its sequence's pages first, and kv_num_blocks says how many of them count
    blocks = batch * pages
    table = torch.zeros(batch, 1, 1, blocks, device="cuda", dtype=torch.int32)
    table[..., :pages] = torch.randperm(blocks, device="cuda", generator=gen).view(batch, 1, 1, pages)
    try:
        mask = BlockMask.from_kv_blocks(torch.full((batch, 1, 1), pages, device="cuda", dtype=torch.int32), table,
                                        BLOCK_SIZE=(128, page_size), seq_lengths=(1, batch * pages * page_size))
        flex = torch.compile(flex_attention, dynamic=False)
        call = lambda: flex(q, *pool, block_mask=mask, enable_gqa=True)  # noqa: E731
        with quiet_compile():
            call()  # compiles outside the timed region
            torch.cuda.synchronize()
        t = time_gpu(torch_on_cupy_stream(call), name="peer/flex_paged", iterations=iterations, mode=mode,
                     min_time_s=0.1)
    except Exception as exc:  # noqa: BLE001 - a peer refusing a shape is a result, not a failure
        return _why(exc)
    return 2 * batch * kv_len * heads_kv * head_dim * 2 / t.stats.p50_s / 1e12
