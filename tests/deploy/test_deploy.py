"""The deployment files agree with each other and with the code, checked without containers.

- Each cluster node's configuration is accepted by the real nats-server (``-t``: parse, exit).
- Server names are distinct; every node routes to every other node's cluster port.
- deploy/compose.yaml runs those nodes under those names and ports, one service per entry of
  ``services.main.SERVICES``, each given all three nodes and ``SKAT_REPLICAS=3``.
- The Kubernetes files (Helm values, Deployments) say the same for the chart's names.
- The users part of ``skat auth``'s configuration can be included into the nodes as documented.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.main import SERVICES
from services.natsserver import binary_path
from services.runtime import STOP_GRACE

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
CLUSTER = DEPLOY / "cluster"
NODE_FILES = sorted(CLUSTER.glob("n[0-9]*.conf"))


# --- a reader for the subset of nats-server's configuration format these files use ----------


def parse_conf(path: Path) -> dict[str, Any]:
    """Maps, arrays, scalars, ``#`` comments and ``include`` (relative to the including file).

    Only to read the files' structure; whether nats-server accepts them is checked by
    nats-server itself (``-t``)."""
    return _Parser(path).parse_map(top=True)


_TOKEN = re.compile(r'\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|[{}\[\],]|[:=]|[^\s{}\[\],:=#"]+(?::[^\s{}\[\],#"]+)*')


class _Parser:
    def __init__(self, path: Path) -> None:
        self.path = path
        text = path.read_text(encoding="utf-8")
        self.tokens = [t for t in _TOKEN.findall(text) if t.strip() and not t.startswith("#")]
        self.i = 0

    def next(self) -> str:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def peek(self) -> str | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def parse_map(self, top: bool = False) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while True:
            token = self.peek()
            if token is None:
                assert top, f"{self.path}: unclosed block"
                return result
            if token == "}":
                assert not top, f"{self.path}: stray }}"
                self.next()
                return result
            if token == ",":
                self.next()
                continue
            key = self.next().strip('"')
            if key == "include":
                result.update(parse_conf(self.path.parent / self.next().strip('"')))
                continue
            if self.peek() in (":", "="):
                self.next()
            result[key] = self.parse_value()

    def parse_value(self) -> Any:
        token = self.next()
        if token == "{":
            return self.parse_map()
        if token == "[":
            items = []
            while self.peek() != "]":
                if self.peek() == ",":
                    self.next()
                    continue
                items.append(self.parse_value())
            self.next()
            return items
        return token.strip('"')


def host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    return host, int(port)


def route_host_port(route: str) -> tuple[str, int]:
    match = re.fullmatch(r"nats-route://(?:[^@/]+@)?([^:/]+):(\d+)/?", route)
    assert match, f"not a route URL: {route}"
    return match.group(1), int(match.group(2))


@pytest.fixture(scope="module")
def nodes() -> dict[str, dict[str, Any]]:
    """Each node file's configuration, by its server_name."""
    assert [p.name for p in NODE_FILES] == ["n1.conf", "n2.conf", "n3.conf"]
    parsed = {}
    for path in NODE_FILES:
        conf = parse_conf(path)
        assert conf["server_name"] == path.stem, f"{path.name} names itself {conf['server_name']}"
        parsed[conf["server_name"]] = conf
    return parsed


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def client_urls(nodes: dict[str, dict[str, Any]], host: Any = None) -> str:
    """The comma-joined --nats list for the nodes, each by its host name (its server name)."""
    return ",".join(
        f"nats://{host(name) if host else name}:{host_port(conf['listen'])[1]}" for name, conf in nodes.items()
    )


# --- the node configurations -----------------------------------------------------------------


@pytest.mark.parametrize("path", NODE_FILES, ids=lambda p: p.name)
def test_node_config_is_accepted_by_nats_server(path: Path, tmp_path: Path) -> None:
    env = {**os.environ, "SKAT_STORE_DIR": str(tmp_path / "store")}
    done = subprocess.run([binary_path(), "-c", str(path), "-t"], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is valid" in done.stdout + done.stderr


def test_node_config_needs_the_store_dir(tmp_path: Path) -> None:
    """Without SKAT_STORE_DIR a node refuses to start instead of keeping its log somewhere else."""
    env = {k: v for k, v in os.environ.items() if k != "SKAT_STORE_DIR"}
    done = subprocess.run(
        [binary_path(), "-c", str(NODE_FILES[0]), "-t"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode != 0 and "SKAT_STORE_DIR" in done.stdout + done.stderr


def test_server_names_are_distinct_and_one_cluster(nodes: dict[str, dict[str, Any]]) -> None:
    assert sorted(nodes) == ["n1", "n2", "n3"]
    assert {conf["cluster"]["name"] for conf in nodes.values()} == {"skatbus"}
    for conf in nodes.values():
        assert conf["jetstream"]["store_dir"] == "$SKAT_STORE_DIR"
        assert {"listen", "http"} <= set(conf)


def test_every_node_routes_to_every_other_node(nodes: dict[str, dict[str, Any]]) -> None:
    for name, conf in nodes.items():
        routes = {route_host_port(r) for r in conf["cluster"]["routes"]}
        others = {(other, host_port(c["cluster"]["listen"])[1]) for other, c in nodes.items() if other != name}
        assert routes == others, f"{name} routes to {routes}, the other nodes are {others}"


def test_placeholders_parse_when_enabled(tmp_path: Path) -> None:
    """The commented auth include and route authorization are valid once uncommented, with the
    users part of a real ``skat auth`` configuration in auth.conf."""
    from services.auth import write_auth

    auth_dir = tmp_path / "auth"
    write_auth(auth_dir, ["ann", "bob", "cyd"])
    generated = (auth_dir / "nats-server.conf").read_text(encoding="utf-8")
    users_part = _without_keys(generated, {"listen", "port", "max_payload", "jetstream", "tls", "http"})
    assert "accounts" in users_part or "authorization" in users_part, generated

    work = tmp_path / "cluster"
    work.mkdir()
    (work / "auth.conf").write_text(users_part, encoding="utf-8")
    common = (CLUSTER / "common.conf").read_text(encoding="utf-8")
    assert "\n# include ./auth.conf\n" in common
    (work / "common.conf").write_text(common.replace("\n# include ./auth.conf\n", "\ninclude ./auth.conf\n"))
    node = (CLUSTER / "n1.conf").read_text(encoding="utf-8")
    enabled = re.sub(
        r"    # authorization \{\n    #     user: route\n    #     password: \$SKAT_ROUTE_PASSWORD\n    # \}\n",
        "    authorization {\n        user: route\n        password: $SKAT_ROUTE_PASSWORD\n    }\n",
        node,
    )
    assert enabled != node, "the route authorization placeholder in n1.conf changed"
    (work / "n1.conf").write_text(enabled, encoding="utf-8")
    env = {**os.environ, "SKAT_STORE_DIR": str(tmp_path / "store"), "SKAT_ROUTE_PASSWORD": "secret"}
    done = subprocess.run(
        [binary_path(), "-c", str(work / "n1.conf"), "-t"], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _without_keys(conf: str, keys: set[str]) -> str:
    """``conf`` without the top-level entries named ``keys`` (a block runs to its closing brace)."""
    out: list[str] = []
    depth = 0
    skipping = False
    for line in conf.splitlines(keepends=True):
        if depth == 0:
            key = re.match(r"\s*([A-Za-z_$][\w$]*)", line)
            skipping = bool(key and key.group(1) in keys)
        depth += line.count("{") - line.count("}")
        if not skipping:
            out.append(line)
    return "".join(out)


# --- compose.yaml ----------------------------------------------------------------------------


def test_compose_runs_each_node_with_its_file(compose: dict[str, Any], nodes: dict[str, dict[str, Any]]) -> None:
    services = compose["services"]
    for name, conf in nodes.items():
        node = services[name]  # the route host names are the compose service names
        assert node.get("hostname", name) == name
        assert node["entrypoint"] == ["nats-server"]
        assert node["command"] == ["-c", f"/etc/skatbus/cluster/{name}.conf"]
        assert "./cluster:/etc/skatbus/cluster:ro" in node["volumes"]
        assert any(v.endswith(":/data") for v in node["volumes"]) and node["environment"]["SKAT_STORE_DIR"] == "/data"
        published = {int(p.rsplit(":", 1)[1]) for p in node.get("ports", [])}
        assert published <= {host_port(conf["listen"])[1], host_port(conf["http"])[1]}, published
    # The nodes' files are mounted from deploy/cluster, next to compose.yaml.
    assert (DEPLOY / "cluster" / "common.conf").is_file()


def test_compose_has_every_service_on_all_nodes_with_three_replicas(
    compose: dict[str, Any], nodes: dict[str, dict[str, Any]]
) -> None:
    services = compose["services"]
    assert set(services) == set(nodes) | set(SERVICES), "compose.yaml runs exactly the nodes and the services"
    urls = client_urls(nodes)
    assert urls == "nats://n1:4222,nats://n2:4222,nats://n3:4222"
    for name in SERVICES:
        service = services[name]
        assert service["command"] == ["service", name, "--nats", urls]
        assert str(service["environment"]["SKAT_REPLICAS"]) == "3"
        assert set(service["depends_on"]) == set(nodes)
        assert service["image"] == services["n1"]["image"]


def test_compose_builds_the_image_from_the_containerfile(compose: dict[str, Any]) -> None:
    for name, service in compose["services"].items():
        build = service["build"]
        context = (DEPLOY / build["context"]).resolve()
        assert context == ROOT, name
        assert (context / build["dockerfile"]) == DEPLOY / "Containerfile"
    text = (DEPLOY / "Containerfile").read_text(encoding="utf-8")
    assert re.search(r"^FROM python:3\.11-slim$", text, re.M)
    assert re.search(r'^ENTRYPOINT \["skat"\]$', text, re.M)
    assert re.search(r"pip install .*\.", text)
    copied = set(re.findall(r"^COPY (\S+) ", text, re.M))
    assert {"protocol", "services"} <= copied  # the packages pyproject.toml installs
    ignore = (DEPLOY / "Containerfile.dockerignore").read_text(encoding="utf-8").split()
    for needed in ("!pyproject.toml", "!README.md", "!protocol/", "!services/"):
        assert needed in ignore


def test_cluster_env_file_matches(nodes: dict[str, dict[str, Any]]) -> None:
    env = dict(
        line.split("=", 1)
        for line in (CLUSTER / "skatbus.env").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    )
    assert env["SKAT_NATS_URL"] == client_urls(nodes)
    assert env["SKAT_REPLICAS"] == "3"


# --- Kubernetes --------------------------------------------------------------------------------


def test_helm_values_make_a_replicated_jetstream_cluster() -> None:
    values = yaml.safe_load((DEPLOY / "k8s" / "nats-values.yaml").read_text(encoding="utf-8"))
    config = values["config"]
    assert config["cluster"]["enabled"] is True and config["cluster"]["replicas"] == 3
    assert config["jetstream"]["enabled"] is True
    store = config["jetstream"]["fileStore"]
    assert store["enabled"] is True and store["pvc"]["enabled"] is True
    # Each node holds a full copy of the 1 GiB SKAT stream.
    assert int(re.fullmatch(r"(\d+)Gi", store["pvc"]["size"]).group(1)) >= 2  # type: ignore[union-attr]


def test_kubernetes_deployments_match_the_services_and_the_chart() -> None:
    values = yaml.safe_load((DEPLOY / "k8s" / "nats-values.yaml").read_text(encoding="utf-8"))
    replicas = values["config"]["cluster"]["replicas"]
    # Helm release `nats`: pods nats-0.. behind the headless service nats-headless, port 4222.
    urls = ",".join(f"nats://nats-{i}.nats-headless:4222" for i in range(replicas))
    docs = [d for d in yaml.safe_load_all((DEPLOY / "k8s" / "skatbus.yaml").read_text(encoding="utf-8")) if d]
    by_component = {}
    for doc in docs:
        assert doc["kind"] == "Deployment"
        by_component[doc["metadata"]["labels"]["app.kubernetes.io/component"]] = doc
    assert set(by_component) == set(SERVICES)
    for name, doc in by_component.items():
        spec = doc["spec"]
        assert spec["selector"]["matchLabels"] == spec["template"]["metadata"]["labels"]
        (container,) = spec["template"]["spec"]["containers"]
        assert container["args"] == ["service", name, "--nats", urls]
        env = {e["name"]: e["value"] for e in container["env"]}
        assert env["SKAT_REPLICAS"] == "3"
        # A stopping instance finishes its moves (up to STOP_GRACE) and hands its partitions over
        # before Kubernetes would kill it.
        assert spec["template"]["spec"]["terminationGracePeriodSeconds"] > STOP_GRACE
    # Every service may run several replicas now, views too (partitioned ownership): no
    # Deployment needs the Recreate strategy any more.
    assert all("strategy" not in doc["spec"] for doc in by_component.values())
