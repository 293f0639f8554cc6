"""The notebook runner's progress: one line as each code cell starts, named by the markdown above it (a live run
takes minutes; the numbers match a failed cell's)."""

import time

from . import _deps
from ._text import cut_at_word

TITLE_CHARS = 60  # of a markdown cell's first line, where it has no heading to name the code cells below it


def cell_titles(cells: list) -> tuple[list[int], dict[int, str]]:
    """The code cells' indices and a title for each: the parameter cells by their tag, the others by the markdown cell
    above them, its heading or else its first line cut at a word; a second code cell under the same markdown reads
    "(continued)" (a review: notebook 00's progress named two cells "The Sage2 seed report", the second one under a
    markdown cell of no heading)."""
    # a code cell of no source is never run (nbclient skips it, no execution count): not counted, so a number here is
    # the cell a failure names
    code = [i for i, c in enumerate(cells) if c.cell_type == "code" and c.source.strip()]
    titles, heading, under = {}, "", 0
    for i, c in enumerate(cells):
        if c.cell_type == "markdown" and c.source.strip():
            first = c.source.strip().splitlines()[0]
            heading = first.lstrip("# ") if first.startswith("#") else cut_at_word(first, TITLE_CHARS)
            under = 0
            continue
        tags = c.get("metadata", {}).get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            titles[i] = "parameters given" if "injected-parameters" in tags else "parameters"
            continue
        if c.cell_type == "code" and c.source.strip():
            under += 1
        titles[i] = (heading + " (continued)").strip() if under > 1 else heading
    return code, titles


def progress_engine(label: str, stream):
    """A papermill engine that prints one line as each cell starts (a live run takes minutes). Cells are counted
    in the notebook as it runs, with papermill's injected parameters: the numbers match a failure's cell."""
    pm_engines = _deps.require("papermill").engines
    started = time.monotonic()

    class ProgressEngine(pm_engines.NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
            cell_start = nb_man.cell_start
            code, titles = cell_titles(nb_man.nb.cells)

            def announce(cell, cell_index=None, **kw):
                if cell_index in code:
                    print(f"  {label}: cell {code.index(cell_index) + 1}/{len(code)} "
                          f"[{time.monotonic() - started:5.1f} s] {titles.get(cell_index, '')}",
                          file=stream, flush=True)
                return cell_start(cell, cell_index, **kw)

            nb_man.cell_start = announce
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    pm_engines.papermill_engines.register("labkit-progress", ProgressEngine)
    return "labkit-progress"
