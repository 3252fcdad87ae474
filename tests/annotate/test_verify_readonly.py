"""`paw verify` on archives: a read-only file, folder or mount, a `paw backup` copy, a live
WAL store; the file verified is never changed (sha256 before = after, no -wal/-shm made)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from annotate.events import record_label, start_session
from annotate.sets.annotation_set import rater_queue
from annotate.sets.audit import create_set
from store import open_db
from store.backup import backup
from store.db import open_readonly
from store.errors import UserError
from tests.annotate.conftest import named, save_to_file
from tests.annotate.test_verify import COORDINATOR, paw_verify


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@contextmanager
def read_only(*paths: Path):
    """Make files and folders truly read-only, also for root (tests run as root here,
    and root ignores permission bits): `chattr +i` then, chmod otherwise."""
    root = os.geteuid() == 0
    if root and shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: cannot make a file read-only")
    modes = {p: p.stat().st_mode for p in paths}
    try:
        for p in paths:
            if root:
                done = subprocess.run(["chattr", "+i", str(p)], capture_output=True)
                if done.returncode:
                    pytest.skip(f"chattr +i unsupported here: {done.stderr.decode().strip()}")
            else:
                p.chmod(0o555 if p.is_dir() else 0o444)
        yield
    finally:
        for p in reversed(paths):
            if root:
                subprocess.run(["chattr", "-i", str(p)], capture_output=True)
            else:
                p.chmod(modes[p])


@pytest.fixture
def store_file(db, audit, people, tmp_path) -> Path:
    """A closed store file (no -wal) with a set and 4 labels, in its own folder."""
    create_set(db, audit.audit_id, 12, per_family=None, name="s", **named(people))
    for name in ("alice", "bob"):
        session = start_session(db, people[name], "s")
        for view in rater_queue(db, "s", people[name])[:2]:
            record_label(db, people[name], session, view.code, "validity", "valid")
    folder = tmp_path / "archive"
    folder.mkdir()
    return Path(save_to_file(db, folder / "paw.db"))


def test_verify_works_on_a_read_only_file_in_a_read_only_folder(store_file):
    before = sha256(store_file)
    with read_only(store_file, store_file.parent):
        result = paw_verify(str(store_file))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "annotation record ok: 8 entries, 4 label events" in result.stdout
        details = paw_verify(str(store_file), "--details", *COORDINATOR)
        assert details.returncode == 0, details.stdout + details.stderr
        mine = paw_verify(str(store_file), "--person", "alice", "--passphrase-env",
                          "PAW_TEST_PW")
        assert mine.returncode == 0 and "opens with your passphrase" in mine.stdout
    assert sha256(store_file) == before
    assert sorted(p.name for p in store_file.parent.iterdir()) == ["paw.db"]


def test_verifying_a_backup_copy_leaves_it_byte_for_byte_as_it_was(store_file, tmp_path):
    copy = tmp_path / "copy.db"
    backup(store_file, copy)
    before = sha256(copy)
    assert paw_verify(str(copy)).returncode == 0
    assert sha256(copy) == before  # journal mode DELETE kept: no switch to WAL
    assert not copy.with_name("copy.db-wal").exists()
    assert not copy.with_name("copy.db-shm").exists()


def test_a_tampered_read_only_archive_is_still_caught(store_file):
    import sqlite3

    conn = sqlite3.connect(store_file)
    conn.execute("UPDATE label_events SET time_on_item_ms = 5 WHERE id = 2")
    conn.commit()
    conn.close()
    with read_only(store_file, store_file.parent):
        result = paw_verify(str(store_file))
    assert result.returncode == 1 and "altered" in result.stdout


def test_a_live_wal_store_is_read_with_its_newest_commits_and_not_changed(
        db, audit, people, tmp_path):
    create_set(db, audit.audit_id, 12, per_family=None, name="s", **named(people))
    path = save_to_file(db, tmp_path / "live.db")
    live = open_db(path)  # WAL; kept open so its commits stay in paw.db-wal
    from annotate.trust.people import authenticate
    from tests.annotate.conftest import PASSPHRASE

    alice = authenticate(live, "alice", PASSPHRASE)
    session = start_session(live, alice, "s")
    for view in rater_queue(live, "s", alice)[:3]:
        record_label(live, alice, session, view.code, "validity", "valid")
    assert Path(path + "-wal").stat().st_size > 0
    before = sha256(path)
    reader = open_readonly(path)
    assert reader.execute("SELECT COUNT(*) FROM label_events").fetchone()[0] == 3
    reader.conn.close()
    result = paw_verify(path)
    assert result.returncode == 0 and "3 label events" in result.stdout, result.stdout
    assert sha256(path) == before
    live.conn.close()


def test_pending_wal_commits_in_a_read_only_folder_get_a_clear_message(
        db, audit, people, tmp_path):
    create_set(db, audit.audit_id, 12, per_family=None, name="s", **named(people))
    folder = tmp_path / "mount"
    folder.mkdir()
    path = save_to_file(db, folder / "paw.db")
    live = open_db(path)
    live.execute("INSERT INTO annotation_sessions (person_id, set_id, started_at, app_version) "
                 "VALUES (1, 1, 'x', 'x')")
    live.conn.close()  # closing checkpoints and removes the -wal: recreate one by hand
    writer = open_db(path)
    writer.execute("UPDATE annotation_sessions SET host = 'h'")
    shutil.copy(path + "-wal", tmp_path / "saved-wal")
    shutil.copy(path, tmp_path / "saved-db")
    writer.conn.close()
    for name in ("paw.db", "paw.db-wal", "paw.db-shm"):
        (folder / name).unlink(missing_ok=True)
    shutil.copy(tmp_path / "saved-db", folder / "paw.db")
    shutil.copy(tmp_path / "saved-wal", folder / "paw.db-wal")
    files = [folder / "paw.db", folder / "paw.db-wal", folder]
    with read_only(*files):
        with pytest.raises(UserError, match="newest commits are still in paw.db-wal"):
            open_readonly(folder / "paw.db")


def test_open_readonly_refuses_a_missing_file_and_a_non_database(tmp_path):
    with pytest.raises(UserError, match="no such database"):
        open_readonly(tmp_path / "none.db")
    (tmp_path / "text.db").write_text("hello")
    with pytest.raises(UserError, match="not a SQLite database"):
        open_readonly(tmp_path / "text.db")
