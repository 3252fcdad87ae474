"""Integrity on open (`store.integrity`): a file with corrupted pages is refused before any
write; a file already checked in its current size and header is not read again; a full disk
at open is named as such, not as an I/O error."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store import open_db
from store import integrity
from store.db import describe_sqlite_error
from store.errors import UserError


def _store(tmp_path: Path) -> Path:
    path = tmp_path / "paw.db"
    db = open_db(path)
    db["notes"].insert_all({"id": i, "text": "x" * 500} for i in range(400))
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return path


def _corrupt_last_pages(path: Path, pages: int = 3) -> None:
    conn = sqlite3.connect(path)
    size, count = (conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_size", "page_count"))
    conn.close()
    with open(path, "r+b") as handle:
        for page in range(count - pages, count):
            handle.seek(page * size + 8)
            handle.write(b"\xff" * 400)


def test_corrupted_pages_are_refused_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("PAW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(integrity, "_SEEN", {})
    path = _store(tmp_path)
    _corrupt_last_pages(path)
    before = path.read_bytes()
    with pytest.raises(UserError, match=r"paw\.db: the file is damaged \(PRAGMA quick_check: "):
        open_db(path)
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0


def test_a_file_seen_intact_is_not_checked_again_until_its_size_changes(tmp_path, monkeypatch):
    monkeypatch.setenv("PAW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(integrity, "_SEEN", {})
    path = _store(tmp_path)
    calls = []
    real = integrity.check_integrity

    def counting(conn, where):
        calls.append(where)
        return real(conn, where)

    open_db(path).conn.close()  # the memo now holds (size, header)
    assert (tmp_path / "state" / "integrity.json").is_file()
    monkeypatch.setattr(integrity, "_SEEN", {})  # a new process: only the file memo is left
    conn = sqlite3.connect(path)
    state = integrity.file_state(path, conn)
    conn.close()
    assert integrity.read_memo()[state[0]] == [state[1], state[2]]
    # Grow the file (new pages, checkpointed): the next open checks again.
    db = open_db(path)
    db["more"].insert_all({"id": i, "text": "y" * 900} for i in range(300))
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    assert integrity.file_state(path)[1] != state[1]
    _corrupt_last_pages(path)
    with pytest.raises(UserError, match="damaged"):
        open_db(path)


def test_opening_a_store_twice_keeps_the_first_connection_s_locks(tmp_path, monkeypatch):
    # A plain open()/close() of the file by this process would drop the POSIX locks of its
    # SQLite connection; another process closing its own connection then deletes the -wal
    # that this one still writes to, and its commits vanish for every other reader. This
    # is what `paw run` did when the integrity check read the header with open().
    import subprocess
    import sys

    monkeypatch.setenv("PAW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setattr(integrity, "_SEEN", {})
    path = _store(tmp_path)
    writer = open_db(path)
    writer["notes"].insert({"id": 1000, "text": "first"})
    monkeypatch.setattr(integrity, "_SEEN", {})  # the second open checks the file again
    open_db(path).conn.close()  # e.g. a worker opening its own connection
    integrity.file_state(path)
    other = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
             "c.execute('SELECT COUNT(*) FROM sqlite_master').fetchall(); c.close()")
    subprocess.run([sys.executable, "-c", other, str(path)], check=True)
    assert Path(f"{path}-wal").exists()  # still the writer's WAL
    writer["notes"].insert({"id": 1001, "text": "second"})
    seen = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(" \
           "'SELECT COUNT(*) FROM notes WHERE id >= 1000').fetchone()[0])"
    out = subprocess.run([sys.executable, "-c", seen, str(path)], check=True,
                         capture_output=True, text=True).stdout.strip()
    assert out == "2"  # another process sees both commits while the writer is open
    writer.conn.close()


def test_a_full_disk_at_open_is_named(monkeypatch, tmp_path):
    monkeypatch.setattr("store.db.free_bytes", lambda folder: 4096)
    message = describe_sqlite_error(sqlite3.OperationalError("disk I/O error"),
                                    str(tmp_path / "x.db"))
    assert "the disk is full (4 KiB free" in message
    monkeypatch.setattr("store.db.free_bytes", lambda folder: 10 << 30)
    assert "disk I/O error" in describe_sqlite_error(sqlite3.OperationalError("disk I/O error"),
                                                     str(tmp_path / "x.db"))
