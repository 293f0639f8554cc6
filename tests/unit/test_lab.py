"""`make lab`: localhost only, token authentication kept, root and non-root alike, one entry per notebook."""

import fnmatch
import os

import pytest

from labkit.errors import LabkitError
from labkit.lab import HIDDEN, lab_command, lab_environ

from ..conftest import ROOT


def test_lab_listens_on_localhost_with_a_token_kept_off_its_command_line(monkeypatch):
    """A review found the token in the argv, which /proc/PID/cmdline shows every user of the host: it is in the
    lab's environment, which only its owner can read."""
    argv = lab_command(ROOT / "notebooks", port=9999)
    assert argv[1] == "lab" and "--ServerApp.ip=127.0.0.1" in argv and "--ServerApp.port=9999" in argv
    assert not [a for a in argv if "token" in a.lower()]
    token = lab_environ()["JUPYTER_TOKEN"]
    assert len(token) >= 32 and lab_environ()["JUPYTER_TOKEN"] != token  # random per start
    assert lab_environ("mine")["JUPYTER_TOKEN"] == "mine"
    assert not [a for a in argv if "0.0.0.0" in a]
    assert "--KernelManager.transport=ipc" in argv
    with pytest.raises(LabkitError, match="empty JupyterLab token"):
        lab_environ("")


@pytest.mark.parametrize("uid, allow", [(0, True), (1000, False)])
def test_allow_root_only_for_root(uid, allow, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: uid)
    assert ("--allow-root" in lab_command(ROOT / "notebooks")) is allow


def test_the_file_browser_hides_the_percent_sources_not_the_notebooks():
    hidden = lambda name: any(fnmatch.fnmatch(name, g) for g in HIDDEN)  # noqa: E731
    for src in (ROOT / "notebooks").glob("[0-9][0-9]_*.py"):
        assert hidden(src.name) and not hidden(src.with_suffix(".ipynb").name)
    assert (ROOT / "notebooks" / "jupytext.toml").read_text().count('formats = "ipynb,py:percent"') == 1


def test_a_taken_port_is_one_line_before_jupyter_starts(capsys):
    """Found by a CLI review: Jupyter logged some 20 lines on a taken port, then exited 1."""
    import socket

    from labkit import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert cli.main(["lab", "--no-browser", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err == (f"labkit: error: labkit lab: port {port} on 127.0.0.1 is taken (Address already in use): give "
                   f"another with "
                   "--port\n")


def test_lab_prints_the_url_with_its_token_and_pairs_missing_notebooks(tmp_path, monkeypatch, capsys):
    """Found by a new-user review: Jupyter masks a token it did not make, so over ssh no URL could log in; and on a
    fresh clone the file browser was empty (no .ipynb until `make nb`)."""
    import shutil
    import socket

    from labkit import _env, cli

    pytest.importorskip("jupytext")
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    shutil.copy(ROOT / "notebooks" / "00_device_and_timing.py", nbdir)
    shutil.copy(ROOT / "notebooks" / "01_decode_manifest.py", nbdir)
    (nbdir / "01_decode_manifest.ipynb").write_text("{}")  # an existing pairing is left alone
    monkeypatch.setattr(_env, "repo_root", lambda: tmp_path)
    ran = []
    monkeypatch.setattr(os, "execve", lambda exe, argv, env: ran.append((argv, env)))
    with socket.socket() as probe:  # a port free now: a fixed one (18931) was taken here by another JupyterLab
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert cli.main(["lab", "--no-browser", "--port", str(port)]) == 0
    out = capsys.readouterr().out
    token = ran[0][1]["JUPYTER_TOKEN"]
    assert f"labkit lab: open http://127.0.0.1:{port}/lab?token={token}\n" in out
    assert "paired 00_device_and_timing.ipynb" in out and "01_decode" not in out
    import nbformat

    nb = nbformat.read(nbdir / "00_device_and_timing.ipynb", as_version=4)
    assert any("parameters" in c.get("metadata", {}).get("tags", []) for c in nb.cells)
    assert (nbdir / "01_decode_manifest.ipynb").read_text() == "{}"


def test_saving_a_notebook_in_jupyterlab_leaves_its_source_as_it_was(tmp_path):
    """Found by running the notebooks in JupyterLab: a save (autosave, after Run All) rewrote each percent source's
    header with jupytext's version and the kernel's display name, so git showed every notebook opened as modified."""
    pytest.importorskip("jupytext")
    import shutil

    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    from jupytext import TextFileContentsManager

    try:  # what JupyterLab writes into the notebook: the running kernel's spec
        spec = KernelSpecManager().get_kernel_spec("python3")
        kernelspec = {"display_name": spec.display_name, "language": spec.language, "name": "python3"}
    except NoSuchKernel:  # none installed here: ipykernel's own name for it
        kernelspec = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    shutil.copy(ROOT / "notebooks" / "jupytext.toml", tmp_path)
    sources = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py"))
    assert len(sources) == 6
    contents = TextFileContentsManager(root_dir=str(tmp_path))
    for src in sources:
        shutil.copy(src, tmp_path)
        name = src.with_suffix(".ipynb").name
        nb = contents.get(name)["content"] if (tmp_path / name).exists() else contents.get(src.name)["content"]
        nb["metadata"]["kernelspec"] = kernelspec
        nb["metadata"]["language_info"] = {"name": "python", "mimetype": "text/x-python", "version": "3.12.3"}
        contents.save({"type": "notebook", "format": "json", "content": nb}, name)
        assert (tmp_path / name).exists(), name  # paired: the save wrote both sides
        assert (tmp_path / src.name).read_text() == src.read_text(), src.name


def test_a_port_whose_last_connection_waits_out_time_wait_is_free():
    """Found by a review: the check bound without SO_REUSEADDR, so a lab restarted within a minute of one a browser
    had used was refused, though Jupyter (which sets it) would have started."""
    import socket

    from labkit.lab import check_port_free

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the last lab's (tornado's) listener
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    accepted, _ = server.accept()
    accepted.close()  # the server's side closes first: its port waits in TIME_WAIT
    client.recv(1)
    client.close()
    server.close()
    check_port_free(port)  # no error: nothing listens there
