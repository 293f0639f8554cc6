"""Typed notebook parameters: the annotations of a notebook's ``parameters`` cell.

A parameters cell reads ``copy_mib: Int(1, 16384) = 1024  # help``. The annotation is one of
the types below; it parses a command-line string (``labkit nb run -p copy_mib 64``) and checks
a Python value (papermill API, a JupyterLab edit), both into one canonical value, or raises
ParameterError naming the parameter, the value and what was expected. The runner checks every
override before any cell runs; ``Session.start`` checks the values the notebook actually holds.

``measured=False`` marks a parameter that does not change what is measured (where results go,
which reference file to draw beside them): recorded mode ignores it when it picks a run.
"""

from .compound import DecodeHeads, IntDict, IntList, Sage2Shape
from .scalar import READERS, Choice, File, Float, Int, Names, Param, Text, bound_of

TYPES = {cls.__name__: cls for cls in (Int, Float, Text, Names, Choice, IntList, DecodeHeads, Sage2Shape, IntDict,
                                      File)}
__all__ = ["READERS", "TYPES", "Choice", "DecodeHeads", "File", "Float", "Int", "IntDict", "IntList", "Names", "Param",
           "Sage2Shape", "Text", "bound_of"]
