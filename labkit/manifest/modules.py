"""Find a manifest's cubins by sha256 and read them: data/cubins, user dirs, flashinfer-cubin."""

import glob
import hashlib
import stat
from dataclasses import dataclass
from pathlib import Path

from .. import _env
from .._json import read_bytes, show_path
from ..errors import FormatError, LabkitError
from .elf import CubinInfo, read_cubin
from .model import Module


class ModuleError(LabkitError):
    """A module's cubin is missing, has the wrong sha256, or is not a cubin."""


@dataclass(frozen=True)
class LoadedModule:
    module: Module
    path: Path
    image: bytes
    info: CubinInfo


def search_dirs(extra: tuple[Path | str, ...] = ()) -> list[Path]:
    """``data/cubins``, then user directories, then the installed flashinfer-cubin package."""
    dirs = [_env.data_dir() / "cubins", *map(Path, extra)]
    try:
        import flashinfer_cubin  # optional extra: labkit[cubins]

        dirs.append(Path(flashinfer_cubin.__file__).parent / "cubins")
    except ImportError:
        pass
    return dirs


MAX_CUBIN_BYTES = 256 << 20  # the largest flashinfer cubins are a few MB


def _regular(p: Path) -> bool:
    """A regular file (symlinks followed); lstat errors count as no."""
    try:
        return stat.S_ISREG(p.stat().st_mode)
    except (OSError, ValueError):
        return False


# where a missing cubin of a manifest model comes from, when it is not FlashInfer's: said instead of that hint
REBUILT_BY = {"labkit-paged-decode": "rebuild it with labkit decode build, which writes it beside its manifest"}


def find(module: Module, dirs: list[Path], *, model: str = "") -> LoadedModule:
    """Locate ``module.source`` (by name, else any ``*.cubin`` with the same sha256).

    Raises:
        ModuleError: none found, or found with another sha256.
    """
    wrong = []
    for d in dirs:
        if not d.is_dir():
            continue
        # the name as a name, never a pattern: a source of "*" had read and hashed every cubin of flashinfer-cubin
        named = (list(d.rglob(glob.escape(module.source))) if d.name == "cubins" and "flashinfer" in str(d)
                 else [d / module.source])
        for p in named:  # the named file exists but is a directory, FIFO or device: say so, never open it
            if p.exists() and not _regular(p):
                wrong.append((p, "is not a regular file (not opened)"))
        candidates = [p for p in named if _regular(p)]
        candidates += sorted(p for p in d.glob("*.cubin") if p.name != module.source and _regular(p))
        for p in candidates:
            try:
                image = read_bytes(p, what="cubin", max_bytes=MAX_CUBIN_BYTES)
            except FormatError as exc:
                if p.name == module.source:
                    wrong.append((p, "is not readable as a cubin: " + exc.message))
                continue
            sha = hashlib.sha256(image).hexdigest()
            if sha == module.sha256:
                try:
                    info = read_cubin(image)
                except FormatError as exc:
                    raise ModuleError(f"modules.{module.name}: {show_path(p)}: {str(exc).split(': ', 1)[-1]}") from None
                return LoadedModule(module, p, image, info)
            if p.name == module.source:
                wrong.append((p, f"has sha256 {sha}"))
    if wrong:  # every file by the module's name, in search order: the one the user put there may not be the first
        found = "; ".join(f"{show_path(p)} {what}" for p, what in wrong)
        raise ModuleError(f"modules.{module.name}.sha256: {found}; the manifest expects {module.sha256}")
    source = REBUILT_BY.get(model, "or install FlashInfer's cubins: pip install 'labkit[cubins]'")
    raise ModuleError(f"modules.{module.name}: no cubin with sha256 {module.sha256[:16]}... ({module.source}) in "
                      f"{', '.join(str(d) for d in dirs)}; put it in data/cubins/, pass --cubin-dir, {source}")
