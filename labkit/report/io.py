"""Read and write Sage2 report files (through labkit's one hardened reader)."""

from pathlib import Path

from .._json import load_document, parse_text
from .._write import dumps as dumps_json
from .._write import write_text
from .model import CURRENT_VERSION, Sage2Report, from_node, to_dict

__all__ = ["CURRENT_VERSION", "dumps", "from_node", "load", "loads", "save", "to_dict"]

def load(path: Path | str) -> Sage2Report:
    """Read and validate a report file.

    Raises:
        FormatError: one line naming the file, the JSON path and what was expected.
    """
    return from_node(load_document(path, what="Sage2 report"))


def loads(text: str, source: str | None = None) -> Sage2Report:
    return from_node(parse_text(text, source))


def dumps(r: Sage2Report) -> str:
    """The report as JSON text, formatted as the seed (2-space indent, no trailing newline)."""
    return dumps_json(to_dict(r), indent=2)


def save(r: Sage2Report, path: Path | str) -> Path:
    """Write ``r`` after validating it by a parse of its own output (never write a bad file)."""
    text = dumps(r)
    loads(text, source=str(path))
    return write_text(path, text + "\n")
