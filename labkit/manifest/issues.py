"""What a manifest check finds: one Issue per problem, and the error that stops a launch.

Its own module so that the checker, the kernel-family rules and the planner share it
without importing each other.
"""

from dataclasses import dataclass

from ..errors import LabkitError, at

SEVERITIES = ("error", "warning", "note")


class ManifestError(LabkitError):
    """The manifest cannot run; the message lists every error (on one line)."""


@dataclass(frozen=True)
class Issue:
    severity: str  # error | warning | note
    path: str  # the manifest's JSON path of the value concerned
    message: str

    def __str__(self) -> str:
        return f"{self.severity}: {at(self.path, self.message)}"
