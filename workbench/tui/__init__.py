"""The Textual terminal UI: a rater's labelling session and the coordinator's live view.

Only this package imports textual; the functions below import it lazily so `paw --help`
stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotate.trust.identity import Person

__all__ = ["run_adjudication", "run_annotation", "run_coordinator", "run_rater_file"]


def run_annotation(db_path: str, person: Person, set_name: str) -> None:
    """Run a rater's blinded labelling session until they quit.

    Args:
        db_path: the SQLite store.
        person: an authenticated rater (from `annotate.trust.people.authenticate`).
        set_name: the annotation set to label.
    """
    from workbench.tui.app import AnnotationApp

    AnnotationApp(db_path, person, set_name).run()


def run_rater_file(file_path: str, person: Person, conn) -> None:
    """Run the labelling screen on a rater's own file until she quits.

    Args:
        file_path: the rater file.
        person: the rater, signed in against the file.
        conn: the file's open connection (closed when the app ends).
    """
    from workbench.tui.app import RaterFileApp

    RaterFileApp(file_path, person, conn).run()


def run_coordinator(db_path: str, person: Person, set_name: str,
                    watch: str | None = None) -> None:
    """Run the coordinator's live progress and agreement view until they quit.

    Args:
        db_path: the SQLite store.
        person: an authenticated coordinator.
        set_name: the annotation set to watch.
        watch: a folder of rater files, merged before each recomputation.
    """
    from workbench.tui.app import CoordinatorApp

    CoordinatorApp(db_path, person, set_name, watch=watch).run()


def run_adjudication(db_path: str, person: Person, set_name: str) -> None:
    """Run the coordinator app on its adjudication screen (esc: the agreement view).

    Args:
        db_path: the SQLite store.
        person: an authenticated coordinator.
        set_name: the annotation set whose disagreements to decide.
    """
    from workbench.tui.app import CoordinatorApp

    CoordinatorApp(db_path, person, set_name, adjudicate=True).run()
