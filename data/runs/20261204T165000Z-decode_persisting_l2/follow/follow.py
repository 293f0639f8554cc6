"""What outlives labkit's cold flush between two samples? Each timed call (labkit's plan on pool A, or cuDNN on K/V
copy A) follows, before its pad, the same call on the same data ('same'), the same call on other buffers of the same
shape ('other': labkit on pool B, cuDNN on copy B), or nothing ('none'); shuffled, 16 samples of each, event-timed
as labkit's cold samples are (the pad, then the start event, the call, the end event). Under three flushes: a memset of
2 x L2 (cold), of 8 x L2, and cold_clean. Usage: python3 follow.py OUT.json BxN ..."""
import json
import random
import statistics
import sys
from contextlib import ExitStack

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

import labkit.timing.events as ev
from labkit.cuda import cupy, torch_on_cupy_stream
from labkit.device import describe
from labkit.workloads.decode.bench import shape_runner
from labkit.workloads.decode.peers import gather_contiguous

cp = cupy()
l2 = describe().l2_bytes
rows = []
for b, n in [tuple(map(int, p.split("x"))) for p in sys.argv[2:]]:
    with ExitStack() as stack:
        (ra, _, _), (rb, _, _) = (stack.enter_context(shape_runner(b, n, 128)) for _ in range(2))
        ra.run_once(), rb.run_once()
        t = lambda a: torch.from_dlpack(a.view(cp.int16)).view(torch.bfloat16)
        q = t(ra.buffers["q"]).view(b, 1, 32, 128).transpose(1, 2)
        kv = [tuple(t(gather_contiguous(ra.buffers[x], ra.buffers["table"], b, n)).transpose(1, 2) for x in ("k_pool", "v_pool"))
              for _ in range(2)]
        cp.cuda.Device().synchronize()

        def cudnn(k, v):
            def call():
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
            return torch_on_cupy_stream(call)
        calls = {"labkit": (lambda: ra.launch_call(0), lambda: rb.launch_call(0)),
                 "cudnn": (cudnn(*kv[0]), cudnn(*kv[1]))}
        for a, o in calls.values():
            a(), o()
        cp.cuda.Device().synchronize()
        for label, mode, flush in (("cold 2xL2", "cold", None), ("cold 8xL2", "cold", 8 * l2), ("cold_clean", "cold_clean", None)):
            smp = ev._Sampler.create(mode, flush)
            e0, e1 = cp.cuda.Event(), cp.cuda.Event()
            times = {(who, prev): [] for who in calls for prev in ("same", "other", "none")}
            order = [key for key in times for _ in range(16)]
            random.Random(11).shuffle(order)
            with smp.stream:
                for i, (who, prev) in enumerate(order):
                    a, o = calls[who]
                    if prev != "none":
                        (a if prev == "same" else o)()
                    smp.pad()
                    e0.record(smp.stream)
                    a()
                    e1.record(smp.stream)
                    e1.synchronize()
                    times[(who, prev)].append(cp.cuda.get_elapsed_time(e0, e1) * 1e3)
            for who in calls:
                med = {prev: statistics.median(times[(who, prev)][2:]) for prev in ("same", "other", "none")}
                print(f"{b:3d} x {n:5d} {label:11s} {who:7s} after the same data {med['same']:7.2f} us   other buffers "
                      f"{med['other']:7.2f} us   nothing {med['none']:7.2f} us   same/other {med['same'] / med['other']:.3f}",
                      flush=True)
                rows.append({"batch": b, "kv_len": n, "flush": label, "who": who, "median_us": med,
                             "samples_us": {prev: times[(who, prev)] for prev in ("same", "other", "none")}})
            del smp
        del q, kv, calls, ra, rb
    torch.cuda.empty_cache()
json.dump(rows, open(sys.argv[1], "w"))
