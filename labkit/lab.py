"""Start JupyterLab on the notebooks: localhost only, token kept, one entry per notebook.

The percent sources ``notebooks/NN_topic.py`` are paired with ``.ipynb`` files by jupytext
(``notebooks/jupytext.toml``); the file browser hides the ``.py`` side, so a user opens each
notebook once and saving writes both. Kernels talk over IPC, not TCP (ipykernel >= 7.3 warns
about unencrypted TCP on every start).
"""

import os
import secrets
import shutil
import sys
from pathlib import Path

from .errors import LabkitError

HIDDEN = ["__pycache__", "*.pyc", "*.pyo", ".*", "[0-9][0-9]_*.py", "kernel-*", "jupytext.toml"]


def check_port_free(port: int, host: str = "127.0.0.1") -> None:
    """Refuse a port something already listens on, in one line (Jupyter would log some 20 lines, then exit 1)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # as Jupyter binds: a port whose last connection waits out TIME_WAIT is free (a lab restarted within a
        # minute had been refused); one a server listens on still is not
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise LabkitError(f"port {port} on {host} is taken ({exc.strerror}): give another with --port") from None


def new_token() -> str:
    return secrets.token_hex(24)


def lab_url(port: int, token: str) -> str:
    """Where to open the lab: Jupyter masks a token it did not make itself, so labkit prints this one (over ssh,
    forward the port and open it locally)."""
    return f"http://127.0.0.1:{port}/lab?token={token}"


def pair_notebooks(notebook_dir: Path) -> list[Path]:
    """Write the ``.ipynb`` of each percent source that has none (``make nb`` does all of them): the file browser
    shows only the ``.ipynb`` side, and a fresh clone has none. Returns the files written."""
    try:
        import jupytext
    except ImportError:
        raise LabkitError("labkit lab needs jupytext to pair the notebooks: pip install -e '.[nb,lab]'") from None
    written = []
    for src in sorted(notebook_dir.glob("[0-9][0-9]_*.py")):
        target = src.with_suffix(".ipynb")
        if not target.exists():
            jupytext.write(jupytext.read(src), target)
            written.append(target)
    return written


def lab_environ(token: str | None = None) -> dict[str, str]:
    """The lab's environment: this one with ``JUPYTER_TOKEN`` (a random token when none is given; never empty). In
    the environment, not on the command line: /proc/PID/cmdline is readable by every user of the host, its environ
    by its owner only. A token the user's own Jupyter config sets (``c.IdentityProvider.token``) takes precedence
    over it, as over any environment default: that config is the user's choice for every server they start."""
    if token is not None and not token:
        raise LabkitError("an empty JupyterLab token would switch authentication off; pass none for a random one")
    return {**os.environ, "JUPYTER_TOKEN": token or new_token()}


def lab_command(notebook_dir: Path, *, port: int = 8888, open_browser: bool = True) -> list[str]:
    """The ``jupyter lab`` argv: bound to 127.0.0.1, its token from ``lab_environ`` (none on the command line),
    ``--allow-root`` only for root."""
    if not 0 < port < 65536:
        raise LabkitError(f"port {port}: expected 1..65535")
    jupyter = Path(sys.executable).with_name("jupyter")
    argv = [str(jupyter) if jupyter.exists() else (shutil.which("jupyter") or "jupyter"), "lab",
            f"--ServerApp.root_dir={notebook_dir}", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0", f"--ContentsManager.hide_globs={HIDDEN!r}", "--KernelManager.transport=ipc"]
    if not open_browser:
        argv.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")
    return argv
