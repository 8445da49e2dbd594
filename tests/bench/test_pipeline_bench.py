"""``python -m bench pipeline`` says what each figure is: the stack's share of the raw ceiling
as a percentage, latencies as multiples of the raw request/reply p50, messages in and out of
the server per stored event (nats-server's own counters, read on its monitoring port) and, with
``--instances``, conflicts and redeliveries per 1,000 events. No speed is asserted here."""

from __future__ import annotations

import re

import pytest

from bench import Row, format_rows, pipeline, times
from bench import __main__ as cli
from services.natsserver import EmbeddedServer


def test_an_embedded_server_has_no_monitoring_port_unless_asked() -> None:
    server = EmbeddedServer()
    assert server.monitor_port is None
    assert "-m" not in server.command()
    with pytest.raises(ValueError):
        server.monitor_url  # noqa: B018


def test_an_embedded_server_answers_varz_on_its_monitoring_port() -> None:
    with EmbeddedServer(monitor_port=0) as server:
        assert server.monitor_port
        assert server.monitor_url == f"http://127.0.0.1:{server.monitor_port}"
        varz = server.monitor("varz")
        assert varz["port"] == server.port and varz["http_port"] == server.monitor_port
        assert isinstance(varz["in_msgs"], int) and isinstance(varz["out_msgs"], int)
        assert server.monitor("jsz")["config"]["store_dir"]


def test_a_row_with_a_ratio_must_say_what_it_is_relative_to() -> None:
    with pytest.raises(ValueError, match="relative to"):
        format_rows("t", [Row("r", 2.0, "x/s", relative=0.5)])
    table = format_rows("t", [Row("r", 2.0, "x/s", relative=0.5, vs=times(0.5, "calm p50"))])
    assert "x baseline" not in table and "0.500x calm p50" in table
    assert "target" not in table.splitlines()[1]  # a column no row fills is left out


def _figure(output: str, name: str) -> tuple[float, str]:
    """The number after a metric's name, and the rest of its line."""
    lines = [l for l in output.splitlines() if l.strip().startswith(name)]
    assert lines, f"no {name!r} in\n{output}"
    line = lines[0]
    rest = line.strip()[len(name) :]
    number = re.match(r"\s+([\d,.]+|nan)", rest)
    assert number, line
    return float(number.group(1).replace(",", "")), rest


def test_the_pipeline_section_with_two_instances_of_each_service(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tiny = {
        "publishes": 512,
        "round_trips": 40,
        "paced": 5,
        "solo_rounds": 1,
        "solo_samples": 1,
        "tables": 2,
        "rounds": 1,
        "skeleton_steps": 20,
    }
    monkeypatch.setattr(pipeline, "_sizes", lambda opts: tiny)
    assert cli.main(["pipeline", "--quick", "--instances", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 processes per service" in out and "x baseline" not in out

    _, stack = _figure(out, "stack deals/s")
    assert re.search(r"= [\d.]+ % of the raw ceiling \(goal >= 15\.0 %\)", stack), stack
    # A/B/A/B: the skeleton floor right before each stack run, its drift, the stack's share of it.
    _, skel3 = _figure(out, "skeleton stored events/s, run 3 of 4")
    assert re.search(r"baseline drift [+-][\d.]+ % from run 1", skel3) and "40 events at 2 tables" in skel3
    for run, floor in ((2, 1), (4, 3)):
        _, line = _figure(out, f"stack stored events/s, run {run} of 4")
        assert re.search(rf"= [\d.]+ % of skeleton run {floor}", line), line
    share, line = _figure(out, pipeline.SHARE_LABEL)
    assert 0 < share and "% " in line and "goal >= 70.0 % (issue 22)" in line
    _, raw = _figure(out, "raw acked JetStream publishes, 128 in flight, guard headers")
    assert "of the unguarded" in raw
    for q, goal in (("p50", 3), ("p99", 10)):
        _, latency = _figure(out, f"command -> next prompt {q}, one table alone")
        assert re.search(rf"[\d.]+x raw request/reply p50 \(goal <= {goal}x\)", latency), latency
    for name in ("median at the deal boundary", "p99 within a deal"):
        _, line = _figure(out, f"command -> next prompt {name}, one table alone")
        assert re.search(r"[\d.]+x raw request/reply p50", line) and " samples" in line, line
    _, raw99 = _figure(out, "raw request/reply p99")
    assert "x raw request/reply p50" in raw99
    idle, after_idle = _figure(out, "raw request/reply p50, each after 20 ms idle")
    assert idle > 0 and "x raw request/reply p50" in after_idle and "5 round trips" in after_idle

    into, line = _figure(out, "messages into the server per stored event")
    out_of, _ = _figure(out, "messages out of the server per stored event")
    # Every stored event is at least one publish in, and reaches at least one consumer.
    assert 1 <= into < 100 and 1 <= out_of < 100
    assert "goal <= 3.3" in line

    _, conflicts = _figure(out, "conflicts per 1,000 stored events")
    assert "health answers of 10 of 10 service processes" in conflicts
    _, redeliveries = _figure(out, "redeliveries per 1,000 stored events")
    assert "consumers of stream SKAT" in redeliveries
    if "not measured" not in conflicts:  # services whose health answers count their conflicts
        _, faults = _figure(out, "conflicts + redeliveries per 1,000 stored events")
        assert "goal <= 1" in faults

    total, cpu = _figure(out, "CPU us per stored event, all processes")
    assert total > 0 and "goal <= 400 us" in cpu and "the skeleton's" in cpu
    served, _ = _figure(out, "CPU us per stored event, services + server")
    assert 0 < served <= total
    _, skel_cpu = _figure(out, "skeleton CPU us per stored event, all processes")  # 10 ms ticks: may read 0
    assert "responder + server, without the players" in skel_cpu
    for name in ("dealer", "bidding", "play", "scoring", "views"):
        assert f"{name} (2 processes)" in out
