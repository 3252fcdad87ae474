"""Measure (issue 36.1): the identity fingerprint's |Δp| for the genuine file and for two
other models served under its very file name, on llama_cpp.server (and llama-server where
a binary exists), against `workbench.models.identity.FLOOR`.

- genuine: the embedded SmolLM2 file;
- tiny: a one-layer model under SmolLM2's tokenizer (tests/models/tiny_gguf.py);
- edited: SmolLM2 with its final norm's weights halved (same vocabulary, parameter count
  and size: only the fingerprint can tell it).

    PYTHONPATH=. .venv/bin/python bench/server_identity.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from store import open_db
from tests.models.test_server_identity import _renamed_edited, _renamed_tiny
from workbench.models import default_model
from workbench.models.identity import FLOOR, PROBE_TEXT, fingerprint_gap, local_facts
from workbench.models.llama_server import find_llama_server
from workbench.models.pool import start_pool
from workbench.models.server import ServerPoolBackend


def main() -> None:
    model = default_model(open_db(memory=True))
    real = Path(model.path)
    facts = local_facts(model)
    folder = Path(tempfile.mkdtemp(prefix="paw-identity-"))
    files = {"genuine": real, "tiny": _renamed_tiny(folder / "tiny", real),
             "edited": _renamed_edited(folder / "edited", real)}
    engines = ["python"] + (["llama-server"] if find_llama_server() else [])
    print(f"floor {FLOOR}; local top token p={facts.top[0][1]:.4f} after {PROBE_TEXT!r}")
    print(f"{'engine':14}{'file':10}{'max |Δp|':>10}  verdict")
    with start_pool(model.path, 1, engine="python", threads=1) as helper_pool:
        helper = ServerPoolBackend(model, helper_pool.urls)  # a vocabulary and a client
        for engine in engines:
            for name, path in files.items():
                with start_pool(str(path), 1, engine=engine, threads=1) as pool:
                    url = pool.urls[0]
                    if engine == "python":
                        reply = helper.complete(url, {"prompt": PROBE_TEXT, "max_tokens": 1,
                                                      "temperature": 0.0, "logprobs": 20,
                                                      "logit_bias": helper.no_eog_map})
                        first = reply.tops[0] if reply.tops else ()  # none: it stopped
                        top = {t: c.logprob for c in first
                               if (t := helper.candidate_id(c)) is not None}
                    else:
                        answer = helper.http.post(url + "/completion", {
                            "prompt": list(facts.prompt_ids), "n_predict": 1, "n_probs": 20,
                            "temperature": 0.0, "cache_prompt": False,
                            "logit_bias": helper.no_eog_list})
                        top = {int(p["id"]): float(p["logprob"]) for p in
                               answer["completion_probabilities"][0]["top_logprobs"]}
                gap, _ = fingerprint_gap(top, facts)
                verdict = "accepted" if gap <= FLOOR else "refused"
                print(f"{engine:14}{name:10}{gap:10.2e}  {verdict}")
        helper.close()


if __name__ == "__main__":
    main()
