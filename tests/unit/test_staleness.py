"""A record stays current when a kernel or plan changed only in comments, docstrings or whitespace; it turns stale
when the code changed (labkit.staleness, the notebooks' banner)."""

import re
import subprocess

import pytest

import labkit.workloads.decode as decode_package
from labkit import _env
from labkit.kernels import compile_cubin, kernel_path
from labkit.manifest.elf import _sections
from labkit.staleness import code_of, kernel_commits_since
from labkit.workloads.decode import DecodeGeometry
from labkit.workloads.decode.plan import plan_call


def test_a_comment_or_docstring_in_a_kernel_or_plan_leaves_a_record_current(tmp_path, monkeypatch):
    """A comment on a not-kept A/B in decode/loads.py (8401753) had the banner call every notebook's record stale:
    what counts is code. A change in code beside a comment still counts."""
    def git(*args):
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True,
                              text=True).stdout.strip()

    kernel, plan = tmp_path / "labkit" / "k.cuh", tmp_path / "labkit" / "workloads" / "decode" / "loads.py"
    plan.parent.mkdir(parents=True)
    kernel.write_text('#define A 1\nint v = A; // one\nconst char* s = "// kept";\n')
    plan.write_text('"""Loads."""\nX = (1,)  # one\n\n\ndef f():\n    """Doc."""\n    return X\n')
    git("init", "-q")
    git("config", "user.email", "t@t"), git("config", "user.name", "t")
    git("add", "."), git("commit", "-qm", "v1")
    recorded = git("rev-parse", "HEAD")
    monkeypatch.setattr(_env, "repo_root", lambda: tmp_path)
    kernel.write_text('/* why,\n   at length */\n#define A 1\nint   v = A;  // two\n\nconst char* s = "// kept";\n')
    plan.write_text('"""Loads, said again."""\n# a measurement\nX = (1,)  # two\n\n\ndef f():\n    """Doc 2."""\n'
                    '    return X\n')
    git("commit", "-qam", "comments, docstrings, blank lines and spaces")
    assert kernel_commits_since(recorded) == 0
    for path, text in ((kernel, '#define A 1\nint v = A; // one\nconst char* s = "// kept!";\n'),
                       (plan, '"""Loads."""\nX = (1, 2)  # one\n\n\ndef f():\n    """Doc."""\n    return X\n')):
        before = path.read_text()
        path.write_text(text)  # a string literal's "comment", a value
        git("commit", "-qam", "code")
        assert kernel_commits_since(recorded) == int(git("rev-list", "--count", f"{recorded}..HEAD")), path
        path.write_text(before)
        git("commit", "-qam", "back")
        assert kernel_commits_since(recorded) == 0


def _texts(image: bytes) -> dict:
    return {name: image[off:off + size] for name, (_, off, size, _) in _sections(image).items()
            if name.startswith(".text")}


@pytest.mark.parametrize("batch, kv_len", [(1, 8192), (64, 1024)])
def test_the_code_of_a_kernel_compiles_to_its_machine_code(batch, kv_len):
    """What the check compares is the code NVRTC compiles: the plan's decode build (page ids ahead at batch 1, the
    one-stage 4-warp build at 64 x 1k), its header inlined, read as code_of reads it, compiles to the same .text."""
    kb = plan_call(DecodeGeometry(batch, 32, 8, 128, 64, kv_len // 64, kv_len)).kernel
    src = kernel_path(decode_package.__file__, kb.source)
    header = src.with_name("paged_decode.cuh")
    inlined = src.read_text().replace('#include "paged_decode.cuh"', header.read_text())
    code = code_of(src.name, inlined)
    assert "//" not in re.sub(r'"[^"\n]*"', "", code) and "/*" not in code and "\n\n" not in code
    assert len(code) < 0.7 * len(inlined)  # the comments are most of the text
    now = compile_cubin(src, arch="sm_90", options=kb.options())
    read = compile_cubin(src, arch="sm_90", options=kb.options(), code=code)
    assert _texts(read.image) == _texts(now.image) and _texts(now.image)
