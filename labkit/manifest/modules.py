"""Find a manifest's cubins by sha256 and read them: data/cubins, user dirs, flashinfer-cubin."""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .. import _env
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


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def find(module: Module, dirs: list[Path]) -> LoadedModule:
    """Locate ``module.source`` (by name, else any ``*.cubin`` with the same sha256).

    Raises:
        ModuleError: none found, or found with another sha256.
    """
    wrong = []
    for d in dirs:
        if not d.is_dir():
            continue
        named = list(d.rglob(module.source)) if d.name == "cubins" and "flashinfer" in str(d) else [d / module.source]
        candidates = [p for p in named if p.is_file()] + sorted(p for p in d.glob("*.cubin") if p.name != module.source)
        for p in candidates:
            sha = _sha(p)
            if sha == module.sha256:
                image = p.read_bytes()
                try:
                    info = read_cubin(image)
                except FormatError as exc:
                    raise ModuleError(f"modules.{module.name}: {p}: {exc}") from None
                return LoadedModule(module, p, image, info)
            if p.name == module.source:
                wrong.append((p, sha))
    if wrong:
        p, sha = wrong[0]
        raise ModuleError(f"modules.{module.name}.sha256: {p} has sha256 {sha}, the manifest expects {module.sha256}")
    raise ModuleError(f"modules.{module.name}: no cubin with sha256 {module.sha256[:16]}... ({module.source}) in "
                      f"{', '.join(str(d) for d in dirs)}; put it in data/cubins/ or pass --cubin-dir")
