"""Every plausible mistake on the ``skat`` command line is one line on stderr and exit code 2,
never a traceback, and is found before anything is started or created."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from skatbus.cli import _guarded, main

from .localrun import make_run

CONFIGS = {
    "syntax.toml": "rounds = = 3\n",
    "type.toml": 'rounds = "twelve"\n',
    "bool.toml": "kontra = 3\n",
    "choice.toml": 'profile = "skat-club"\n',
    "unknown.toml": "roundz = 3\n",
    "syntax.json": '{"rounds": 3,',
}
"""--config files, each wrong in its own way."""

MISTAKES: dict[str, tuple[list[str], str]] = {
    # name: (arguments, what the one line must say)
    "four seats, three bots": (["tournament", "--players", "4", "--bots", "heuristic,random,random"], "--players 3"),
    "negative rounds": (["tournament", "--rounds", "-1"], "--rounds must be at least 1"),
    "no rounds": (["run", "--rounds", "0"], "--rounds must be at least 1"),
    "no groups": (["tournament", "--groups", "0"], "--groups must be at least 1"),
    "no time to move": (["tournament", "--turn-seconds", "0"], "--turn-seconds"),
    "nothing to resume": (["tournament", "--resume", "nosuch"], "no tournament store"),
    "a bad id to resume": (["tournament", "--resume", "bad id!"], "--resume"),
    "missing config": (["tournament", "--config", "{tmp}/missing.toml"], "missing.toml: no such file"),
    "config is a directory": (["tournament", "--config", "{tmp}"], "is a directory"),
    "config syntax": (["tournament", "--config", "{tmp}/syntax.toml"], "syntax.toml: not valid TOML"),
    "config json syntax": (["tournament", "--config", "{tmp}/syntax.json"], "syntax.json: not valid JSON"),
    "config wrong type": (["tournament", "--config", "{tmp}/type.toml"], "rounds = 'twelve': want a whole number"),
    "config wrong bool": (["tournament", "--config", "{tmp}/bool.toml"], "kontra = 3: want true or false"),
    "config wrong choice": (["tournament", "--config", "{tmp}/choice.toml"], "want one of isko, classic"),
    "config unknown option": (["tournament", "--config", "{tmp}/unknown.toml"], "unknown option 'roundz'"),
    "unknown bot": (["bot", "foo", "--player", "ann"], "unknown bot 'foo'"),
    "bad player id": (["bot", "random", "--player", "bad id!"], "--player"),
    "five entrants at Skat": (
        ["tournament", "--bots", "heuristic,random,random,random,random"],
        "5 entrants cannot sit at Skat tables of 3 and 4",
    ),
    "series without enough entrants": (["tournament", "--series", "2", "--bots", "heuristic,random"], "at least 3"),
    "bad --series": (["tournament", "--series", "0"], "--series must be from 1"),
    "--human naming a stranger": (["tournament", "--remote", "ann", "--human", "bob"], "not a --remote player"),
    "an empty --seed": (["tournament", "--seed", ""], "--seed must not be empty"),
    "skat local without tables": (["local", "--tables", "0"], "--tables and --rounds must be at least 1"),
    "skat local with an empty seed": (["local", "--seed", ""], "--seed must not be empty"),
    "unknown bot in --bots": (["tournament", "--bots", "heuristic,random,rnadom"], "unknown bot 'rnadom'"),
    "remote and bots overfill": (
        ["tournament", "--remote", "ann", "--remote", "bob", "--bots", "heuristic,random,random"],
        "5 entrants cannot sit",
    ),
    "too many remotes": (
        ["tournament", "--remote", "a", "--remote", "b", "--remote", "c", "--remote", "d"],
        "do not fit",
    ),
    "remote twice": (["tournament", "--remote", "ann", "--remote", "ann", "--bots", "random"], "given twice"),
    "remote bad id": (["tournament", "--remote", "a.b"], "--remote 'a.b'"),
    "remote bad format": (["tournament", "--remote", "ann:xml"], "json or msgpack"),
    "bad tournament id": (["tournament", "--id", "t*"], "--id"),
    "creds without a server": (["tournament", "--creds", "{tmp}/ann.nk"], "need a server"),
    "missing archive for --html": (["replay", "{tmp}/nosuch.jsonl", "--html", "{tmp}/x.html"], "nosuch.jsonl"),
    "html into a missing directory": (
        ["replay", "{run}/archive.jsonl", "--html", "/nonexistent/x.html"],
        "/nonexistent",
    ),
    "iss check of a missing file": (["iss", "check", "{tmp}/missing.sgf"], "missing.sgf"),
    "iss check of a directory": (["iss", "check", "{tmp}"], "directory"),
    "a guessable seed with a remote player": (
        ["tournament", "--remote", "ann", "--seed", "league-2026"],
        "carry 128 bits",
    ),
    "a short hex seed with a remote player": (
        ["tournament", "--remote", "ann", "--seed", "0123abcd"],
        'python -c "import secrets; print(secrets.token_hex(16))"',
    ),
    "a repetitive seed with people": (
        ["tournament", "--remote", "ann", "--human", "--seed", "League2026" * 4],
        "repeats 'League2026'",
    ),
    "a passphrase seed with a remote player": (
        ["tournament", "--remote", "ann", "--seed", "my-secret-seed-for-the-spring-league"],
        "upper- and lower-case",
    ),
    "a remote player named as a built-in bot": (["tournament", "--remote", "heuristic"], "built-in bot 'heuristic'"),
    "a remote player named as a second built-in bot": (
        ["tournament", "--remote", "Random-2", "--bots", "random,random"],
        "built-in bot 'random'",
    ),
    "negative max-timeouts": (["tournament", "--max-timeouts", "-1"], "--max-timeouts must be 0"),
    "--out is a file": (["tournament", "--out", "{tmp}/syntax.toml"], "--out {tmp}/syntax.toml: is a file"),
    "--out under a file": (["run", "--out", "{tmp}/syntax.toml/runs"], "not a directory"),
    "iss export under a file": (
        ["iss", "export", "{run}/archive.jsonl", "--out", "{tmp}/syntax.toml/x.sgf"],
        "--out {tmp}/syntax.toml/x.sgf: not a directory",
    ),
    "iss export onto a full disk": (["iss", "export", "{run}/archive.jsonl", "--out", "/dev/full"], "no space"),
    "iss import into a file": (["iss", "import", "{tmp}/syntax.toml", "--out", "{tmp}/syntax.json"], "is a file"),
    "pause a bad id": (["pause", "bad id!"], "must be 1-64"),
    "resume a bad id": (["resume", "t*"], "must be 1-64"),
    "pause with a long reason": (["pause", "t-1", "--reason", "x" * 201], "at most 200 characters"),
}


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("mistakes")
    for name, text in CONFIGS.items():
        (tmp / name).write_text(text)
    run = make_run(tmp / "runs", rounds=1, groups=1)
    return {"tmp": str(tmp), "run": str(run)}


@pytest.mark.parametrize("case", list(MISTAKES))
def test_a_mistake_is_one_line_and_exit_code_2(
    case: str, places: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(places["tmp"])  # the default --out (runs/) is then the temporary one
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    argv, says = MISTAKES[case]
    code = main([a.format(**places) for a in argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"skat {argv[0]}"), lines[0]
    assert says.format(**places).lower() in lines[0].lower(), lines[0]


def test_a_mistaken_tournament_creates_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused before a server, a store or a results directory exists."""
    monkeypatch.delenv("SKAT_NATS_URL", raising=False)
    for argv in (["--groups", "0"], ["--rounds", "0"], ["--bots", "random,random"], ["--remote", "random-3"],
                 ["--remote", "ann", "--seed", "weak"], ["--max-timeouts", "-2"]):  # fmt: skip
        assert main(["tournament", *argv, "--out", str(tmp_path / "runs")]) == 2
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError(2, "No such file or directory", "/nowhere/x.sgf"),
        IsADirectoryError(21, "Is a directory", "/tmp"),
        NotADirectoryError(20, "Not a directory", "/etc/passwd/x"),
        PermissionError(13, "Permission denied", "/root/x.html"),
    ],
)
def test_main_turns_a_file_problem_of_any_command_into_one_line(
    error: OSError, capsys: pytest.CaptureFixture[str]
) -> None:
    """The net under every command, whoever wrote it: a handler that meets a missing file, a
    directory or a forbidden one needs no handling of its own to end with one line."""

    def handler() -> int:
        raise error

    assert _guarded(argparse.Namespace(command="iss check"), handler) == 2
    err = capsys.readouterr().err
    assert err == f"skat iss check: {error.filename}: {error.strerror.lower()}\n"


def test_a_bug_keeps_its_traceback() -> None:
    def handler() -> int:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        _guarded(argparse.Namespace(command="x"), handler)


def test_every_option_has_help() -> None:
    """``skat COMMAND --help`` explains every flag of the commands this module owns."""
    import skatbus.cli as cli

    parsers: dict[str, argparse.ArgumentParser] = {}
    original = argparse.ArgumentParser.parse_args

    def capture(self: argparse.ArgumentParser, *args: object, **kwargs: object) -> object:
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.update(action.choices)
        raise SystemExit(0)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign,assignment]
    try:
        with pytest.raises(SystemExit):
            cli.main(["schema"])
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    missing = [
        f"skat {name} {'/'.join(action.option_strings) or action.dest}"
        for name in ("run", "tournament", "local", "service", "up", "bot", "auth")
        for action in parsers[name]._actions
        if not action.help and not isinstance(action, argparse._HelpAction)
    ]
    assert missing == []
