"""A matplotlib figure as PNG bytes: the one place the reports' figures are encoded."""

from __future__ import annotations

import io
from typing import Any


def png_bytes(fig: Any, **savefig: Any) -> bytes:
    """`fig` saved as PNG into memory (`savefig` options passed on, e.g. bbox_inches)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", **savefig)
    return buffer.getvalue()
