"""No split generation (issue 36.3): two real llama-servers behind one round-robin URL.

`tests/models/proxy.py` forwards each request to the next server in turn, as a Kubernetes
Service or an nginx `upstream` would. Before, the answer read of a generation went to the
other server (probabilities differed by up to 0.023 under the same key and the `serial`
tag). Now the URL is refused before any work, with a line saying to list the hosts; the
same two servers listed one by one run, with the same rows as one server alone.
"""

from __future__ import annotations

import pytest

from store import open_db
from store.errors import UserError
from store.generations import get_generations
from tests.models.proxy import Proxy
from tests.models.servers import demo_requests, llama_server_or_skip
from workbench.datasets.demo import import_demo
from workbench.models import Runner, default_model
from workbench.models.pool import start_pool
from workbench.models.server import PoolSettings, ServerPoolBackend

pytestmark = pytest.mark.model


def _rows(urls: tuple[str, ...]) -> dict[tuple, tuple]:
    db = open_db(memory=True)
    import_demo(db)
    model = default_model(db)
    backend = ServerPoolBackend(model, PoolSettings(urls, concurrency=1))
    summary = Runner(db, model, backend=backend).run(demo_requests(db, 3, 24))
    assert summary.errors == 0
    return {(g.item_id, g.mode): (g.key, g.output_token_ids, g.option_probs)
            for g in get_generations(db, summary.keys).values()}


def test_a_round_robin_url_is_refused_and_its_hosts_listed_run_identically(tmp_path) -> None:
    binary = llama_server_or_skip()
    model = default_model(open_db(memory=True))
    with start_pool(model.path, 2, engine="llama-server", threads=1, binary=binary,
                    log_dir=tmp_path) as pair, Proxy(pair.urls) as balancer:
        with pytest.raises(UserError, match="different server processes.*list the servers "
                                            "behind it in --servers"):
            ServerPoolBackend(model, PoolSettings((balancer.url,), concurrency=1))
        assert {target for _, _, target in balancer.hits} == set(pair.urls)  # it balanced
        listed = _rows(tuple(pair.urls))
        alone = _rows((pair.urls[0],))
    assert listed == alone  # keys, output ids and distributions, bit for bit
