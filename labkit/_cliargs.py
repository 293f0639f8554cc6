"""argparse glue for labkit's CLI modules (and only them): a parser whose errors are one line,
and ``type=`` adapters over the validated values of ``labkit.values``."""

import argparse
import re
from collections.abc import Callable

from .errors import ArgumentError, LabkitError


class UsageError(LabkitError):
    """The command line itself is wrong (unknown option, missing or malformed value)."""


class _StoreOnce(argparse._StoreAction):
    """An option that takes one value refuses a second (argparse kept the last: ``--batch 8 --batch 16`` built batch
    16 with no word, while ``-p`` and ``--var`` refuse a name given twice)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault("_given_once", {})
        shown = getattr(parser, "_typed", {}).get(self.dest) or str(values)  # as typed, not a parsed Shape(...)
        if self.dest in given:
            raise argparse.ArgumentError(self, f"given twice ({given[self.dest]}, then {shown}): give it once")
        given[self.dest] = shown
        super().__call__(parser, namespace, values, option_string)


class Parser(argparse.ArgumentParser):
    """An ArgumentParser that raises UsageError instead of printing usage and exiting, so every
    refusal reaches the CLI's one-line ``labkit: error: ...`` and exit 2. Sub-parsers inherit it."""

    def __init__(self, *args, **kwargs):
        # no abbreviations: `--no-devic` had run as --no-device, and a script's `--batc` would break, or change
        # meaning, the day another option starts the same way
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})
        # a value that starts with a minus and a digit ("--shape -1,37810,56,128", "-.5") is a value, so that its own
        # check names it; argparse takes only a plain negative number for one (labkit has no option named like a number)
        self._negative_number_matcher = re.compile(r"^-\.?\d")
        self.set_defaults(_prog=self.prog, _parser=self)  # the deepest command's parser sets them last: whose options
        self.register("action", None, _StoreOnce)  # add_argument's default action
        self.register("action", "store", _StoreOnce)

    def _get_values(self, action, arg_strings):
        self.__dict__.setdefault("_typed", {})[action.dest] = " ".join(arg_strings)  # for _StoreOnce's message
        return super()._get_values(action, arg_strings)

    def parse_args(self, args=None, namespace=None):
        Parser._command_line = (self, args)  # for error(): an unknown option where a command was expected
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:  # argparse blamed the top-level parser ("labkit: unrecognized arguments") for a subcommand's
            import sys

            argv = list(sys.argv[1:] if args is None else args)
            sub = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
            command_at = next((i for i, a in enumerate(argv) if sub is not None and a in sub.choices), len(argv))
            before = any(e in argv[:command_at] for e in extras)  # `labkit --bogus device`: labkit's, not device's
            prog = self.prog if before else getattr(parsed, "_prog", self.prog)
            owner = self if before else getattr(parsed, "_parser", self)
            raise UsageError(("" if prog == "labkit" else f"{prog}: ") + _unrecognized(extras, owner))
        return parsed

    def _unknown_options(self) -> tuple[argparse.ArgumentParser, list[str]]:
        """(the top-level parser, the options of the command line that neither it nor this parser takes), up to a
        ``--`` (what follows it is a program's: ``labkit ncu run -- prog --flag``)."""
        import sys

        top, argv = getattr(Parser, "_command_line", (self, []))
        argv = list(sys.argv[1:] if argv is None else argv)
        argv = argv[:argv.index("--")] if "--" in argv else argv
        known = {*self._option_string_actions, *top._option_string_actions}
        return top, [a for a in argv if a.startswith("-") and a.split("=", 1)[0] not in known
                     and not self._negative_number_matcher.match(a)]

    def error(self, message: str):
        sub = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is not None and message == f"the following arguments are required: {sub.dest}":  # not argparse's dest
            top, unknown = self._unknown_options()
            message = ((_unrecognized(unknown, top, listed=False) + "; " if unknown else "")
                       + f"expected a command: {', '.join(sub.choices)} ({self.prog} -h says what each does)")
        elif message.startswith("the following arguments are required: "):  # `--batc 2`: the typo first
            unknown = self._unknown_options()[1]
            missing = message.removeprefix("the following arguments are required: ").split(", ")
            left = [m for m in missing if m not in _meant(unknown, self)]  # `--batc` for a missing --batch says it
            message = "; ".join([_unrecognized(unknown, self)] * bool(unknown)
                                + [f"the following arguments are required: {', '.join(left)}"] * bool(left))
        elif sub is not None and message.startswith(f"argument {sub.dest}: invalid choice: "):  # argparse's dest name
            message = "unknown command " + message.removeprefix(f"argument {sub.dest}: invalid choice: ")
        # argparse's "argument --kv-len: " before a message that names --kv-len itself says the option twice; before
        # any other, the option as the runtime errors name theirs ("--batch: given twice", "-p/--param: expected 2")
        named = re.match(r"argument (-[-\w]+)(?:/-[-\w]+)*: (\1[ :].*)", message, re.S)
        message = named.group(2) if named else re.sub(r"^argument (-[-\w]+(?:/-[-\w]+)*): ", r"\1: ", message)
        # the CLI prints 'labkit: error: ...': the top-level parser's own name would say 'labkit' twice
        raise UsageError(message if self.prog == "labkit" else f"{self.prog}: {message}")


def _meant(args: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """The options of ``parser`` that ``args`` begin (``--batc``: ``--batch``; options are taken whole), else those
    they are close to (``--kvlen``: ``--kv-len``)."""
    import difflib

    options = sorted(o for o in parser._option_string_actions if o.startswith("--"))
    meant = []
    for name in (a.split("=", 1)[0] for a in args if a.startswith("--")):
        meant += ([o for o in options if o.startswith(name) and o != name]
                  or difflib.get_close_matches(name, options, n=1, cutoff=0.8))
    return meant


def _unrecognized(args: list[str], parser: argparse.ArgumentParser, *, listed: bool = True) -> str:
    """What argparse calls unrecognized arguments, and the options they begin, else where the options are listed."""
    if whole := _meant(args, parser):
        return f"unrecognized arguments: {' '.join(args)} (did you mean {' or '.join(whole)}?)"
    if path := next((a for a in args if _path_like(a)), None):  # argparse reads any word with a leading - as an option
        return f"unrecognized arguments: {' '.join(args)} (a path that starts with - goes after --, or as ./{path})"
    return f"unrecognized arguments: {' '.join(args)}" + (f" ({parser.prog} -h lists what it takes)" if listed else "")


def _path_like(arg: str) -> bool:
    """``-x.json`` or ``-runs/a``: an argument meant as a file, not an option (an option has no dot or slash before
    its ``=``, and a file may exist by that name)."""
    import os

    name = arg.split("=", 1)[0]
    # a path with no leading - (one path too many) is no option that needs --: said as any extra word (a docs review)
    return arg.startswith("-") and not arg.startswith("--") and ("." in name or "/" in name or os.path.exists(arg))


def typed(parse: Callable[[str], object], name: str) -> Callable[[str], object]:
    """An argparse ``type=`` from a values parser: its message survives (argparse would replace a
    ValueError's text by 'invalid value')."""

    def convert(text: str):
        try:
            return parse(text)
        except ArgumentError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name
    return convert


def int_in(lo: int | None = None, hi: int | None = None, what: str = "value") -> Callable[[str], int]:
    from .values import parse_int

    return typed(lambda t: parse_int(t, what=what, lo=lo, hi=hi), "int")


def kilo_int_in(lo: int, hi: int, what: str) -> Callable[[str], int]:
    """An integer in [lo, hi], or whole 1024s (``8k`` = 8192), as decode tables print lengths."""
    from .values import parse_kilo_int

    return typed(lambda t: parse_kilo_int(t, what=what, lo=lo, hi=hi), "int")


def int_list(what: str, *, hi: int, kilo: bool = False) -> Callable[[str], tuple[int, ...]]:
    """Comma-separated positive integers, each once (``kilo``: ``8k`` = 8192 too)."""
    from .values import parse_int_list

    return typed(lambda t: parse_int_list(t, what=what, hi=hi, kilo=kilo), "list")


def finite_float(what: str = "value") -> Callable[[str], float]:
    from .values import parse_float

    return typed(lambda t: parse_float(t, what=what), "float")


def output_path(what: str = "output", *, writes: str | None) -> Callable[[str], object]:
    """A file the command will write, making its missing directories; an existing file is replaced only where it is
    what the command ``writes`` (``OutputPath.parse``)."""
    from .values import OutputPath

    return typed(lambda t: OutputPath.parse(t, what, writes=writes), "path")


def figure_path(what: str = "figure") -> Callable[[str], object]:
    """A figure's path: the PNG and the SVG that ``plot.save`` writes for it checked too, before any work."""
    return typed(lambda t: check_figure(t, what), "path")


def check_figure(path, what: str = "figure"):
    """``path`` as an output, and the two files ``plot.save`` writes for it (a directory named ``x.png`` is one
    line now, not an error after the tables)."""
    from .plot import figure_paths
    from .values import OutputPath

    out = OutputPath.parse(path, what)
    for f in figure_paths(out.path):
        OutputPath.parse(f, what, writes="figure")  # a user's PNG or SVG at FIG.png / FIG.svg stays
    return out


def output_dir(what: str = "output directory", *, writes: bool = False) -> Callable[[str], object]:
    """A directory the command creates or adds to (``writes``: it always writes there, so an existing one must be
    writable)."""
    from .values import OutputDir

    return typed(lambda t: OutputDir.parse(t, what, writes=writes), "directory")


def existing_dir(what: str = "directory") -> Callable[[str], object]:
    """An existing directory (a path given to search, which a typo would silently leave out)."""
    from pathlib import Path

    def parse(text: str) -> Path:
        p = Path(text)
        if not p.is_dir():
            raise ArgumentError(f"{what} {text!r}: {'not a directory' if p.exists() else 'does not exist'}")
        return p

    return typed(parse, "directory")


def device_model(text: str) -> str:
    """``--device``: a GPU model as reports name it; a blank one would match no run and say so obscurely."""
    if not text.strip():
        raise ArgumentError(f"--device {text!r}: expected a GPU model as the reports name it, e.g. 'NVIDIA H200'")
    return text


def build_label(text: str) -> str:
    """``--kernel``: a build's label as the tables name it (a blank one matched no run, and the refusal left it
    unsaid)."""
    if not text.strip():
        raise ArgumentError(f"--kernel {text!r}: expected a build's label as the tables name it, e.g. 'mma w4s1c1'")
    return text
