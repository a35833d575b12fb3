"""`kavi holdout add|list NAME`: a person's right answers, added to a proposal's holdout examples.

`add` takes the input as JSON (`--input`) or from counterexample N of the latest verification (`--counterexample`),
and the right output as JSON (`--expected`). Bad JSON, unknown fields and wrong types are one line and exit 2.
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
holdout_app = typer.Typer(name="holdout", help="Add and list a proposal's holdout examples (the builder never sees "
                                               "them).", no_args_is_help=True)


def _no_llm() -> NoReturn:
    raise RuntimeError("this command does not call a model")


def _ctx(home: str | None) -> "ForgeContext":
    from kavi.forge.context import ForgeContext

    return ForgeContext.open(KaviHome.from_env(home).ensure(), _no_llm)


def add(
    name: Annotated[str, typer.Argument(help="the proposal")],
    expected: Annotated[str, typer.Option("--expected", help="the right output, a JSON object of output fields")],
    by: Annotated[str, typer.Option("--by", help="who adds it (recorded in the ledger)")] = "",
    input_json: Annotated[str | None, typer.Option("--input", help="the input, a JSON object of input fields")] = None,
    counterexample: Annotated[int | None, typer.Option(
        "--counterexample", help="take the input of counterexample N of the latest verification (from 1)")] = None,
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
) -> None:
    """Append a holdout example to NAME and record the new spec (who, when); `kavi forge NAME` then verifies with it."""
    from kavi.forge.holdouts import HoldoutError, add_holdout, counterexample_case, parse_json_object

    if (input_json is None) == (counterexample is None):
        raise HoldoutError("give the input either with --input JSON or with --counterexample N, not both or neither")
    ctx = _ctx(home)
    # A counterexample's holdout runs with the fixtures (vault files, HTTP responses, secrets) it ran with.
    input_data, fixtures = ((parse_json_object(input_json, "--input"), {}) if input_json is not None
                            else counterexample_case(ctx, name, int(counterexample or 0)))
    expected_data = parse_json_object(expected, "--expected")
    proposal, outcome = add_holdout(ctx, name, input_data, expected_data, by or "", fixtures)
    console.print(f"{name}: holdout {len(proposal.holdout_examples)} added by {by.strip()} (revision "
                  f"{outcome.revision}); input {json.dumps(input_data, sort_keys=True)[:200]}", highlight=False,
                  markup=False, soft_wrap=True)
    console.print(f"  the cached independent implementation no longer matches the spec; re-forge: kavi forge {name}",
                  highlight=False, markup=False)


def list_cmd(
    name: Annotated[str, typer.Argument(help="the proposal")],
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
    home: Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")] = None,
) -> None:
    """List NAME's holdout examples and the counterexamples of its latest verification."""
    from kavi.forge.holdouts import counterexamples

    ctx = _ctx(home)
    row = ctx.records.require_proposal(name)
    found = counterexamples(ctx, name)
    if as_json:
        typer.echo(json.dumps({
            "name": name, "revision": row.revision,
            "holdouts": [ex.model_dump(mode="json") for ex in row.proposal.holdout_examples],
            "counterexamples": [{"number": c.number, "input": c.input, "candidate": c.candidate,
                                 "independent": c.independent, "kind": c.kind, "build_id": c.build_id}
                                for c in found],
        }, indent=2, default=str))
        return
    console.print(f"{name} (revision {row.revision}): {len(row.proposal.holdout_examples)} holdout example(s)",
                  highlight=False, markup=False)
    for i, ex in enumerate(row.proposal.holdout_examples, 1):
        console.print(f"  {i}. input {json.dumps(ex.input, sort_keys=True)[:200]} → expected "
                      f"{json.dumps(ex.expected, sort_keys=True)[:200]}", highlight=False, markup=False,
                      soft_wrap=True)
    if found:
        console.print(f"counterexamples of the latest verification ({found[0].build_id}): settle one with "
                      f"kavi holdout add {name} --counterexample N --expected JSON --by WHO", highlight=False,
                      markup=False, soft_wrap=True)
        for c in found:
            console.print(f"  {c.number}. input {json.dumps(c.input, sort_keys=True)[:200]}: candidate "
                          f"{json.dumps(c.candidate, default=str)[:120]}, independent "
                          f"{json.dumps(c.independent, default=str)[:120]}", highlight=False, markup=False,
                          soft_wrap=True)


def register(app: typer.Typer) -> None:
    holdout_app.command("add")(cli_errors(add))
    holdout_app.command("list")(cli_errors(list_cmd))
    app.add_typer(holdout_app)
