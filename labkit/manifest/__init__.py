"""Launch manifests (schema_version 4): parse strictly, validate, pack, run prebuilt cubins."""

from .elf import CubinInfo, read_cubin
from .issues import Issue, ManifestError
from .model import Manifest
from .parse import SCHEMA_VERSION, load, loads
from .validate import CheckResult, check

__all__ = ["SCHEMA_VERSION", "CheckResult", "CubinInfo", "Issue", "Manifest", "ManifestError", "Runner", "check",
           "load", "loads", "read_cubin"]


def __getattr__(name):
    if name == "Runner":  # imports the timing stack; still no GPU work until constructed
        from .runner import Runner

        return Runner
    raise AttributeError(name)
