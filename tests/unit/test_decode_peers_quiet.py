"""A peer's failed torch.compile is one reason, not a dump: notebook 03's bandwidth cell, live on an H100, showed about
100 lines of Inductor's log (a Triton kernel's whole source) where FlexAttention could not compile 64 x 32k."""

import subprocess
import sys

from ..conftest import ROOT

SCRIPT = r"""
import logging, os, subprocess, sys
from labkit.workloads.decode.peers import quiet_compile

handler = logging.StreamHandler(sys.stderr)  # torch's own: a handler on its top logger, writing to sys.stderr
logging.getLogger("torch").addHandler(handler)
inductor = logging.getLogger("torch._inductor.runtime.triton_heuristics")
with quiet_compile():
    try:
        raise RuntimeError("no kernel")
    except RuntimeError:
        inductor.exception("Triton compilation failed: triton_tem_fused_flex_attention_0")
    logging.getLogger("torch._dynamo").warning("dynamo noise")
    os.write(2, b"descriptor noise\n")
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('worker noise\\n')"], check=True)
inductor.error("said after")
os.write(2, b"descriptor after\n")
print("levels", logging.getLogger("torch._inductor").level, logging.getLogger("torch._dynamo").level)
"""


def test_a_failed_compile_inside_quiet_compile_prints_nothing_and_stderr_comes_back_after():
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "said after\ndescriptor after\n"  # the noise of all four kinds gone, what follows kept
    assert done.stdout == "levels 0 0\n"  # the loggers' own levels (unset) restored
