"""NVRTC for labkit's own ``.cu`` files: compile to cubin (no GPU needed), cache, load.

Every build uses ``-lineinfo`` and prepends ``#line 1 "<absolute path>"`` so Nsight Compute
can show the saved source (without it NVRTC records a temp name and ncu shows no text).
Cubins are cached by a hash of source, the headers beside it, options, target and NVRTC's version.
"""

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from . import _env
from ._write import write_whole
from .cuda import cupy
from .errors import CompileError, LabkitError

BASE_OPTIONS = ("-lineinfo", "--std=c++17")


@dataclass(frozen=True)
class Cubin:
    image: bytes
    arch: str
    source: Path
    options: tuple[str, ...]
    log: str


def _cache_dir() -> Path:
    """The compiled-kernel cache, created if missing; one that cannot be is refused naming its knob (the bare OSError
    had named a path the user never gave: ``blob.bin/kernels: Not a directory``)."""
    given = _env.getenv("LABKIT_CACHE")
    root = Path(given or os.path.join(os.path.expanduser("~"), ".cache", "labkit")) / "kernels"
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        what = f"LABKIT_CACHE {given}" if given else f"the kernel cache {root.parent}"
        raise LabkitError(f"{what}: cannot make {root} in it ({exc.strerror}); point LABKIT_CACHE at a writable "
                          "directory") from None
    return root


def compile_cubin(source: Path | str, *, arch: str, options: tuple[str, ...] = (),
                  code: str | None = None) -> Cubin:
    """Compile one ``.cu`` file to a cubin for ``arch`` (``sm_90``, ``sm_90a``, ``sm_89``...).

    Args:
        source: the kernel file; its absolute path goes into the ``#line`` directive.
        arch: a real target; NVRTC needs no GPU for this.
        options: extra NVRTC options, e.g. ``("-DCTA_Q=128",)``.
        code: source text to use instead of reading ``source`` (tests).

    Raises:
        CompileError: with NVRTC's log.
    """
    path = Path(source).resolve()
    text = code if code is not None else path.read_text()
    # headers beside the kernel (``#include "x.cuh"``) are found through -I and hashed into the key
    opts = (*BASE_OPTIONS, f"--gpu-architecture={arch}", f"-I{path.parent}", *options)
    full = f'#line 1 "{path}"\n{text}'
    beside = sorted(path.parent.iterdir()) if path.parent.is_dir() else []  # code= needs no file there
    headers = "".join(h.read_text() for h in beside if h.suffix in (".cuh", ".h", ".hpp"))
    nvrtc = cupy().cuda.nvrtc
    compiler = "nvrtc %d.%d" % nvrtc.getVersion()  # another NVRTC (a CuPy upgrade) compiles, and records, anew
    key = hashlib.sha256("\0".join((full, headers, compiler, *opts)).encode()).hexdigest()[:24]
    cached = _cache_dir() / f"{path.stem}-{arch}-{key}.cubin"
    if cached.exists():
        return Cubin(cached.read_bytes(), arch, path, opts, "(cached)")
    prog = nvrtc.createProgram(full, path.name, (), ())
    try:
        try:
            nvrtc.compileProgram(prog, list(opts))
        except nvrtc.NVRTCError as exc:
            log = nvrtc.getProgramLog(prog)
            raise CompileError(f"NVRTC failed on {path.name} for {arch} ({exc}):\n{log}") from None
        log = nvrtc.getProgramLog(prog)
        image = nvrtc.getCUBIN(prog)
    finally:
        nvrtc.destroyProgram(prog)
    write_whole(cached, bytes(image))
    return Cubin(bytes(image), arch, path, opts, log)


def module_file(source: Path | str, cubin: Cubin) -> Path:
    """The cubin as a file CuPy can load, named by its content; one cut short (a kill mid-write) is written again."""
    path = _cache_dir() / f"{Path(source).stem}-{cubin.arch}-{hashlib.sha256(cubin.image).hexdigest()[:24]}.load.cubin"
    if not path.is_file() or path.stat().st_size != len(cubin.image):
        write_whole(path, cubin.image)
    return path


def load_module(source: Path | str, *, options: tuple[str, ...] = (), arch: str | None = None):
    """Compile ``source`` for the current device (or ``arch``) and load it as a CuPy RawModule."""
    from .device import describe

    cp = cupy()
    target = arch or describe(cp.cuda.Device().id).arch
    cubin = compile_cubin(source, arch=target, options=options)
    return cp.RawModule(path=str(module_file(source, cubin)))


def kernel_path(package_file: str, name: str) -> Path:
    """``kernels/<name>`` beside the module whose ``__file__`` is given."""
    return Path(package_file).resolve().parent / "kernels" / name
