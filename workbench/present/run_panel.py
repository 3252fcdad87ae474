"""A stored run's panel on the Runs screen, as plain text: status, settings, one bar per
block, each arm's unparsed share. No textual here; the screen draws the string."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.present.progress import clock, text_bar

if TYPE_CHECKING:
    from collections.abc import Sequence

    from store.runs import ArmAnswers, RunInfo


def block_rows(counts: dict[str, dict[str, int]], role_block: dict[str, str]
               ) -> list[tuple[str, int, int]]:
    """(block, done, total) per block from per-role job counts (not-fired excluded)."""
    blocks: dict[str, list[int]] = {}
    for role, by_status in counts.items():
        block = role_block.get(role, role)
        done_total = blocks.setdefault(block, [0, 0])
        done_total[0] += by_status.get("done", 0)
        done_total[1] += sum(n for s, n in by_status.items() if s != "not_fired")
    return [(b, d, t) for b, (d, t) in blocks.items() if t]


def stored_text(run: RunInfo, blocks: list[tuple[str, int, int]],
                unparsed: Sequence[ArmAnswers] = ()) -> str:
    """A stored run's panel: status, settings summary, one bar per block, and each arm's
    unparsed share beside the paper's ≤ 3 % (with the reports' warning above it)."""
    session = run.last_session or {}
    lines = [(f"{run.name} · {run.kind} · {run.status} · dataset {run.dataset} · "
              f"{', '.join(run.models) or 'no models'} · {clock(run.wall_s)} · "
              f"{run.not_fired} not fired")]
    for block, done, total in blocks:
        lines.append(f"{block:<10} {text_bar(done, total)} {done:>5}/{total:<5}")
    if any(arm.answered for arm in unparsed):
        from analysis.common.unparsed import over_threshold, share_text, unparsed_meta

        lines.append("unparsed: " + "; ".join(
            f"{a.label} {share_text(a)}" + (" ⚠" if over_threshold(a) else "")
            for a in unparsed) + " (paper ≤ 3 %)")
        warning = unparsed_meta(list(unparsed)).get("unparsed warning")
        if warning:
            lines.append(f"⚠ {warning}")
    if run.status == "interrupted":
        lines.append("interrupted: press r to resume (finished generations are stored)")
    elif session.get("status") == "running" and run.status == "running":
        lines.append(f"running in process {session.get('pid')} on {session.get('host')}")
    from workbench.kinds import kind_spec

    lines.append(f"report: {kind_spec(run.kind).report_line(run.name)}")
    return "\n".join(lines)
