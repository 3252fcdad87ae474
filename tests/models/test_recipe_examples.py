"""The multi-GPU recipe's examples (docs/examples/, issue 37.6), checked by parsing them and,
where a llama-server binary exists, by running the SLURM script on this machine.

- SLURM: `bash -n` accepts it; it starts one llama-server per GPU in CUDA_VISIBLE_DEVICES
  with the flags `paw serve` uses (one slot, flash attention off, 512-token batches),
  waits for /health, and prints `PAW_SERVERS=URL,URL`.
- Kubernetes: a headless Service (clusterIP None) over a StatefulSet whose pods carry the
  same flags and a /health readiness probe; the PAW_SERVERS line in its comment names one
  URL per pod (`<set>-<i>.<service>:<port>`), never the Service's balanced address.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
SLURM = EXAMPLES / "slurm-llama-servers.sbatch"
K8S = EXAMPLES / "k8s-llama-servers.yaml"

PAW_FLAGS = {"-np": "1", "-b": "512", "-ub": "512", "-fa": "off"}
"""What `paw serve` passes (`workbench.models.llama_server.server_command`) and the
examples must pass too, so their rows are keyed and computed as `paw serve`'s."""


def _flags(args: list[str]) -> dict[str, str]:
    return {a: b for a, b in zip(args, args[1:], strict=False) if a.startswith("-")}


def test_paw_serve_s_own_flags_are_the_ones_the_examples_pin() -> None:
    from workbench.models.llama_server import server_command

    mine = _flags(server_command("llama-server", "m.gguf", host="h", port=1, threads=1,
                                 ctx=4096, parallel=1, gpu_layers=0, extra_buffers=True))
    assert {k: mine[k] for k in PAW_FLAGS} == PAW_FLAGS


def test_the_slurm_script_parses_and_starts_one_server_per_gpu() -> None:
    bash = shutil.which("bash")
    assert bash is not None
    checked = subprocess.run([bash, "-n", str(SLURM)], capture_output=True, text=True,
                             check=False)
    assert checked.returncode == 0, checked.stderr
    text = SLURM.read_text(encoding="utf-8")
    directives = dict(re.findall(r"^#SBATCH --([a-z-]+)=(\S+)", text, re.MULTILINE))
    assert directives["gres"].startswith("gpu:") and directives["nodes"] == "1"
    launch = re.search(r'"\$LLAMA_SERVER" (.*?)\\\n(.*?)\\\n', text, re.DOTALL)
    assert launch is not None
    args = (launch.group(1) + " " + launch.group(2)).split()
    assert {k: _flags(args)[k] for k in PAW_FLAGS} == PAW_FLAGS
    assert 'for gpu in ${GPUS//,/ }' in text and 'CUDA_VISIBLE_DEVICES="$gpu"' in text
    assert "/health" in text and 'echo "PAW_SERVERS=${list}"' in text


def test_the_kubernetes_example_is_a_headless_service_with_one_url_per_pod() -> None:
    yaml = pytest.importorskip("yaml")
    docs = list(yaml.safe_load_all(K8S.read_text(encoding="utf-8")))
    service = next(d for d in docs if d["kind"] == "Service")
    pods = next(d for d in docs if d["kind"] == "StatefulSet")
    assert service["spec"]["clusterIP"] == "None"  # headless: DNS names per pod
    assert pods["spec"]["serviceName"] == service["metadata"]["name"]
    labels = pods["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    container = pods["spec"]["template"]["spec"]["containers"][0]
    assert {k: _flags(container["args"])[k] for k in PAW_FLAGS} == PAW_FLAGS
    assert container["readinessProbe"]["httpGet"]["path"] == "/health"
    port = service["spec"]["ports"][0]["port"]
    name, svc = pods["metadata"]["name"], service["metadata"]["name"]
    wanted = ",".join(f"http://{name}-{i}.{svc}:{port}"
                      for i in range(pods["spec"]["replicas"]))
    assert f"PAW_SERVERS={wanted}" in K8S.read_text(encoding="utf-8")


@pytest.mark.model
def test_the_slurm_script_runs_here_and_its_urls_form_a_pool(tmp_path) -> None:
    from store import open_db
    from tests.models.servers import llama_server_or_skip
    from workbench.models import default_model
    from workbench.models.pool import free_port
    from workbench.models.server import ServerPoolBackend

    if shutil.which("curl") is None:
        pytest.skip("the SLURM script waits with curl, which this machine lacks")
    binary = llama_server_or_skip()
    model = default_model(open_db(memory=True))
    base = free_port()
    env = {**os.environ, "PAW_LLAMA_SERVER": binary, "CUDA_VISIBLE_DEVICES": "0,1",
           "PAW_BASE_PORT": str(base), "PAW_CTX": "1024", "SLURM_JOB_ID": "test"}
    script = subprocess.Popen(["bash", str(SLURM), model.path], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        line = script.stdout.readline().strip()  # printed once every server is ready
        assert line.startswith("PAW_SERVERS="), line
        urls = line.split("=", 1)[1].split(",")
        assert len(urls) == 2 and urls[0].endswith(f":{base}")
        backend = ServerPoolBackend(model, urls)
        assert backend.serial and len(backend.infos) == 2
        backend.close()
    finally:
        os.killpg(script.pid, 15)
        script.wait(timeout=30)
