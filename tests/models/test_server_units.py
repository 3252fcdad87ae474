"""Fast checks of the pool's pure parts: model matching, sampler neutrality, keys, options."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from store.errors import UserError
from workbench.models.endpoint import ServerInfo
from workbench.models.server import pool_tag
from workbench.models.server_settings import LLAMA_SERVER_PINNED, check_neutral

SHA = "ab12cd34ef56" + "0" * 52


def _info(**fields) -> ServerInfo:
    base = {"url": "http://h:1", "kind": "llama-server", "build": "b1-abc",
            "model_file": None, "model_ids": ()}
    return ServerInfo(**{**base, **fields})


def test_a_model_is_matched_by_file_name_or_explicitly_by_name_or_hash() -> None:
    assert _info(model_file="m.gguf").serves("m.gguf", "default", SHA)
    assert _info(model_ids=("/models/m.gguf",)).serves("m.gguf", "default", SHA)
    assert _info(model_ids=("default",)).serves("m.gguf", "default", SHA)  # alias = name
    assert _info(model_ids=("ab12cd34ef56",)).serves("m.gguf", "default", SHA)  # 12 hex
    assert not _info(model_ids=("ab12cd",)).serves("m.gguf", "default", SHA)  # too short
    assert not _info(model_ids=("gpt-4",)).serves("m.gguf", "default", SHA)
    assert not _info(model_file="other.gguf").serves("m.gguf", "default", SHA)


def test_defaults_a_request_cannot_clear_or_paw_does_not_know_are_refused() -> None:
    pinned = {name: value for name, value in LLAMA_SERVER_PINNED.items()}
    check_neutral(_info(defaults={**pinned, "dry_multiplier": 0.8, "stop": [],
                                  "speculative.types": "none"}))  # pinned per request
    with pytest.raises(UserError, match="stop = \\['Answer'\\].*--reverse-prompt"):
        check_neutral(_info(defaults={"stop": ["Answer"]}))
    with pytest.raises(UserError, match="grammar"):
        check_neutral(_info(defaults={"grammar": "root ::= \"A\""}))
    with pytest.raises(UserError, match="new_sampler_knob = 0.3 is one PAW does not know"):
        check_neutral(_info(defaults={"new_sampler_knob": 0.3}))


def test_the_key_tag_names_kind_build_and_slot_mode() -> None:
    assert pool_tag(_info(), 1) == "llama-server b1-abc serial"
    assert pool_tag(_info(), 4) == "llama-server b1-abc shared"


def test_a_bad_server_header_is_one_clear_line(tmp_path) -> None:
    from workbench.cli import cli

    db = tmp_path / "paw.db"
    runner = CliRunner()
    assert runner.invoke(cli, ["demo", "--import-only", "--db", str(db)]).exit_code == 0
    result = runner.invoke(cli, ["run", "--dataset", "demo", "--limit", "1", "--db", str(db),
                                 "--servers", "http://127.0.0.1:9", "--server-header", "nocolon"])
    assert result.exit_code != 0
    assert "--server-header: 'nocolon' is not 'Name: value'" in str(result.exception or "") + \
        result.output


def test_a_pool_url_that_is_not_a_url_is_one_clear_line() -> None:
    from store import open_db
    from workbench.models import default_model
    from workbench.models.server import ServerPoolBackend

    model = default_model(open_db(memory=True))
    for bad in ("notaurl", "ftp://h:1", "http://"):
        with pytest.raises(UserError, match="is not a server URL"):
            ServerPoolBackend(model, [bad])


def test_paw_serve_s_llama_server_command_line() -> None:
    from workbench.models.llama_server import server_command

    command = server_command("llama-server", "m.gguf", host="127.0.0.1", port=8081,
                             threads=2, ctx=4096, parallel=4, gpu_layers=0,
                             extra_buffers=False, api_key="k")
    flags = dict(zip(command[1::2], command[2::2]))
    assert flags["-c"] == "16384" and flags["-np"] == "4"  # per-slot context = -c / -np
    assert flags["-fa"] == "off" and flags["-b"] == flags["-ub"] == "512"  # as in-process
    assert "--no-repack" in command  # CPUs that report AMX (extra buffers off)
    assert command[-2:] == ["--api-key", "k"]
    assert "--no-repack" not in server_command(
        "llama-server", "m.gguf", host="h", port=1, threads=1, ctx=512, parallel=1,
        gpu_layers=0, extra_buffers=True)
