"""`paw` in a real pseudo-terminal: spawn it, type ahead, read what the terminal shows.

Used by tests/cli/test_typeahead.py and, by hand, to measure the time to the passphrase
prompt (docs/annotation.md, "Signing in at the terminal"):

    PYTHONPATH=. python -m tests.cli.pty_prompt [RUNS]

builds a store with one rater and prints the seconds from spawning `paw verify --person
alice` to its prompt, per run and the median.
"""

from __future__ import annotations

import os
import pty
import select
import statistics
import sys
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PASSPHRASE = "correct horse battery"


def make_store(path: str) -> str:
    """A store with rater alice and coordinator carol, both with `PASSPHRASE` (alice
    registers first: before any coordinator exists, which needs no one's passphrase)."""
    from annotate.trust.people import register
    from store import open_db

    db = open_db(path)
    register(db, "alice", "rater", PASSPHRASE)
    register(db, "carol", "coordinator", PASSPHRASE)
    db.conn.close()
    return path


class Terminal:
    """`python -m workbench ARGS` on the slave side of a new pty; the test holds the master."""

    def __init__(self, args: list[str]) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80", "LINES": "24"}
        self.started = time.monotonic()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: its controlling terminal is the pty
            os.chdir(ROOT)
            os.execve(sys.executable, [sys.executable, "-m", "workbench", *args], env)
        self.output = b""

    def echo_on(self) -> bool:
        """Whether the terminal echoes input now (the slave's settings, read on the master)."""
        return bool(termios.tcgetattr(self.fd)[3] & termios.ECHO)

    def type(self, text: str) -> None:
        """Keys typed at the terminal."""
        os.write(self.fd, text.encode())

    def read_until(self, marker: str, seconds: float = 120.0) -> bool:
        """Read what the terminal shows until `marker` appears (or the child ends)."""
        end = time.monotonic() + seconds
        while marker.encode() not in self.output and time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:  # the child closed the terminal
                    break
                if not chunk:
                    break
                self.output += chunk
        return marker.encode() in self.output

    def wait_echo_off(self, seconds: float = 60.0) -> bool:
        """Poll until the child switched echo off (True) or `seconds` passed."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not self.echo_on():
                return True
            time.sleep(0.002)
        return False

    def finish(self, seconds: float = 120.0) -> int:
        """Read to the end and return the exit status."""
        self.read_until("\0never\0", seconds)
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")


def time_to_prompt(db_path: str) -> float:
    """Seconds from spawning `paw verify --person alice` to its passphrase prompt."""
    term = Terminal(["--db", db_path, "verify", "--person", "alice"])
    assert term.read_until("Passphrase for alice"), term.text
    seconds = time.monotonic() - term.started
    term.type(PASSPHRASE + "\n")
    term.finish()
    return seconds


if __name__ == "__main__":
    import tempfile

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as folder:
        path = make_store(os.path.join(folder, "paw.db"))
        times = [time_to_prompt(path) for _ in range(runs)]
    print(" ".join(f"{t:.2f}" for t in times), f"median {statistics.median(times):.2f} s")
