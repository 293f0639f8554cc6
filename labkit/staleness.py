"""Whether a recorded run measured today's code: the kernels and the plans that choose their builds, read as code.

A recorded notebook says so when labkit's kernels or call plans changed since its run (``Session``'s banner). What
counts is code: a comment, a docstring, a line's indentation or what a ``raise`` says changed in a kernel or a plan
leaves the machine code and the plans as they were, so it leaves a record current (a comment on a not-kept A/B in
``decode/loads.py`` had called every notebook's record stale, and reworded refusals in ``decode/geometry.py`` did
again).
"""

import ast
import re
import subprocess

from . import _env

# what a recorded measurement depends on: the CUDA sources and the plans that choose the builds and launches
# (decode/geometry.py: default_splits and kernel_build, the split count and build defaults the plan starts from)
KERNEL_PATHS = (":(glob)labkit/**/*.cu", ":(glob)labkit/**/*.cuh", "labkit/workloads/decode/plan.py",
                "labkit/workloads/decode/geometry.py", "labkit/workloads/decode/loads.py",
                "labkit/workloads/sage2/schedule.py")

# a C/CUDA string or character literal (kept whole), a comment (one space, as C reads it) or a run of blanks (one)
_C_TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/|[ \t\f\v]+', re.S)


def _c_code(text: str) -> str:
    """C's own first steps: lines ending in a backslash spliced to the next, then each comment one space; then runs of
    blanks outside literals as one space and blank lines dropped (newlines stay: the preprocessor reads them)."""
    spliced = text.replace("\\\r\n", "").replace("\\\n", "")
    def one_space(m: re.Match) -> str:
        return m.group(0) if m.group(0)[0] in "\"'" else " "

    bare = _C_TOKEN.sub(one_space, _C_TOKEN.sub(one_space, spliced))  # again: a comment's space beside blanks
    return "\n".join(line.strip() for line in bare.splitlines() if line.strip())


def code_of(path: str, text: str) -> str:
    """``text`` as code: Python as its syntax tree without docstrings (unless it reads ``__doc__``) and with each
    ``raise`` only saying which exception it raises (its words are what a refused call prints, not what a call that
    runs does); C/CUDA as C reads it, without comments and with one space for each run of blanks outside literals.
    Anything else, or Python that does not parse, as it is."""
    if path.endswith(".py"):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return text
        if "__doc__" in text:
            return ast.dump(tree)
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                    and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
            if isinstance(node, ast.Raise):  # its class stays: a caller may catch one class and not another
                if isinstance(node.exc, ast.Call):
                    node.exc.args, node.exc.keywords = [], []
                node.cause = None
        return ast.dump(tree)
    if path.endswith((".cu", ".cuh", ".h", ".c", ".cpp")):
        return _c_code(text)
    return text


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(_env.repo_root()), *args], capture_output=True, text=True, timeout=20,
                          stdin=subprocess.DEVNULL)


def _code_at(rev: str, path: str) -> str | None:
    shown = _git("show", f"{rev}:{path}")
    return code_of(path, shown.stdout) if shown.returncode == 0 else None


def _same_code(sha: str, path: str) -> bool:
    """Whether ``path`` reads as the same code at ``sha`` and at HEAD; a file missing from either (added, deleted,
    renamed) or that git cannot show is a change."""
    before = _code_at(sha, path)
    return before is not None and before == _code_at("HEAD", path)


def kernel_commits_since(sha: str) -> int | None:
    """Commits after ``sha`` up to HEAD that changed ``KERNEL_PATHS``, or 0 where those files read at HEAD as the same
    code as at ``sha`` (a change and its revert, a comment, a docstring); None without git or where ``sha`` is not a
    commit of this checkout. A notebook that renders a record from before such a change says so (notebook 02's sm90
    view had shown a mainloop two changes old, 10 % slower, as if current)."""
    try:
        out = _git("rev-list", "--count", f"{sha}..HEAD", "--", *KERNEL_PATHS)
        if out.returncode != 0 or not out.stdout.strip().isdigit():
            return None
        commits = int(out.stdout)
        if not commits:
            return 0
        changed = _git("diff", "--name-only", "-z", sha, "HEAD", "--", *KERNEL_PATHS)  # -z: names as they are
        if changed.returncode != 0:
            return None
        paths = [p for p in changed.stdout.split("\0") if p]
        return 0 if all(_same_code(sha, p) for p in paths) else commits
    except (OSError, subprocess.SubprocessError):
        return None


def has_commit(ancestor: str, sha: str) -> bool | None:
    """Whether commit ``sha`` has ``ancestor`` in its history (``ancestor`` itself counts), e.g. whether a recorded run
    measured with a fix to the timing; None without git or where either is not a commit of this checkout."""
    try:
        out = _git("merge-base", "--is-ancestor", ancestor, sha)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(out.returncode)
