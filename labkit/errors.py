"""The one small exception hierarchy of labkit.

Every message says what was wrong and, where there is one, the fix. The CLI prints
``str(error)`` on one line and exits 2, or 1 for a MachineError (the input passed; this machine lacks a GPU, a tool or
a package), with no traceback.
"""


class LabkitError(Exception):
    """Base of every error labkit raises on purpose."""

    exit_status = 2  # the CLI's: bad input; 1 where the input passed and the machine or the work failed

    def _render_traceback_(self) -> list[str]:
        # IPython shows this instead of a traceback: a notebook cell gets the same one line as the CLI
        return [f"{type(self).__name__}: {self}"]


class FormatError(LabkitError):
    """A file (report, manifest, run record) does not match its format.

    The message starts with the JSON path of the offending value; where that is the whole document and the file is
    named, with the file alone ("r.json: not valid JSON", not "r.json: $: not valid JSON", which a directory or a
    missing file had read as too).
    """

    def __init__(self, path: str, message: str, *, source: str | None = None):
        self.json_path = path
        self.source = source
        self.message = message  # without the file or the path
        where = f"{source}: " if source else ""
        whole = not path and source and not message.startswith("= ")
        super().__init__(f"{where}{message if whole else at(path or '$', message)}")


def at(path: str, message: str) -> str:
    """``rows[0].p50_us = 'fast': expected a number``: a message that starts with the value follows its path as an
    assignment (not ``rows[0].p50_us: = 'fast'``); any other after a colon."""
    return f"{path} {message}" if message.startswith("= ") else f"{path}: {message}"


class MachineError(LabkitError):
    """The input passed its checks, but this machine lacks what the work needs: the CLI exits 1, not 2."""

    exit_status = 1


class NoGPU(MachineError):
    """No usable CUDA device (no driver, no device, or CUDA failed to start)."""


class MissingDependency(MachineError):
    """An optional package is not installed; the message names the pip extra."""


class ParameterError(LabkitError):
    """A notebook was given a parameter its ``parameters`` cell does not define."""


class TimingError(LabkitError):
    """A timing request cannot give a meaningful number (e.g. it launched no GPU work)."""


class CompileError(LabkitError):
    """NVRTC rejected a kernel; the message carries the compiler log."""


class NcuError(LabkitError):
    """Nsight Compute could not run or its report cannot be read; the message names the fix."""


class NcuUnavailable(NcuError, MachineError):
    """This machine's Nsight Compute cannot profile: none found, older than labkit reads, or the GPU's counters kept
    from this user (a LABKIT_NCU that names no file is an NcuError: the setting is the fault)."""


class LaunchError(LabkitError):
    """A launch was refused before it reached the GPU, or the driver rejected it."""


class ArgumentError(LabkitError, ValueError):
    """A value given to a command or a library call is outside what labkit supports.

    Also a ValueError, so library callers that caught ValueError before keep working.
    """


def end_now_if_asked(error: LabkitError) -> None:
    """End the process at once, with the error's exit status, where the error says so (``ends_process``: a CUDA
    context really lost, whose teardown at exit printed CuPy's tracebacks under the error line)."""
    if getattr(error, "ends_process", False):
        import os
        import sys

        sys.stdout.flush(), sys.stderr.flush()
        os._exit(error.exit_status)


def exit_in_one_line() -> None:
    """In a script (``labkit nb script``'s first cell), end on a LabkitError as the CLI does: ``labkit: error: ...``
    on one line and exit status 2 (1 for a MachineError), not a traceback; any other exception keeps Python's
    traceback."""
    import sys

    from ._text import one_line

    previous = sys.excepthook

    def hook(kind, error, tb):
        if isinstance(error, LabkitError):
            print(f"labkit: error: {one_line(str(error))}", file=sys.stderr)
            end_now_if_asked(error)
            sys.exit(error.exit_status)
        previous(kind, error, tb)

    sys.excepthook = hook
