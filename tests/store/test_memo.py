"""The JSON memo helper (`store/memo.py`) that the store's integrity memo and the model-file
hash memo both write through."""

from __future__ import annotations

from store.memo import read_json_memo, write_json_memo


def test_a_memo_is_written_whole_and_read_back(tmp_path):
    path = tmp_path / "state" / "memo.json"  # the folder is made on first write
    assert read_json_memo(path) == {}
    assert write_json_memo(path, {"b": [1, "x"], "a": 2})
    assert read_json_memo(path) == {"a": 2, "b": [1, "x"]}
    assert write_json_memo(path, {"c": 3})  # replaced, not merged
    assert read_json_memo(path) == {"c": 3}
    assert sorted(p.name for p in path.parent.iterdir()) == ["memo.json"]  # no partial left


def test_an_unreadable_or_foreign_memo_counts_as_empty(tmp_path):
    path = tmp_path / "memo.json"
    path.write_text("[1, 2]", encoding="utf-8")  # JSON, but not an object
    assert read_json_memo(path) == {}
    path.write_text('{"a": ', encoding="utf-8")  # cut short
    assert read_json_memo(path) == {}


def test_a_memo_that_cannot_be_written_is_skipped(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    path = blocker / "memo.json"  # its folder is a file
    assert write_json_memo(path, {"a": 1}) is False
    assert read_json_memo(path) == {}
