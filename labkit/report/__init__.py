"""Sage2 profiling reports: model, strict reader/writer, and the tables the CLI prints."""

from .frames import checks_frame, scheduler_frame, shown_checks
from .io import dumps, load, loads, save
from .model import (
           CURRENT_VERSION,
           PHASE_GROUPS,
           DecompositionCheck,
           Sage2Report,
           Scheduler,
           TailPoint,
           from_node,
           to_dict,
)
from .tables import (
           build_label,
           diff_table,
           differences,
           label,
           phase_table,
           provenance_traits,
           shown_tails,
           summary,
           tail_note,
           tail_table,
)

__all__ = ["CURRENT_VERSION", "PHASE_GROUPS", "DecompositionCheck", "Sage2Report", "Scheduler", "TailPoint",
           "build_label", "checks_frame", "diff_table", "differences", "dumps", "label", "from_node", "load", "loads",
           "phase_table", "provenance_traits", "save", "scheduler_frame", "shown_checks", "shown_tails", "summary",
           "tail_note", "tail_table", "to_dict"]
