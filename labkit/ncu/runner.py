"""Run a command, a labkit notebook or a Python callable under ncu in a subprocess, with progress.

Every failure is one ``NcuError`` line: ncu missing, too old, not allowed to read the counters
(``ERR_NVGPUCTRPERM``), no kernel profiled, or the profiled program failing; the first three, this machine's, are
``NcuUnavailable`` (the CLI's exit 1). ``available()`` answers
"can ncu profile here?" without starting a GPU program (notebooks fall back to a recorded run).
"""

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .._text import TEXT_WIDTH, wrapped
from ..errors import NcuError, NcuUnavailable
from ..output_kinds import other_kind
from .command import MACHINE_FAULTS, NcuOptions, argv, diagnose, find_ncu

MIN_VERSION = (2025, 1)  # labkit reads reports with ncu-report 2025.3.1; older ncu versions were never tried
_VERSION = re.compile(r"Version (\d+)\.(\d+)(?:\.(\d+))?")
_SHOWN = ("==PROF==", "==ERROR==", "==WARNING==")


@dataclass(frozen=True)
class NcuRun:
    """One finished ncu run: the report, its log, the command line, the wall time and the report size."""

    report: Path
    log: Path
    command: tuple[str, ...]
    elapsed_s: float
    report_bytes: int


def ncu_version(ncu: str) -> tuple[int, ...]:
    """``ncu --version`` as (year, minor, patch).

    Raises:
        NcuError: it does not run or prints no version (one line naming the executable).
    """
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except PermissionError:
        raise NcuError(f"{ncu} is not executable (permission denied): expected the Nsight Compute ncu "
                       "executable (set LABKIT_NCU to one)") from None
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NcuError(f"{ncu} --version failed to run ({type(exc).__name__}: {exc})") from None
    m = _VERSION.search(out.stdout + out.stderr)
    if out.returncode != 0 or m is None:
        raise NcuError(f"{ncu} --version printed no Nsight Compute version (exit {out.returncode})")
    return tuple(int(g or 0) for g in m.groups())


def check_ncu(ncu: str | None = None) -> tuple[str, tuple[int, ...]]:
    """The ncu executable and its version, refused when older than ``MIN_VERSION``."""
    ncu = ncu or find_ncu()
    version = ncu_version(ncu)
    if version[:2] < MIN_VERSION:
        raise NcuUnavailable(f"{ncu} is Nsight Compute {'.'.join(map(str, version))}; labkit needs "
                             f"{'.'.join(map(str, MIN_VERSION))} or newer (set LABKIT_NCU to a newer ncu)")
    return ncu, version


def counters_restricted(params: Path = Path("/proc/driver/nvidia/params")) -> bool:
    """The driver lets only admins read the counters (``RmProfilingAdminOnly: 1``) and this is not root."""
    try:
        text = params.read_text()
    except OSError:
        return False
    return bool(re.search(r"RmProfilingAdminOnly:\s*1", text)) and os.geteuid() != 0


def require_ncu() -> str:
    """'ncu <version> at <path>' when ncu can profile here.

    Raises:
        NcuUnavailable: no ncu, one too old, or the counters kept for admins; NcuError: LABKIT_NCU names no file, or
            its ncu does not run.
    """
    ncu, version = check_ncu()
    if counters_restricted():
        raise NcuUnavailable("the driver restricts GPU performance counters to admin users (RmProfilingAdminOnly: 1, "
                             "ERR_NVGPUCTRPERM): run as root or set NVreg_RestrictProfilingToAdminUsers=0")
    return f"ncu {'.'.join(map(str, version))} at {ncu}"


def available() -> tuple[bool, str]:
    """(True, 'ncu <version> at <path>') when ncu can profile here, else (False, the reason on one line)."""
    try:
        return True, require_ncu()
    except NcuError as exc:
        return False, str(exc)


def _forward(log: Path, seen: int, progress, started: float) -> int:
    """Print the log's new ==PROF==/==ERROR==/==WARNING== lines; returns how many bytes were read."""
    try:
        with log.open("rb") as f:
            f.seek(seen)
            chunk = f.read()
    except OSError:
        return seen
    end = chunk.rfind(b"\n") + 1  # whole lines only; the rest is read next time
    for line in chunk[:end].decode(errors="replace").splitlines():
        if progress is not None and line.startswith(_SHOWN):
            print(wrapped(f"  ncu [{time.monotonic() - started:6.1f} s] {line.strip()}"), file=progress, flush=True)
    return seen + end


def shell_lines(cmd: list[str], prefix: str = "", width: int = TEXT_WIDTH) -> str:
    """``prefix`` and ``cmd`` quoted for a shell, in lines of at most ``width`` characters joined by `` \\``
    continuations: the command as a notebook's pane shows it whole and a user can paste it (an argument longer than a
    line keeps a line of its own, or breaks after its commas; an option keeps its value beside it)."""
    words = list(map(shlex.quote, cmd))
    units = []  # an option and its value stay on one line (--section LaunchStats)
    for word in words:
        if (units and units[-1].startswith("-") and " " not in units[-1] and not word.startswith("-")
                and len(units[-1]) + len(word) + 7 <= width):  # the pair fits a continuation line
            units[-1] += " " + word
        else:
            units.append(word)
    lines, line = [], prefix
    for word in units:
        if line.strip() and len(line) + 1 + len(word) + 2 > width:
            lines.append(line)
            line = "   "
        line = f"{line} {word}" if line else word
    return " \\\n".join(_comma_broken(line, width) for line in lines + [line])


def _comma_broken(line: str, width: int) -> str:
    """``line`` as it is, or where it is one over-long list such as ncu's ``--metrics a,b,c``, broken after its commas
    by backslash-newlines with nothing before the next part: the shell removes each, so the word pastes back whole."""
    if len(line) + 2 <= width or "," not in line or any(c in line for c in "'\"\\"):
        return line
    parts, part = [], ""
    for piece in re.findall(r"[^,]*,|[^,]+$", line):
        if part and len(part) + len(piece) + 2 > width:  # room for " \\" after the line's last piece
            parts.append(part)
            part = ""
        part += piece
    return "\\\n".join(parts + [part])


def profile(target: list[str], opts: NcuOptions, *, ncu: str | None = None, progress=None,
            timeout_s: float | None = None, env: dict | None = None) -> NcuRun:
    """Run ``target`` under ncu (child processes followed) and return the finished run.

    Args:
        target: the command and its arguments.
        progress: a text stream for the log's ``==PROF==`` lines as they come (e.g. ``sys.stderr``).
        timeout_s: kill ncu and the target after this long (None: no limit).

    Raises:
        NcuError: ncu missing or too old, a command that is no program here, the counters not readable, no
            kernel profiled, the target failing, the time limit, or no report written; one line each.
    """
    if not target:
        raise NcuError("nothing to profile: give the command to run under ncu")
    if opts.output.suffix not in ("", ".ncu-rep"):  # its .log, replaced below, would be some other file's name
        raise NcuError(f"report path {str(opts.output)!r}: expected NAME or NAME.ncu-rep (ncu writes NAME.ncu-rep and "
                       "NAME.log)")
    log, report = opts.output.with_suffix(".log"), opts.output.with_suffix(".ncu-rep")
    if log.is_file() and (other := other_kind(log, "ncu log")):  # a user's train.log had been deleted
        raise NcuError(f"{log}: exists and is {other}; ncu writes its log there (delete it, or name another report)")
    _check_target(target[0], env)  # the command first: bad input is said as such on a machine without ncu too
    ncu, _ = check_ncu(ncu)
    cmd = argv(opts, list(target), ncu=ncu)
    opts.output.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    if progress is not None:
        print(shell_lines(cmd, prefix="running:"), file=progress, flush=True)
    started, seen = time.monotonic(), 0
    # its own process group: stopping it stops the program ncu started too (a notebook kernel keeps the GPU)
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, start_new_session=True)
    try:
        while proc.poll() is None:
            if timeout_s is not None and time.monotonic() - started > timeout_s:
                _stop(proc)
                raise NcuError(f"ncu run stopped after {timeout_s:.0f} s (its time limit); see {log}")
            seen = _forward(log, seen, progress, started)
            time.sleep(0.5)
    except KeyboardInterrupt:
        _stop(proc)
        raise
    _forward(log, seen, progress, started)
    text = log.read_text(errors="replace") if log.is_file() else ""
    if why := diagnose(text):
        raise (NcuUnavailable if any(f in text for f in MACHINE_FAULTS) else NcuError)(why)
    if proc.returncode != 0:
        raise NcuError(f"ncu or the profiled program exited with {proc.returncode}; see {log}")
    if not report.is_file():
        raise NcuError(f"ncu wrote no report at {report}; see {log}")
    return NcuRun(report, log, tuple(cmd), time.monotonic() - started, report.stat().st_size)


def _check_target(program: str, env: dict | None) -> None:
    """Refuse a program that cannot start, before ncu does: ncu had run, profiled nothing and ended with "ncu wrote no
    report", which did not say the command was the fault."""
    import shutil

    path = {**os.environ, **(env or {})}.get("PATH", os.defpath)  # the PATH the program will be looked up in
    if shutil.which(program, path=path) is None:
        where = "no executable file there" if os.sep in program else "not found on PATH"
        raise NcuError(f"command to profile {program!r}: {where}; give an existing program's path or a command on "
                       "PATH")


def notebook_script_path(report: Path) -> Path:
    """Where ``ncu run --notebook`` writes the notebook's script: beside the report, ``run/nb02.ncu-rep`` ->
    ``run/nb02.py``."""
    report = Path(report)
    return report.with_name(report.with_suffix("").name + ".py")


def notebook_target(name: str, params: dict[str, str] | None = None, *, script: Path) -> list[str]:
    """Notebook ``name`` written to ``script`` as a plain Python script (``labkit nb script``), its parameters checked
    as ``nb run`` checks them, and the command that runs it in this Python. ncu then holds one process from its first
    launch; papermill's Jupyter kernel, which it had been given, is a child it reaches only by following processes
    (ncu-automation.md: profile a plain script, not the notebook kernel).

    Raises:
        ParameterError: an unknown parameter, a value its type refuses or one past another's bound (a tail past the
            shape's N), before anything is written or ncu starts.
        ArgumentError: ``script`` is no place for it (another file there).
        NcuError: ``source`` recorded: such a run launches no kernel for ncu to profile.
    """
    from .. import notebooks
    from ..notebook_script import write_script

    stem = notebooks.resolve(name).stem
    parsed = notebooks.parse_parameters(stem, {k: str(v) for k, v in (params or {}).items()})
    if parsed.get("source") == "recorded":  # a review: ncu had run a notebook that only reads a recorded run
        raise NcuError("labkit ncu run: --notebook with -p source recorded launches no kernel, so ncu would "
                       "profile nothing; leave source auto or give live")
    write_script(stem, parsed, script, progress=sys.stderr)
    return [sys.executable, str(script)]


def profile_notebook(name: str, params: dict[str, str] | None, opts: NcuOptions, **kw) -> NcuRun:
    """A labkit notebook run as a plain script under ncu (``notebook_target``), the script beside the report."""
    return profile(notebook_target(name, params, script=notebook_script_path(opts.output)), opts, **kw)


def call_target(func: str, kwargs: dict | None = None) -> list[str]:
    """A Python callable ``module:function`` with JSON keyword arguments, run in a fresh interpreter."""
    module, _, name = func.partition(":")
    if not module or not name.isidentifier():
        raise NcuError(f"callable {func!r}: expected module:function, e.g. labkit.probes:launch_overhead")
    return [sys.executable, "-m", "labkit.ncu.runner", func, json.dumps(kwargs or {})]


def profile_call(func: str, kwargs: dict | None, opts: NcuOptions, **kw) -> NcuRun:
    return profile(call_target(func, kwargs), opts, **kw)


def _call_main(args: list[str]) -> int:
    import importlib

    module, _, name = args[0].partition(":")
    getattr(importlib.import_module(module), name)(**json.loads(args[1]))
    return 0


if __name__ == "__main__":
    sys.exit(_call_main(sys.argv[1:]))


def _stop(proc: subprocess.Popen) -> None:
    """Kill ncu and everything it started (one process group), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
