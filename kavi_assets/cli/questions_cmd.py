"""`kavi questions NAME` and `kavi answer NAME N`: what the evidence leaves open about a skill, and a person's answer.

`answer` takes the right output as JSON (`--expected`, recorded as a holdout; with `--input`, for the person's own
input when the question asks for one whose answer differs) or `--outside` (the input is not the skill's to answer).
Bad JSON, unknown fields, wrong types and a question that does not exist are one line and exit 2.
"""

import json
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

if TYPE_CHECKING:
    from kavi.forge.context import ForgeContext

console = make_console()


def _no_llm() -> NoReturn:
    raise RuntimeError("this command does not call a model")


def _ctx(home: str | None) -> "ForgeContext":
    from kavi.forge.context import ForgeContext

    return ForgeContext.open(KaviHome.from_env(home).ensure(), _no_llm)


def _say(text: str) -> None:
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def questions_cmd(
    name: Annotated[str, typer.Argument(help="the proposal")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
) -> None:
    """List the questions NAME's latest verification leaves open: inputs where the skill and a variant of it that
    passes every check answer differently, or where the skill raises."""
    from kavi.forge.levels import proposal_ceremony
    from kavi.forge.questions import questions

    ctx = _ctx(home)
    row = ctx.records.require_proposal(name)
    found = questions(ctx, name)
    level = proposal_ceremony(ctx.records, name, row.proposal).level.value
    if as_json:
        typer.echo(json.dumps({"name": name, "revision": row.revision, "ceremony": level,
                               "questions": [q.to_dict() for q in found]}, indent=2, default=str))
        return
    still = [q for q in found if not q.answered]
    if not found:
        _say(f"{name}: no open question (the latest verification's evidence decides every variant it tried)")
        return
    _say(f"{name}: {len(still)} open question(s) of {len(found)} from build {found[0].build_id} (ceremony {level})")
    for q in found:
        _say(f"  {q.number}. {'[answered] ' if q.answered else ''}{q.ask()}")
        for m in q.mutants[:3]:
            _say(f"       variant: {m}")
    if still:
        _say(f"answer one: kavi answer {name} N --expected JSON --by WHO   (or --outside: not the skill's to "
             "answer)")
        if any(q.kind == "uniform" for q in still):
            _say(f"  a question asking for an input whose answer differs: kavi answer {name} N --input JSON "
                 "--expected JSON --by WHO")


def answer_cmd(
    name: Annotated[str, typer.Argument(help="the proposal")],
    number: Annotated[int, typer.Argument(help="the question's number (kavi questions NAME)")],
    expected: Annotated[str | None, typer.Option("--expected", help="the right output, a JSON object of output "
                                                                      "fields (recorded as a holdout)")] = None,
    input_json: Annotated[str | None, typer.Option("--input", help="your own input, a JSON object, for a question "
                                                                     "that asks for an input whose answer differs "
                                                                     "(kind uniform)")] = None,
    outside: Annotated[bool, typer.Option("--outside", help="the input is outside the skill's domain")] = False,
    by: Annotated[str, typer.Option("--by", help="who answers (recorded in the ledger)")] = "",
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
) -> None:
    """Answer question N of NAME: the right output becomes a holdout (or the input is declared outside the domain),
    as a new revision of the spec; `kavi forge NAME` then verifies with it."""
    from kavi.forge.holdouts import HoldoutError, parse_json_object
    from kavi.forge.questions import answer, declare_outside

    if (expected is None) == (not outside):
        raise HoldoutError("answer either with --expected JSON or with --outside, not both or neither")
    if input_json is not None and outside:
        raise HoldoutError("--input goes with --expected: the right output for your input")
    ctx = _ctx(home)
    if outside:
        _question, _proposal, outcome = declare_outside(ctx, name, number, by or "")
        _say(f"{name}: question {number} answered by {by.strip()}: outside the skill's domain (revision "
             f"{outcome.revision})")
    else:
        expected_data = parse_json_object(str(expected), "--expected")
        input_data = parse_json_object(input_json, "--input") if input_json is not None else None
        _question, proposal, outcome = answer(ctx, name, number, expected_data, by or "", input_data)
        _say(f"{name}: question {number} answered by {by.strip()} as holdout {len(proposal.holdout_examples)} "
             f"(revision {outcome.revision})")
    _say(f"  re-forge to judge the skill on it: kavi forge {name}")


def register(app: typer.Typer) -> None:
    app.command("questions")(cli_errors(questions_cmd))
    app.command("answer")(cli_errors(answer_cmd))
