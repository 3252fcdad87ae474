"""The evidence gate across case transitions (issue 21, criterion 4).

At 80x24 a chain-registration label was accepted with 3-4 of ~13 reasoning lines on screen
whenever the previous case had ended with its own reasoning fully shown: the 'seen' check
read the previous case's frame. Here raters move between cases whose chain fits the pane
and cases whose chain does not, in both directions, and every field whose evidence has not
been drawn in full *for this case* is refused.
"""

from __future__ import annotations

import pytest

from annotate.codebook import FIELDS
from annotate.sets.audit import create_set
from annotate.trust.people import register
from store import open_db
from tests.builders import AuditBuilder
from tests.tui.clinic import CHAIN, STEMI_OPTIONS, STEMI_QUESTION
from tests.tui.helpers import events
from workbench.tui.app import AnnotationApp
from workbench.tui.screens.annotate import AnnotateScreen

pytestmark = pytest.mark.asyncio

PASSPHRASE = "correct horse battery"
SHORT_CHAIN = "Inferior leads: right coronary artery. Answer: A"

# (item, edited phrase, chain): three long chains (each taller than the pane at 80x24,
# told apart by their first words) and one that fits.
CASES = [("long-1", "mild", "First. " + CHAIN), ("long-2", "moderate", "Second. " + CHAIN),
         ("long-3", "slight", "Third. " + CHAIN), ("short", "dull", SHORT_CHAIN)]


@pytest.fixture
def chains_db(tmp_path) -> tuple[str, object]:
    path = str(tmp_path / "chains.db")
    db = open_db(path)
    b = AuditBuilder(db, audit="chains")
    arm = b.arm("smollm2/cot")
    for source, word, chain in CASES:
        item = b.item(source, gold="A", options=STEMI_OPTIONS, question=STEMI_QUESTION)
        b.variant(item, operator_id="M5_severity_a", family="M5", intent="D",
                  text=STEMI_QUESTION.replace("crushing", word, 1))
        b.baseline(arm, item, answer="A", output="RCA. Answer: A")
        b.perturbed(arm, item, operator_id="M5_severity_a", family="M5", intent="D",
                    answer="A", output=chain, old="crushing", new=word)
    alice = register(db, "alice", "rater", PASSPHRASE)
    register(db, "bob", "rater", PASSPHRASE)
    carol = register(db, "carol", "coordinator", PASSPHRASE)
    create_set(db, b.audit_id, size=4, per_family=None, seed=5, name="chains",
               raters=("alice", "bob"), coordinator=carol)
    db.conn.close()
    return path, alice


def kind(view) -> str:
    """Which of `CASES` a case view is (by the first words of its chain)."""
    chain = view.chain_after or ""
    return next(name for name, _, text in CASES if chain.startswith(text[:6]))


async def go_to(pilot, screen: AnnotateScreen, wanted: str, key: str) -> None:
    """Press `key` (']' or '[') until the case `wanted` is on screen, then let it draw."""
    for _ in range(2 * len(screen.cases)):
        if kind(screen.current) == wanted:
            break
        await pilot.press(key)
        await pilot.pause()
    assert kind(screen.current) == wanted
    await pilot.pause()


def chain_rows_on_screen(screen: AnnotateScreen) -> tuple[int, int]:
    """(rows of the chain panel inside the viewport, its height), from the frame."""
    geometry = screen.screen.find_widget(screen.panels.panel("chain"))
    visible = geometry.region.intersection(geometry.clip)
    return visible.height, geometry.region.height


async def read_chain_to_its_end(pilot, screen: AnnotateScreen) -> None:
    for _ in range(10):
        if screen.panels.was_seen("chain"):
            return
        await pilot.press("pagedown")
        await pilot.pause()
    assert screen.panels.was_seen("chain")


async def label_chain(pilot, screen: AnnotateScreen, db_path: str) -> bool:
    """Answer gold shift and validity, then try chain registration 'yes' (key 1) on the
    case on screen; True when the chain label was stored."""
    code = screen.current.code
    await pilot.press("1", "1")
    await pilot.pause()
    assert screen.active == "chain_registration"
    await pilot.press("1")
    await pilot.pause()
    return (code, "chain_registration", "yes") in events(db_path, "alice")


@pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
@pytest.mark.parametrize("step", [0, 1, 2])
@pytest.mark.parametrize("key", ["right_square_bracket", "left_square_bracket"],
                         ids=["forward", "back"])
async def test_a_chain_not_drawn_in_full_for_this_case_is_refused(chains_db, size, step, key):
    # Every pair of neighbours in alice's order, both ways: the previous case's chain was
    # read to its end, then ']' or '[' moves to the next one.
    path, alice = chains_db
    app = AnnotationApp(path, alice, "chains")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, AnnotateScreen)
        start = step if key == "right_square_bracket" else step + 1
        for _ in range(start):
            await pilot.press("right_square_bracket")
            await pilot.pause()
        assert screen.index == start
        await read_chain_to_its_end(pilot, screen)   # the previous case ends fully read
        await pilot.press(key)
        await pilot.pause()
        await pilot.pause()
        code = screen.current.code
        shown, height = chain_rows_on_screen(screen)
        TRANSITIONS.add((kind(screen.cases[start]) != "short", height > shown))
        if shown < height:  # this chain does not fit: refused until read to its end
            assert not screen.panels.was_seen("chain")
            assert not await label_chain(pilot, screen, path), \
                f"accepted with {shown} of {height} chain rows on screen"
            await read_chain_to_its_end(pilot, screen)
            await pilot.press("1")
            await pilot.pause()
            assert (code, "chain_registration", "yes") in events(path, "alice")
        else:  # it fits: drawn in full with the case, accepted
            assert screen.panels.was_seen("chain")
            assert await label_chain(pilot, screen, path)


TRANSITIONS: set[tuple[bool, bool]] = set()
"""(previous chain long?, this chain taller than the pane?) seen by the test above."""


async def test_the_transitions_covered_include_every_kind():
    # Runs after the parametrized test (file order): long->long, short->long, long->short.
    if len(TRANSITIONS) < 3:
        pytest.skip("run with the transition tests above")
    assert {(True, True), (False, True), (True, False)} <= TRANSITIONS


async def test_a_fitting_chain_after_a_long_one_is_accepted_once_drawn(chains_db):
    path, alice = chains_db
    app = AnnotationApp(path, alice, "chains")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        await go_to(pilot, screen, "long-1", "right_square_bracket")
        await go_to(pilot, screen, "short", "right_square_bracket")  # long-1 left unread
        assert screen.panels.was_seen("chain")  # drawn in full at once: nothing to scroll
        assert await label_chain(pilot, screen, path)


async def test_lines_seen_before_a_resize_do_not_count_after_it(chains_db):
    # At 80 columns the end of the chain and its first rows are seen (a gap between them);
    # at 100 columns (re-wrapped, fewer rows) its first rows again: the line numbers of two
    # layouts must not add up to "every line seen".
    path, alice = chains_db
    app = AnnotationApp(path, alice, "chains")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        panels = screen.panels
        await go_to(pilot, screen, "long-1", "right_square_bracket")
        for scroll in (panels.scroll_end, panels.scroll_home):  # the mouse wheel, say
            scroll(animate=False, immediate=True)
            await pilot.pause()
            await pilot.pause()
        narrow_height = chain_rows_on_screen(screen)[1]
        assert not panels.was_seen("chain")
        await pilot.resize_terminal(100, 24)
        await pilot.pause()
        await pilot.pause()
        panels.scroll_to(y=3, animate=False, immediate=True)
        await pilot.pause()
        await pilot.pause()
        shown, height = chain_rows_on_screen(screen)
        assert height < narrow_height and shown < height  # re-wrapped, not all on screen
        assert not panels.was_seen("chain")  # (the old rule said True here)
        assert panels.unseen(FIELDS["chain_registration"].needs) == ["chain"]
