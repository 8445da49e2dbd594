"""``skat verify``: untampered runs verify; each kind of tampering is named.

The runs are real ones (``tests/skatbus/fair_runs.py``: the pure engine and the runner's own
``write_results``), built once per module and copied for each test, which then changes one
thing the way someone editing the files would. Where the test re-signs the tampered folder
(as an operator who changed it would), the one problem left is the check under test; without
re-signing the signature names the changed file as well.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import msgspec
import nkeys
import pytest

from protocol import fairness
from protocol.archive import decode_line
from protocol.tournament import NonceGiven, NoncesClosed, SeriesDrawn, TournamentCreated, fold_tournament
from skatbus.cli import main
from skatbus.signing import (
    SigningKeyError,
    check_signature,
    load_or_create_key,
    public_key_of,
    sign_run,
)
from skatbus.tournament_file import TournamentLogError, read_tournament_log, write_tournament_log
from skatbus.verify import LEGACY_NOTE, RunUnreadable, first_difference, verify_run

from .fair_runs import Built, build, skat_legacy, skat_many, skat_swiss, thirty_one_many

RUNS = {
    "skat": (skat_many, ""),
    "swiss": (skat_swiss, ""),
    "legacy": (skat_legacy, "cid"),
    "thirty-one": (thirty_one_many, "p2"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    out = tmp_path_factory.mktemp("runs")
    key = load_or_create_key(out / "keys" / "signing.nk")
    return {name: build(out, make(), key, slow) for name, (make, slow) in RUNS.items()}


@pytest.fixture
def copy(built: dict[str, Built], tmp_path: Path) -> Callable[[str], Path]:
    """A fresh copy of a built run folder, to tamper with."""

    def copied(name: str) -> Path:
        target = tmp_path / name / built[name].folder.name
        shutil.copytree(built[name].folder, target)
        return target

    return copied


def lines_of(folder: Path, name: str) -> list[bytes]:
    return (folder / name).read_bytes().splitlines(keepends=True)


def archived(folder: Path) -> list[tuple[int, str, dict]]:
    """(line number from 0, table, event as JSON) of every archive line."""
    out = []
    for i, line in enumerate(lines_of(folder, "archive.jsonl")):
        entry = decode_line(line)
        out.append((i, entry.table, json.loads(bytes(entry.event))))
    return out


def resign(folder: Path, key: bytes) -> None:
    (folder / "signature.json").unlink()
    sign_run(folder, key)


def edit_json(path: Path, change: Callable[[dict], None]) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def edit_tournament(folder: Path, change: Callable[[list], None]) -> None:
    events = read_tournament_log(folder / "tournament.jsonl")
    change(events)
    write_tournament_log(folder / "tournament.jsonl", events)


# --- untampered ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(RUNS))
def test_an_untampered_run_verifies_and_says_what_it_checked(built: dict[str, Built], name: str) -> None:
    run = built[name]
    found = verify_run(run.folder)
    assert found.problems == []
    state = fold_tournament(run.events)
    dealt = sum(event["type"] in ("deal_dealt/1", "t31_dealt/1") for _, _, event in archived(run.folder))
    assert dealt > 0
    assert (found.tournament, found.tables, found.deals) == (run.config.id, len(state.tables), dealt)
    assert found.key == public_key_of(run.key)
    if run.config.fair:
        assert found.nonces == len(state.nonces) > 0
        assert found.summary() == (
            f"verified: {run.config.id}, {len(state.tables)} tables, {dealt} deals, "
            f"deals from the committed seed and {len(state.nonces)} nonces, signed by {public_key_of(run.key)}"
        )
        assert found.notes == []
    else:
        assert found.notes == [LEGACY_NOTE]
        assert found.summary().startswith(f"verified: {run.config.id}, {len(state.tables)} tables")


def test_the_runs_hold_what_the_checks_must_not_trip_over(built: dict[str, Built]) -> None:
    """Time-outs, a withdrawal, a pause, a table of four, a series drawn when it was due: all
    verified above."""
    for name in ("legacy", "thirty-one"):
        kinds = {event["type"] for _, _, event in archived(built[name].folder)}
        assert {"timed_out/1", "seat_withdrawn/1", "table_paused/1", "table_resumed/1"} <= kinds
    tables = fold_tournament(built["skat"].events).tables
    assert {len(t.players) for t in tables} == {3, 4}
    assert {t.series for t in tables} == {1, 2}
    drawn = [e for e in built["swiss"].events if isinstance(e, SeriesDrawn)]
    assert [d.series for d in drawn] == [2]
    assert {t.table for t in drawn[0].tables} <= {t for _, t, _ in archived(built["swiss"].folder)}


def test_a_results_json_path_names_its_folder(built: dict[str, Built]) -> None:
    assert verify_run(built["skat"].folder / "results.json").ok


# --- a card of one deal changed ------------------------------------------------------------------


def swap_a_card(folder: Path, kind: str) -> tuple[str, int, str]:
    """Swap two cards of one deal of the second table, in its archive line only: a hand with
    one card of the skat (Skat), or the deck's first two cards (Thirty-one). Returns the
    table, the deal and the field that changed."""
    lines = lines_of(folder, "archive.jsonl")
    tables = list(dict.fromkeys(table for _, table, _ in archived(folder)))
    for i, table, event in archived(folder):
        if table != tables[1] or event["type"] != kind or event["deal"] != 2:
            continue
        if kind == "deal_dealt/1":
            old = json.dumps(event["hands"][1], separators=(",", ":"))
            hand, skat = list(event["hands"][1]), list(event["skat"])
            hand[0], skat[0] = skat[0], hand[0]
            new_line = lines[i].replace(old.encode(), json.dumps(hand, separators=(",", ":")).encode(), 1)
            old_skat = json.dumps(event["skat"], separators=(",", ":"))
            new_line = new_line.replace(
                b'"skat":' + old_skat.encode(), b'"skat":' + json.dumps(skat, separators=(",", ":")).encode(), 1
            )
            changed = "hands[1]"
        else:
            old = json.dumps(event["deck"], separators=(",", ":"))
            deck = list(event["deck"])
            deck[0], deck[1] = deck[1], deck[0]
            new_line = lines[i].replace(old.encode(), json.dumps(deck, separators=(",", ":")).encode(), 1)
            changed = "deck"
        assert new_line != lines[i]
        lines[i] = new_line
        (folder / "archive.jsonl").write_bytes(b"".join(lines))
        return table, event["deal"], changed
    raise AssertionError(f"no {kind} of deal 2 at {tables[1]}")


@pytest.mark.parametrize(("name", "kind"), [("skat", "deal_dealt/1"), ("thirty-one", "t31_dealt/1")])
def test_one_card_of_one_deal_changed_is_named(
    built: dict[str, Built], copy: Callable[[str], Path], name: str, kind: str
) -> None:
    folder = copy(name)
    before = lines_of(folder, "archive.jsonl")
    table, deal, changed = swap_a_card(folder, kind)
    after = lines_of(folder, "archive.jsonl")
    assert sum(a != b for a, b in zip(before, after, strict=True)) == 1  # the file otherwise identical
    line = f"table {table}, deal {deal}: {kind.partition('/')[0]} is not what the seed gives ({changed} differs)"

    found = verify_run(folder)
    assert not found.ok
    assert found.problems == [line, "signature: archive.jsonl changed since it was signed"]

    resign(folder, built[name].key)
    assert verify_run(folder).problems == [line]


def test_a_changed_score_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    lines = lines_of(folder, "archive.jsonl")
    i, table, event = next(x for x in archived(folder) if x[2]["type"] == "deal_scored/1")
    scores = event["result"]["scores"]
    old = b'"scores":' + json.dumps(scores, separators=(",", ":")).encode()
    new = b'"scores":' + json.dumps([scores[0] + 30, *scores[1:]], separators=(",", ":")).encode()
    assert old in lines[i]
    lines[i] = lines[i].replace(old, new, 1)
    (folder / "archive.jsonl").write_bytes(b"".join(lines))
    resign(folder, built["skat"].key)
    problems = verify_run(folder).problems
    want = f"table {table}, deal {event['deal']}: deal_scored is not what the rules give (result.scores differs)"
    assert problems[0] == want
    # The sheet as logged now gives other totals than results.json's: said too, with the figures.
    assert any(p.startswith(f"results.json: table {table} totals ") for p in problems)


# --- one result edited -------------------------------------------------------------------------


def test_one_table_result_edited_in_results_json_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    results = json.loads((folder / "results.json").read_text())
    entry = results["tables"][1]
    right = list(entry["totals"])
    wrong = [right[0] + 10, *right[1:]]

    def edit(doc: dict) -> None:
        doc["tables"][1]["totals"] = wrong

    edit_json(folder / "results.json", edit)
    line = f"results.json: table {entry['table']} totals {json.dumps(wrong)} but the archive gives {json.dumps(right)}"
    assert verify_run(folder).problems == [line, "signature: results.json changed since it was signed"]
    resign(folder, built["skat"].key)
    assert verify_run(folder).problems == [line]


@pytest.mark.parametrize(("name", "field"), [("skat", "seeger_fabian"), ("thirty-one", "place_points")])
def test_one_standing_edited_in_results_json_is_named(
    built: dict[str, Built], copy: Callable[[str], Path], name: str, field: str
) -> None:
    folder = copy(name)
    results = json.loads((folder / "results.json").read_text())
    standing = results["standings"][-1]
    right = standing[field]

    def edit(doc: dict) -> None:
        doc["standings"][-1][field] = right + 1

    edit_json(folder / "results.json", edit)
    resign(folder, built[name].key)
    assert verify_run(folder).problems == [
        f"results.json: standings of {standing['player']}: {field} {right + 1} but the archive gives {right}"
    ]


def test_standings_reordered_are_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    results = json.loads((folder / "results.json").read_text())
    first, second = results["standings"][0]["player"], results["standings"][1]["player"]
    edit_json(folder / "results.json", lambda doc: doc["standings"].reverse())
    resign(folder, built["skat"].key)
    problems = verify_run(folder).problems
    assert len(problems) == 1
    assert problems[0].startswith(f"results.json: the standings rank {results['standings'][-1]['player']} 1")
    assert first != second


# --- one table removed ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["skat", "thirty-one"])
def test_one_table_removed_from_the_archive_is_named(
    built: dict[str, Built], copy: Callable[[str], Path], name: str
) -> None:
    folder = copy(name)
    table = fold_tournament(built[name].events).tables[-1].table
    kept = [line for line in lines_of(folder, "archive.jsonl") if decode_line(line).table != table]
    assert len(kept) < len(lines_of(folder, "archive.jsonl"))
    (folder / "archive.jsonl").write_bytes(b"".join(kept))
    resign(folder, built[name].key)
    problems = verify_run(folder).problems
    assert problems[0] == f"table {table} of the schedule is missing from the archive"
    assert f"results.json: a result for table {table}, which the archive does not hold" in problems


def test_a_table_that_is_not_in_the_schedule_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    extra = [
        line.replace(b'"table":"legacy-skat-g0r0"', b'"table":"legacy-skat-g9r0"')
        for line in lines_of(folder, "archive.jsonl")
        if decode_line(line).table == "legacy-skat-g0r0"
    ]
    assert extra
    (folder / "archive.jsonl").write_bytes(b"".join(lines_of(folder, "archive.jsonl") + extra))
    resign(folder, built["legacy"].key)
    assert verify_run(folder).problems == ["table legacy-skat-g9r0 is in the archive but not in the schedule"]


def test_a_missing_event_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    lines = lines_of(folder, "archive.jsonl")
    i = next(i for i, _, event in archived(folder) if event["type"] == "trick_taken/1")
    table = decode_line(lines[i]).table
    del lines[i]
    (folder / "archive.jsonl").write_bytes(b"".join(lines))
    resign(folder, built["skat"].key)
    found = verify_run(folder)
    # one problem, not one per later event of the table (every index after the gap is off by
    # one) nor its replay's "ends before the table closed" nor the standings it makes differ
    assert len(found.problems) == 1, found.problems
    assert found.problems[0].startswith(f"archive.jsonl line {i + 1}: table {table} event ")
    assert found.problems[0].endswith("(events missing or out of order); the table is checked up to there")
    assert any("the standings are not checked against the archive: 1 table(s)" in n for n in found.notes)


# --- the signature -------------------------------------------------------------------------------


def test_an_altered_signature_does_not_verify(copy: Callable[[str], Path]) -> None:
    folder = copy("skat")

    def alter(doc: dict) -> None:
        raw = bytearray(base64.b64decode(doc["signature"]))
        raw[0] ^= 1
        doc["signature"] = base64.b64encode(bytes(raw)).decode()

    edit_json(folder / "signature.json", alter)
    problems = verify_run(folder).problems
    assert len(problems) == 1
    assert problems[0].startswith("signature does not verify")


def test_signed_with_another_key_than_the_expected_one(
    built: dict[str, Built], copy: Callable[[str], Path], tmp_path: Path
) -> None:
    folder = copy("skat")
    other = load_or_create_key(tmp_path / "other.nk")
    right, wrong = public_key_of(built["skat"].key), public_key_of(other)

    def claim(doc: dict) -> None:  # a forger names its own key where results.json names one
        doc["signed_by"] = wrong

    edit_json(folder / "results.json", claim)
    resign(folder, other)
    assert right != wrong
    assert verify_run(folder, expect_key=right).problems == [f"signature: signed by {wrong}, not by {right} (--key)"]
    anyone = verify_run(folder)  # without --key: a good signature, by the key it names
    assert anyone.ok and anyone.key == wrong and anyone.summary().endswith(f"signed by {wrong}")


def test_an_unsigned_run_is_not_verified(copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    (folder / "signature.json").unlink()
    assert verify_run(folder).problems == ["signature: no signature.json: the run is not signed"]


def test_a_signed_file_that_is_gone_is_named(copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    (folder / "standings.csv").unlink()
    assert check_signature(folder) == ["signature: standings.csv is missing (it was signed)"]


def test_a_signature_with_a_file_taken_off_its_list_does_not_verify(copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    edit_json(folder / "signature.json", lambda doc: doc["files"].pop("standings.csv"))
    assert check_signature(folder) == [
        f"signature does not verify: signature.json is not what key {json.loads((folder / 'signature.json').read_text())['key']} signed",
        "signature: standings.csv is not signed",
    ]


def test_a_signature_naming_a_file_outside_the_folder_is_refused(copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    edit_json(folder / "signature.json", lambda doc: doc["files"].update({"../secret": "00"}))
    problems = check_signature(folder)
    assert problems == ['signature: signature.json names a file outside the run folder: "../secret"']


# --- the seed and the commitment -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["skat", "thirty-one"])
def test_a_seed_that_does_not_match_the_commitment_is_named(
    built: dict[str, Built], copy: Callable[[str], Path], name: str
) -> None:
    folder = copy(name)
    other = fairness.new_server_seed()

    def in_log(events: list) -> None:
        created = events[0]
        assert isinstance(created, TournamentCreated)
        events[0] = msgspec.structs.replace(created, config=msgspec.structs.replace(created.config, seed=other))

    def in_results(doc: dict) -> None:
        doc["config"]["seed"] = other
        doc["fairness"]["seed"] = other

    edit_tournament(folder, in_log)
    edit_json(folder / "results.json", in_results)
    resign(folder, built[name].key)
    problems = verify_run(folder).problems
    assert problems[0] == (
        f"seed does not match the commitment: the revealed seed hashes to {fairness.commitment(other)}, "
        f"the tournament committed to {built[name].config.commitment}"
    )
    # And every table was dealt from another seed than this one gives.
    for spec in fold_tournament(built[name].events).tables:
        assert (
            f"table {spec.table}: opened with a seed that is not the one the committed seed and the nonces give"
            in problems
        )


def test_a_revealed_seed_other_than_the_logged_one_is_named(
    built: dict[str, Built], copy: Callable[[str], Path]
) -> None:
    folder = copy("skat")
    edit_json(folder / "results.json", lambda doc: doc["fairness"].update(seed=fairness.new_server_seed()))
    resign(folder, built["skat"].key)
    assert verify_run(folder).problems == ["results.json: fairness seed is not the tournament log's"]


def test_a_nonce_changed_after_the_close_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")

    def change(events: list) -> None:
        i, closed = next((i, e) for i, e in enumerate(events) if isinstance(e, NoncesClosed))
        player = sorted(closed.nonces)[0]
        events[i] = NoncesClosed(nonces={**closed.nonces, player: "f" * 32}, digest=closed.digest)

    edit_tournament(folder, change)
    resign(folder, built["skat"].key)
    problems = verify_run(folder).problems
    assert "tournament.jsonl: nonces_closed's digest is not the digest of its nonces" in problems
    assert any(p.endswith("'s closed nonce is not the one it gave first") for p in problems)


def test_a_legacy_run_notes_that_there_is_no_commitment(built: dict[str, Built]) -> None:
    found = verify_run(built["legacy"].folder)
    assert found.ok and found.notes == [LEGACY_NOTE] and found.fair == 0


def test_a_legacy_table_opened_with_another_seed_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    lines = lines_of(folder, "archive.jsonl")
    spec = fold_tournament(built["legacy"].events).tables[0]
    i = next(i for i, table, event in archived(folder) if table == spec.table and event["type"] == "table_opened/1")
    lines[i] = lines[i].replace(f'"seed":"{spec.seed}"'.encode(), b'"seed":"chosen"', 1)
    (folder / "archive.jsonl").write_bytes(b"".join(lines))
    resign(folder, built["legacy"].key)
    problems = verify_run(folder).problems
    assert problems[0] == f"table {spec.table}: opened with a seed that is not the one the schedule gives"
    assert problems[1] == f"table {spec.table}, deal 1: deal_dealt is not what the seed gives (hands[0] differs)"


# --- files that cannot be read -------------------------------------------------------------------


def test_a_broken_tournament_log_line_is_named_by_its_number(copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    lines = lines_of(folder, "tournament.jsonl")
    lines[1] = b'{"type":"nonce_given/1","player":7}\n'
    (folder / "tournament.jsonl").write_bytes(b"".join(lines))
    with pytest.raises(TournamentLogError, match=r"^tournament\.jsonl line 2: "):
        read_tournament_log(folder / "tournament.jsonl")
    problems = verify_run(folder).problems
    assert problems[0].startswith("tournament.jsonl line 2: not a tournament event")
    assert "signature: tournament.jsonl changed since it was signed" in problems


def test_a_broken_archive_line_is_named_by_its_number(copy: Callable[[str], Path]) -> None:
    folder = copy("legacy")
    lines = lines_of(folder, "archive.jsonl")
    lines[5] = b'{"table": "x", "index": 0, "event": {"type": "deal_dealt/1"}}\n'
    (folder / "archive.jsonl").write_bytes(b"".join(lines))
    problems = verify_run(folder).problems
    assert problems[0].startswith("archive.jsonl line 6: not an archived event")


def test_a_folder_that_is_no_run_is_unreadable(tmp_path: Path, copy: Callable[[str], Path]) -> None:
    with pytest.raises(RunUnreadable, match="no such folder"):
        verify_run(tmp_path / "nothing")
    folder = copy("legacy")
    (folder / "tournament.jsonl").unlink()
    with pytest.raises(RunUnreadable, match="no tournament.jsonl"):
        verify_run(folder)


def test_the_tournament_log_file_round_trips(built: dict[str, Built], tmp_path: Path) -> None:
    events = built["skat"].events
    write_tournament_log(tmp_path / "t.jsonl", events)
    assert read_tournament_log(tmp_path / "t.jsonl") == events
    assert len(lines_of(tmp_path, "t.jsonl")) == len(events)


def test_first_difference_names_the_field() -> None:
    assert first_difference({"a": 1, "b": [[1, 2], [3, 4]]}, {"a": 1, "b": [[1, 2], [3, 5]]}) == "b[1]"
    assert first_difference({"r": {"s": [1, 2]}}, {"r": {"s": [1, 3]}}) == "r.s"
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "b"
    assert first_difference({"a": True}, {"a": 1}) == "a"
    assert first_difference({"a": [1]}, {"a": [1]}) is None


# --- the signing key -----------------------------------------------------------------------------


def test_a_new_signing_key_is_private_and_is_reused(tmp_path: Path) -> None:
    path = tmp_path / "out" / "signing.nk"
    seed = load_or_create_key(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert load_or_create_key(path) == seed
    pair = nkeys.from_seed(bytearray(seed))
    assert public_key_of(seed) == bytes(pair.public_key).decode()
    assert public_key_of(seed).startswith("U")


def test_a_creds_style_seed_file_is_read(tmp_path: Path) -> None:
    seed = load_or_create_key(tmp_path / "a.nk")
    creds = tmp_path / "b.creds"
    creds.write_bytes(b"-----BEGIN USER NKEY SEED-----\n" + seed + b"\n------END USER NKEY SEED------\n")
    assert load_or_create_key(creds) == seed


@pytest.mark.parametrize("content", [b"", b"hello world\n", b"SUAAAA\n", b'{"user": "x", "password": "y"}\n'])
def test_a_file_that_is_no_seed_is_one_clear_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "key.nk"
    path.write_bytes(content)
    with pytest.raises(SigningKeyError) as caught:
        load_or_create_key(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and "\n" not in message and "NKey seed" in message


# --- the command line --------------------------------------------------------------------------


def test_cli_says_verified_and_exits_0(built: dict[str, Built], capsys: pytest.CaptureFixture[str]) -> None:
    run = built["skat"]
    assert main(["verify", str(run.folder), "--key", public_key_of(run.key)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [verify_run(run.folder).summary()]
    assert out[0].startswith(f"verified: {run.config.id}, ")


def test_cli_notes_legacy_deals(built: dict[str, Built], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(built["legacy"].folder / "results.json")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"note: {LEGACY_NOTE}" and out[1].startswith("verified: legacy-skat, ")


def test_cli_lists_the_problems_and_exits_1(copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy("skat")
    table, deal, changed = swap_a_card(folder, "deal_dealt/1")
    assert main(["verify", str(folder)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"NOT verified: {len(out) - 1} problems"
    assert out[0] == f"table {table}, deal {deal}: deal_dealt is not what the seed gives ({changed} differs)"


def test_cli_json(copy: Callable[[str], Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = copy("legacy")
    (folder / "signature.json").unlink()
    assert main(["verify", str(folder), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verified"] is False
    assert doc["problems"] == ["signature: no signature.json: the run is not signed"]
    assert doc["summary"] == "NOT verified: 1 problem"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["verify", "/nonexistent/run"], "no such folder"),
        (["verify", "."], "no results.json"),
        (["verify", "RUN", "--key", "UNOTAKEY"], "--key: "),
    ],
)
def test_cli_exits_2_with_one_line_for_what_it_cannot_read(
    built: dict[str, Built], capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], says: str
) -> None:
    args = [str(built["skat"].folder) if a == "RUN" else str(tmp_path) if a == "." else a for a in args]
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err.splitlines()
    assert len(err) == 1 and err[0].startswith("skat verify: ") and says in err[0]


# --- a tournament of many entrants: series, crosstable, seating -----------------------------------


def test_an_edited_crosstable_or_series_standing_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    results = json.loads((folder / "results.json").read_text())
    player = next(iter(results["crosstable"]))
    opponent = next(iter(results["crosstable"][player]))
    margin = results["crosstable"][player][opponent]["margin"]
    points = results["series"][1]["standings"][0]["seeger_fabian"]

    def edit(doc: dict) -> None:
        doc["crosstable"][player][opponent]["margin"] = margin + 1
        doc["series"][1]["standings"][0]["seeger_fabian"] = points - 3

    edit_json(folder / "results.json", edit)
    resign(folder, built["skat"].key)
    assert verify_run(folder).problems == [
        f"results.json: series[1].standings[0].seeger_fabian {points - 3} but the archive gives {points}",
        f"results.json: crosstable.{player}.{opponent}.margin {json.dumps(margin + 1)} but the archive gives "
        f"{json.dumps(margin)}",
    ]


def test_an_edited_seating_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")
    edit_json(folder / "results.json", lambda doc: doc["schedule"]["series"][0][0].reverse())
    resign(folder, built["skat"].key)
    assert verify_run(folder).problems == [
        "results.json: schedule.series[0][0] is not the seating of the tournament's log"
    ]


def test_a_weak_revealed_seed_is_noted(tmp_path: Path) -> None:
    weak = msgspec.structs.replace(skat_many(), seed="league-2026", commitment=fairness.commitment("league-2026"))
    run = build(tmp_path, weak, load_or_create_key(tmp_path / "k.nk"))
    found = verify_run(run.folder)
    assert found.ok
    assert len(found.notes) == 1 and found.notes[0].startswith("the revealed seed may be weak (")


def test_an_entrant_checks_the_commitment_and_the_nonce_it_recorded(
    built: dict[str, Built], copy: Callable[[str], Path]
) -> None:
    folder = copy("skat")
    config = built["skat"].config
    given = [e for e in built["skat"].events if isinstance(e, NonceGiven)]
    assert given, "the built run has nonces"
    player, nonce = given[0].player, given[0].nonce
    assert verify_run(folder, expect_commitment=config.commitment, expect_nonces={player: nonce}).ok
    other = "0" * 64
    problems = verify_run(folder, expect_commitment=other, expect_nonces={player: "ab" * 16}).problems
    assert problems == [
        f"commitment: the run's is {config.commitment}, not the {other} you recorded",
        f"nonce of {player}: the deals were made from {nonce}, not the {'ab' * 16} you gave",
    ]
    assert verify_run(folder, expect_nonces={"nobody": nonce}).problems == [
        "nonce of nobody: not among the nonces the deals were made from"
    ]


def test_a_group_the_rules_do_not_draw_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    """A table's group is an input of its seed: an operator who could choose it after the nonces
    closed could try groups until the deals suited it. The schedule must be the one the
    configuration draws."""
    folder = copy("skat")

    def regroup(events: list) -> None:
        created = events[0]
        tables = [msgspec.structs.replace(t, group=7) if t.series == 1 else t for t in created.tables]
        events[0] = msgspec.structs.replace(created, tables=tables)

    edit_tournament(folder, regroup)
    resign(folder, built["skat"].key)
    problems = verify_run(folder).problems
    assert problems[0] == "tournament.jsonl: the schedule is not the one its configuration draws (tables[0].group)"


def test_a_nonce_in_a_built_in_bots_name_is_named(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    """The operator's own bots give no nonces: one in a bot's name is a nonce the operator chose
    after seeing the entrants'."""
    folder = copy("skat")
    bot = next(iter(built["skat"].config.bots))

    def add_nonce(events: list) -> None:
        at = next(i for i, e in enumerate(events) if isinstance(e, NoncesClosed))
        nonces = {**events[at].nonces, bot: "cd" * 16}
        events[at : at + 1] = [
            NonceGiven(player=bot, nonce="cd" * 16),
            NoncesClosed(nonces=nonces, digest=fairness.nonces_digest(nonces)),
        ]

    edit_tournament(folder, add_nonce)
    resign(folder, built["skat"].key)
    problems = verify_run(folder).problems
    assert f"tournament.jsonl: a nonce of {bot}, a built-in bot (only remote entrants give nonces)" in problems


def test_crafted_files_are_problems_not_tracebacks(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    folder = copy("skat")

    def odd(doc: dict) -> None:
        doc["standings"][0]["player"] = ["not", "a", "name"]

    edit_json(folder / "results.json", odd)
    assert not verify_run(folder).ok
    (folder / "results.json").write_text("[" * 100_000 + "]" * 100_000)
    assert not verify_run(folder).ok
    lines = lines_of(folder, "tournament.jsonl")
    created = json.loads(lines[0])
    created["config"]["series"] = 1_000_000_000  # a schedule no one could play: refused, not drawn
    lines[0] = (json.dumps(created) + "\n").encode()
    (folder / "tournament.jsonl").write_bytes(b"".join(lines))
    problems = verify_run(folder).problems
    assert any(p.startswith("tournament.jsonl line 1") for p in problems), problems


def _retyped(folder: Path, table: str, index: int, tag: str) -> None:
    """The archive with ``table``'s event ``index`` written as ``tag`` (``table_opened/9``)."""
    out = []
    for line in lines_of(folder, "archive.jsonl"):
        entry = json.loads(line)
        if entry["table"] == table and entry["index"] == index:
            entry["event"]["type"] = tag
            line = json.dumps(entry).encode() + b"\n"
        out.append(line)
    (folder / "archive.jsonl").write_bytes(b"".join(out))


def test_a_newer_table_opened_is_named_as_such(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    """Not "its log does not start with table_opened": a newer skatbus wrote it. The table is
    one problem, and the standings it would make differ are not checked (a note)."""
    folder = copy("skat")
    table = archived(folder)[0][1]
    _retyped(folder, table, 0, "table_opened/9")
    resign(folder, built["skat"].key)
    found = verify_run(folder)
    assert found.problems == [
        f"table {table}, event 0: table_opened/9 was written by a newer skatbus (this one reads "
        "table_opened/1..2); upgrade to read it"
    ]
    assert any("the standings are not checked against the archive: 1 table(s)" in n for n in found.notes)


def test_one_garbage_line_is_one_problem(built: dict[str, Built], copy: Callable[[str], Path]) -> None:
    """A line inserted in the middle of a table (here an event of no known type, with an index
    of its own) puts every later index of that table out of sequence: one problem, not one per line."""
    folder = copy("skat")
    lines = lines_of(folder, "archive.jsonl")
    i, table, _ = archived(folder)[20]
    index = decode_line(lines[i]).index
    garbage = json.dumps({"table": table, "index": index, "event": {"type": "foo_bar/1"}}).encode() + b"\n"
    (folder / "archive.jsonl").write_bytes(b"".join([*lines[:i], garbage, *lines[i:]]))
    resign(folder, built["skat"].key)
    problems = verify_run(folder).problems
    assert len([p for p in problems if table in p]) == 1, problems
    assert problems == [p for p in problems if table in p]  # no standings problems either
