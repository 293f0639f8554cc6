"""requirements.txt (pip) and environment.yml (conda) must describe the same pinned set."""

import re
import subprocess

import yaml

from ..conftest import ROOT

# pip distribution -> conda-forge package, where the names differ
PIP_TO_CONDA = {"cupy-cuda13x": "cupy", "nvidia-cuda-nvrtc": "cuda-nvrtc"}
PIP_ONLY = {"ncu-report"}  # not on conda-forge: environment.yml installs it through its pip section


def _pip_pins():
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, version = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([\w.]+)", line).groups()
            if name.lower() not in PIP_ONLY:
                pins[PIP_TO_CONDA.get(name.lower(), name.lower())] = version
    return pins


def _conda_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pins = {}
    for dep in env["dependencies"]:
        if isinstance(dep, str) and "=" in dep:
            name, version = dep.split("=", 1)
            if name not in ("python", "cuda-version"):
                pins[name.lower()] = version
    return pins


def test_requirements_and_environment_agree():
    assert _pip_pins() == _conda_pins()
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    req = (ROOT / "requirements.txt").read_text()
    for name in PIP_ONLY:
        pin = re.search(rf"^{name}==[\w.]+", req, re.M).group(0)
        assert any(line.split("#")[0].strip() == pin for line in pip_section), (name, pip_section)


def test_no_cupy_ctk_extra_and_cuda13():
    text = "\n".join(line.split("#")[0] for line in (ROOT / "requirements.txt").read_text().splitlines())
    assert "cupy-cuda13x==" in text and "[ctk]" not in text and "cupy-cuda12x" not in text


def test_notebook_sources_carry_no_outputs_and_one_parameters_cell():
    import jupytext

    for src in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.py")):
        nb = jupytext.read(src)
        tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(tagged) == 1, src.name
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), src.name
        assert "def " not in "".join(c.source for c in nb.cells if c.cell_type == "code"), src.name


def test_package_data_takes_every_file_the_kernels_and_styles_need():
    """Every non-Python file under labkit/ (kernel sources, the headers they #include, the plot style) matches a
    package-data glob, so a wheel (not only an editable install) compiles its kernels: the .cuh headers had been
    left out of it."""
    import subprocess
    import tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["labkit"]
    tracked = subprocess.run(["git", "ls-files", "labkit"], cwd=ROOT, capture_output=True, text=True, check=True)
    data = [p.removeprefix("labkit/") for p in tracked.stdout.split() if not p.endswith(".py")]
    assert any(p.endswith(".cuh") for p in data) and any(p.endswith(".mplstyle") for p in data)
    shipped = {str(f.relative_to(ROOT / "labkit")) for g in globs for f in (ROOT / "labkit").glob(g)}
    missing = [p for p in data if p not in shipped]
    assert not missing, missing


def test_device_wheels_refuses_bad_arguments_before_downloading(tmp_path):
    """tools/device_wheels.sh: an unknown set or a missing wheel list ends in one line and status 2, nothing fetched."""
    script = str(ROOT / "tools" / "device_wheels.sh")
    listed = tmp_path / "list.txt"
    listed.write_text("# nothing pinned\n")
    env = {"PATH": "/usr/bin:/bin", "LABKIT_NOTEBOOK_WHEELS": str(listed)}
    bad = subprocess.run(["bash", script, str(tmp_path / "w"), "flash"], env=env, capture_output=True, text=True)
    assert (bad.returncode, bad.stderr) == (2, "device_wheels: 'flash' is neither ncu, fa3 nor NAME==VERSION\n")
    env["LABKIT_NOTEBOOK_WHEELS"] = str(tmp_path / "absent.txt")
    gone = subprocess.run(["bash", script, str(tmp_path / "w")], env=env, capture_output=True, text=True)
    assert gone.returncode == 2 and gone.stderr.startswith(f"device_wheels: no notebook wheel list at {tmp_path}")
    assert not (tmp_path / "w").exists()


def test_device_wheels_fetches_the_listed_set_plus_labkits_own_jupytext_and_ncu_report_pins(tmp_path):
    """What the script asks pip for, with a stand-in python3 that records each spec and leaves a wheel: the list's
    wheels, then jupytext at requirements.txt's pin (`labkit nb run` reads the notebooks' jupytext sources), and with
    `ncu` the .ncu-rep reader at the pin that `pyproject.toml`'s ncu extra shares (the device's ncu 2025.3.1)."""
    bin_dir, asked = tmp_path / "bin", tmp_path / "asked.txt"
    bin_dir.mkdir()
    fake = bin_dir / "python3"
    fake.write_text(f"#!/bin/sh\nfor a; do spec=$a; done\necho \"$spec\" >> {asked}\n"
                    "while [ $# -gt 0 ]; do [ \"$1\" = -d ] && dir=$2; shift; done\n"
                    "name=$(echo \"${spec%%==*}\" | tr - _)\ntouch \"$dir/$name-1-py3-none-any.whl\"\n")
    fake.chmod(0o755)
    listed = tmp_path / "list.txt"
    listed.write_text("# the notebook set\npapermill==2.7.0\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LABKIT_NOTEBOOK_WHEELS": str(listed)}
    run = subprocess.run(["bash", str(ROOT / "tools" / "device_wheels.sh"), str(tmp_path / "w"), "ncu"], env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    pins = {line.split("==")[0]: line for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line}
    extra = re.search(r'ncu = \["(ncu-report==[\d.]+)"\]', (ROOT / "pyproject.toml").read_text()).group(1)
    assert extra == pins["ncu-report"]
    assert asked.read_text().splitlines() == ["papermill==2.7.0", pins["jupytext"], "mdit-py-plugins==0.7.0", extra]
