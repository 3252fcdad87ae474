"""The adjudication screen: each disagreement with the case as the raters saw it.

Reached from the coordinator app (`a`). The queue is `annotate.adjudicate.disagreements`
(lowest-agreement strata first). For each (case, field): the question with its edit,
options with the gold, the model's answers and reasoning — the same blinded view the
raters had — then both raters' labels and notes, the allowed values as keys, and the
reason. The edit itself (“removed” → “inserted”) is pinned on a line above the case: a
harm or chain decision scrolls the case to the answers or the reasoning, and the edit
must stay in view at 80×24 (`e` shows the whole question). A key that is not a value, an
empty reason or anything else the core refuses is shown in place under the reason; the
session carries on. Raters' labels are never touched: each decision is one `adjudications`
row (`annotate.adjudicate.adjudicate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, cast

from textual import events, on
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from annotate.codebook import FIELDS, FieldKind, option_keys
from store.errors import UserError
from workbench.tui.host import SessionHost
from workbench.tui.widgets import agreement_format as fmt
from workbench.tui.widgets.case_panels import PANEL_KEYS, CasePanels
from workbench.tui.widgets.decision_panel import DecisionPanel, value_keys
from workbench.tui.widgets.label_panel import PANEL_NAMES
from workbench.tui.widgets.question_diff import edit_summary

if TYPE_CHECKING:
    from annotate.adjudicate import RaterLabels

_VIEW = Binding.Group("view")
_CASE = Binding.Group("decision", compact=True)


@dataclass(frozen=True)
class Decision:
    """One (case, field) to decide: a disagreement, or the new answer that a final
    'shifted' still needs."""

    code: str
    field: str
    stratum: str
    stratum_kappa: float | None
    follow_up: bool = False


class AdjudicateScreen(Screen[None]):
    """The coordinator's queue of disagreements, one decision at a time."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    CSS_PATH = "adjudicate.tcss"
    AUTO_FOCUS = ""  # nothing: keys choose a value first; then the reason input has focus

    HELP_TITLE = "adjudicating a disagreement"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "choose('1')", "value", key_display="1…",
                tooltip="choose the final value (its key is listed beside it; a new answer "
                        "is chosen by its option letter), then type the reason"),
        *[Binding(str(d), f"choose('{d}')", show=False) for d in range(2, 10)],
        Binding("left_square_bracket", "step(-1)", "prev", key_display="[", group=_CASE,
                tooltip="previous disagreement (nothing is recorded)"),
        Binding("right_square_bracket", "step(1)", "next", key_display="]", group=_CASE,
                tooltip="next disagreement (nothing is recorded)"),
        *[Binding(key, f"reveal('{name}')", name, group=_VIEW,
                  tooltip=f"show {PANEL_NAMES[name]}")
          for name, key in PANEL_KEYS.items()],
        Binding("pageup", "scroll_case(-1)", show=False, key_display="pgup/pgdn",
                tooltip="scroll the case a page up / down"),
        Binding("pagedown", "scroll_case(1)", show=False),
        Binding("escape", "back", "back",
                tooltip="leave the reason box, or go back to the agreement tables"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.queue: list[Decision] = []
        """Decisions in order (disagreements, with follow-ups inserted after 'shifted')."""
        self.index = 0
        """The decision on screen."""
        self.chosen: str | None = None
        """The value chosen for it so far."""
        self.decided: dict[tuple[str, str], str] = {}
        """(code, field) -> value recorded in this session."""
        self._raters: tuple[RaterLabels, ...] = ()
        self._keys: dict[str, str] = {}
        self._last = ""

    @property
    def paw(self) -> SessionHost:
        """The app, as the `SessionHost` it provides."""
        return cast(SessionHost, self.app)

    @property
    def current(self) -> Decision | None:
        """The decision on screen (None when the queue is empty)."""
        return self.queue[self.index] if 0 <= self.index < len(self.queue) else None

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Static(id="edit")
        yield CasePanels(id="case")
        yield DecisionPanel()
        yield Footer(compact=True)

    def on_mount(self) -> None:
        from annotate.adjudicate import disagreements
        from annotate.trust.identity import require

        try:
            require(self.paw.person, "coordinator")
            queue = disagreements(self.paw.db, self.paw.set_name)
        except UserError as exc:
            self.query_one("#status", Static).update("coordinator role required")
            self.paw.show_error("Cannot adjudicate", exc)
            return
        self.queue = [Decision(d.code, d.field, d.stratum, d.stratum_kappa) for d in queue]
        self._show()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Offer panel keys only for panels this case has, and no decision keys once the
        queue is done."""
        if self.current is None:
            return action == "back"
        if action == "reveal":
            return parameters[0] in self.query_one(CasePanels).present()
        return True

    # ---- drawing --------------------------------------------------------------------

    def _show(self) -> None:
        from annotate.adjudicate import rater_labels
        from annotate.sets.cases import shown_case

        decision = self.current
        status = self.query_one("#status", Static)
        panel = self.query_one(DecisionPanel)
        if decision is None:
            done = len(self.decided)
            last = f" · {self._last}" if self._last else ""
            # Wraps (class `done`): at 80 columns the last decision did not fit on one line.
            status.update(f"set {self.paw.set_name} · nothing left to adjudicate"
                          f"{f' · {done} decided now' if done else ''}{last} · esc back")
            status.add_class("done")
            panel.display = False
            self.query_one(CasePanels).display = False
            self.query_one("#edit", Static).display = False
            self.refresh_bindings()
            return
        view = shown_case(self.paw.db, decision.code, self.paw.person)
        pair = rater_labels(self.paw.db, self.paw.set_name, decision.code, self.paw.person)
        self._raters = pair or ()
        labels = {key: label for key, label in option_keys([lab for lab, _ in view.options])
                  .items() if label != view.gold}
        self._keys = value_keys(decision.field, labels)
        self.query_one(CasePanels).show(view)
        self.query_one("#edit", Static).update(
            edit_summary(view.segments, budget=2 * max(self.size.width - 2, 40)))
        stratum = decision.stratum.replace("|", " / ")
        kappa = "κ undefined" if decision.stratum_kappa is None else \
            f"κ {fmt.number(decision.stratum_kappa)}"
        status.remove_class("done")
        status.update(f"adjudication · decision {self.index + 1} of {len(self.queue)} · "
                      f"case {decision.code} · {len(self.decided)} decided")
        why = " (final gold shift is 'shifted')" if decision.follow_up else ""
        panel.show(title=f"{FIELDS[decision.field].title}{why} · {stratum} · {kappa}",
                   field=decision.field, raters=self._raters, keys=self._keys,
                   chosen=self.chosen)
        self.refresh_bindings()
        self.call_after_refresh(self._reveal_needed)

    def _reveal_needed(self) -> None:
        """Scroll to what the field depends on (the answers for harm, the reasoning for
        chain registration), as the raters' screen showed it with the field."""
        decision = self.current
        if decision is None:
            return
        panels = self.query_one(CasePanels)
        panels.note_visible()
        unseen = panels.unseen(FIELDS[decision.field].needs)
        if unseen:
            panels.reveal(unseen[-1])

    # ---- deciding -------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """Letter keys of the new-answer field (a, b, … or y / n / m) choose an option."""
        decision = self.current
        if decision is None or self.focused is self.query_one(DecisionPanel).reason:
            return
        if FIELDS[decision.field].kind == FieldKind.OPTION_LETTER and event.character \
                and event.character.isalpha():
            key = event.character.lower()
            # An option key wins over a panel key here; any other letter (the gold's, say)
            # is refused in place rather than ignored.
            if key in self._keys or key not in PANEL_KEYS.values():
                event.stop()
                event.prevent_default()
                self._choose(key)

    def action_choose(self, key: str) -> None:
        """Choose the value whose key is `key` (refused in place if there is none)."""
        self._choose(key)

    def _choose(self, key: str) -> None:
        decision = self.current
        if decision is None:
            self.app.bell()
            return
        panel = self.query_one(DecisionPanel)
        value = self._keys.get(key)
        if value is None:
            self.app.bell()
            allowed = ", ".join(f"{k} {v}" for k, v in self._keys.items())
            panel.say(f"'{key}' is not a value of {decision.field}: press {allowed}",
                      error=True)
            return
        self.chosen = value
        panel.say("type the reason, enter records it · esc to choose again")
        self._show()
        panel.reason.focus()

    @on(Input.Submitted, "#reason")
    def _record(self, message: Input.Submitted) -> None:
        from annotate.adjudicate import adjudicate

        decision = self.current
        panel = self.query_one(DecisionPanel)
        if decision is None:
            return
        if self.chosen is None:
            panel.say("choose a value first (its key), then give the reason", error=True)
            panel.reason.blur()
            return
        try:
            final = adjudicate(self.paw.db, self.paw.person, decision.code, decision.field,
                               self.chosen, message.value)
        except UserError as exc:
            panel.say(f"not recorded: {exc}", error=True)  # the session carries on
            return
        self.decided[(decision.code, decision.field)] = str(final.value)
        if decision.field == "gold_shift" and final.value == "shifted":
            self._queue_new_answer(decision)
        panel.reason.value = ""
        panel.reason.blur()
        self._last = f"recorded {decision.field} = {final.value} for {decision.code}"
        panel.say(self._last)
        self.chosen = None
        # On to the next undecided one, wrapping round to any skipped earlier.
        order = list(range(self.index + 1, len(self.queue))) + list(range(self.index))
        self.index = next((i for i in order if (self.queue[i].code, self.queue[i].field)
                           not in self.decided), len(self.queue))
        self._show()

    def _queue_new_answer(self, decision: Decision) -> None:
        """A final 'shifted' needs the new answer: decide it next unless it is settled."""
        from annotate.adjudicate import final_labels

        key = (decision.code, "gold_shift_alt")
        if any((d.code, d.field) == key for d in self.queue[self.index + 1:]):
            return
        if key in final_labels(self.paw.db, self.paw.set_name):
            return
        self.queue.insert(self.index + 1, Decision(decision.code, "gold_shift_alt",
                                                   decision.stratum, decision.stratum_kappa,
                                                   follow_up=True))

    # ---- navigation -----------------------------------------------------------------

    def action_step(self, step: int) -> None:
        """Previous or next decision (nothing recorded)."""
        if not self.queue:
            return
        self.index = max(0, min(self.index + step, len(self.queue) - 1))
        self.chosen = None
        self.query_one(DecisionPanel).say("")
        self._show()

    def action_back(self) -> None:
        """Leave the reason input, or go back to the coordinator's view."""
        panel = self.query_one(DecisionPanel)
        if self.focused is panel.reason:
            panel.reason.blur()
            self.chosen = None
            panel.say("")
            self._show()
            return
        self.dismiss(None)

    def action_reveal(self, name: str) -> None:
        """Bring one panel of the case into view."""
        self.query_one(CasePanels).reveal(name)

    def action_scroll_case(self, step: int) -> None:
        """Scroll the case a page up or down."""
        panels = self.query_one(CasePanels)
        panels.scroll_page_down(animate=False) if step > 0 else \
            panels.scroll_page_up(animate=False)

    def palette_commands(self) -> list[SystemCommand]:
        """Adjudication commands offered in the command palette (ctrl+p)."""
        return [
            SystemCommand("Next disagreement", "Leave this one for later",
                          lambda: self.action_step(1)),
            SystemCommand("Back to agreement", "Return to the coordinator's view",
                          lambda: self.dismiss(None)),
        ]
