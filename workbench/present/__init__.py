"""What the CLI and the UI show alike, with no textual: one edit's presentation
(`present.case`, printed by `paw flips show` and mounted by the flip inspector) and one
progress model of long work (`present.progress`, drawn by the CLI's bars and the Runs
screen). Rich renderables and plain text only; only `workbench.tui` imports textual."""

from workbench.present.case import EDITED_TITLES, ROLE_NAMES, Pane, case_panes, print_case
from workbench.present.progress import BlockView, ProgressModel, clock, text_bar

__all__ = ["EDITED_TITLES", "ROLE_NAMES", "BlockView", "Pane", "ProgressModel", "case_panes",
           "clock", "print_case", "text_bar"]
