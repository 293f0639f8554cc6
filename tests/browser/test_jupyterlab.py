"""JupyterLab in a real browser: open notebook 02, run every cell from the Run menu, look at the result.

Run by ``make test-browser`` (which installs chromium, chromedriver and selenium first); ``make test``
leaves this folder out. The notebook runs in recorded mode on a machine without a GPU.
"""

import datetime as _dt
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request

import pytest

from labkit.lab import lab_command

from ..conftest import ROOT

NOTEBOOK = "02_sage2_phases"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(what: str, condition, timeout_s: float, poll_s: float = 0.5):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}")


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on the repo's notebooks, as `make lab` starts it (plus: no browser of its
    own, every cell rendered so the test can read it)."""
    subprocess.run([str(ROOT / ".venv/bin/jupytext"), "--to", "ipynb", "--update", "-q",
                    str(ROOT / "notebooks" / f"{NOTEBOOK}.py")], check=True, cwd=ROOT)
    settings = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    settings.mkdir(parents=True)
    (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    news = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    news.mkdir(parents=True)
    (news / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    port, token = _free_port(), "labkit-browser-test"
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    runtime = tempfile.mkdtemp(prefix="jr")  # kernels use IPC sockets: their path must stay under 108 bytes
    # a workspace of its own: the user's (~/.jupyter/lab/workspaces) reopens the notebooks they had open, whose
    # unrun cells the checks below then waited for (found with 00 left open beside 02: the test timed out)
    env.update(JUPYTERLAB_SETTINGS_DIR=str(tmp_path / "settings"), JUPYTER_RUNTIME_DIR=runtime,
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "workspaces"))
    log = tmp_path / "lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(lab_command(ROOT / "notebooks", port=port, open_browser=False),
                                  cwd=ROOT / "notebooks", env={**env, "JUPYTER_TOKEN": token}, stdout=out,
                                  stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"

    def up():
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2) as r:
                return r.status == 200
        except OSError:
            assert server.poll() is None, f"jupyter lab exited: {log.read_text()[-2000:]}"
            return False

    try:
        _wait("jupyter lab to answer", up, 90)
        yield base, token, log
    finally:
        server.terminate()
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(runtime, ignore_errors=True)


@pytest.fixture
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1800"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    yield driver
    driver.quit()


def test_notebook_runs_in_jupyterlab(lab, browser):
    from selenium.webdriver.common.by import By

    base, token, log = lab
    shots = ROOT / "runs" / "browser"
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / f"{_dt.datetime.now(_dt.timezone.utc):%Y%m%dT%H%M%SZ}-jupyterlab-{NOTEBOOK}.png"
    try:
        # One entry per notebook in the file browser: the .py sources are hidden.
        browser.get(f"{base}/lab?token={token}")
        listing = lambda: [e.get_attribute("textContent")  # noqa: E731
                           for e in browser.find_elements(By.CSS_SELECTOR, ".jp-DirListing-itemText")]
        names = _wait("the file browser listing", listing, 90)
        assert f"{NOTEBOOK}.ipynb" in names and not [n for n in names if n.endswith(".py")], names

        browser.get(f"{base}/lab/tree/{NOTEBOOK}.ipynb?token={token}")
        _wait("the notebook's kernel to be idle", lambda: browser.find_elements(
            By.CSS_SELECTOR, ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']"), 120)
        # the kernel can report idle before the notebook has rendered all its cells (seen once in CI)
        def five_code_cells():
            cells = browser.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")
            return cells if len(cells) >= 5 else []

        _wait("the notebook's code cells (5 or more)", five_code_cells, 60)

        # Run > Run All Cells, clicked like a user would.
        menu = _wait("the Run menu", lambda: [m for m in browser.find_elements(By.CSS_SELECTOR, ".lm-MenuBar-item")
                                             if m.text.strip() == "Run"], 30)[0]
        menu.click()
        _wait("Run All Cells", lambda: [e for e in browser.find_elements(By.CSS_SELECTOR, ".lm-Menu-itemLabel")
                                        if e.text.strip() == "Run All Cells"], 30)[0].click()

        def finished():
            prompts = [c.find_element(By.CSS_SELECTOR, ".jp-InputPrompt").text for c in
                       browser.find_elements(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-CodeCell")]
            idle = browser.find_elements(By.CSS_SELECTOR,
                                         ".jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status='idle']")
            return idle and all(p.strip("[]: ").isdigit() for p in prompts)

        _wait("every cell to run and the kernel to go idle", finished, 240, poll_s=1)

        errors = browser.find_elements(By.CSS_SELECTOR, "[data-mime-type='application/vnd.jupyter.error']")
        assert not errors, "error output in the notebook: " + errors[0].text[:500]
        images = browser.find_elements(By.CSS_SELECTOR, ".jp-RenderedImage img")
        assert len(images) >= 2, f"{len(images)} rendered images"
        assert all(browser.execute_script("return arguments[0].naturalWidth", img) > 100 for img in images)
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", images[-1])
        time.sleep(0.5)
        browser.save_screenshot(str(shot))
        # the banner in lines of at most 100 characters (labkit.wrapped): its words with single spaces between them
        first = " ".join(browser.find_element(By.CSS_SELECTOR, ".jp-NotebookPanel .jp-OutputArea-output").text.split())
        assert "RECORDED mode" in first or "LIVE on" in first, first
        server_log = log.read_text()
        assert "running over TCP" not in server_log, "ipykernel's TCP warning reached the server log"
    except BaseException:
        browser.save_screenshot(str(shot.with_name(shot.stem + "-FAILED.png")))
        raise
    print(f"screenshot: {shot}")
