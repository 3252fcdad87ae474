"""What the CLI and the UI show alike, with no textual: one progress model of long work
(`present.progress`, drawn by the CLI's bars and the Runs screen). Rich renderables and
plain text only; only `workbench.tui` imports textual."""

from workbench.present.progress import BlockView, ProgressModel, clock, text_bar

__all__ = ["BlockView", "ProgressModel", "clock", "text_bar"]
