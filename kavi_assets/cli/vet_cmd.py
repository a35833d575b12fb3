"""`kavi vet`: a third party's function (a Python file or an Agent Skills folder) through the forge's own gates."""

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors
from kavi_assets.cli.home_option import HomeOpt, open_home
from kavi_assets.cli.json_output import print_json
from kavi_assets.cli.outcome import EXIT_USAGE, EXIT_VERDICT

console = make_console()


def _usage(message: str) -> None:
    make_console(stderr=True).print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_USAGE)


def _rejected_before_gates(source: Path, reasons: list[str], as_json: bool, stage: str) -> None:
    if as_json:
        print_json({"source": str(source), "status": "REJECTED", "stage": stage, "reasons": reasons})
    else:
        console.print(f"[bold red]REJECTED[/] {escape(source.name)}: {stage}", highlight=False, soft_wrap=True)
        for r in reasons:
            console.print(f"  - {escape(r)}", highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_VERDICT)


def vet(
    source: Annotated[Path, typer.Argument(help="a Python file, or an Agent Skills folder (SKILL.md, scripts/, "
                                                "optionally tests/)")],
    proposal_file: Annotated[Path | None, typer.Option("--proposal", help="the proposal the code must meet "
                                                       "(YAML or JSON): its examples and holdouts judge it")] = None,
    draft: Annotated[bool, typer.Option("--draft", help="print a proposal skeleton drawn from the function's "
                                        "signature and SKILL.md, for a person to complete")] = False,
    home: HomeOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the outcome as JSON")] = False,
) -> None:
    """Vet code someone else wrote: the forge wraps the function in the skill contract with code of its own and runs
    every gate on it (policy, invariants, ruff, mypy, the shipped tests or the examples as tests, acceptance on the
    examples and holdouts, the differential and resource gates, the coach). Exit 0 VERIFIED or TRUSTED, 1 rejected
    (before the gates when the source cannot be fully read), 2 usage."""
    from kavi.vet.source import VetRefused, read_source

    try:
        src = read_source(source)
    except VetRefused as err:
        _rejected_before_gates(source, err.reasons, as_json, "the source cannot be fully read, so no gate ran")
        return
    if draft:
        from kavi.vet.draft import draft_proposal

        try:
            typer.echo(draft_proposal(src), nl=False)
        except ValueError as err:
            _usage(str(err))
        return
    if proposal_file is None:
        _usage("kavi vet needs --proposal FILE (the examples and holdouts it is judged on); "
               "`kavi vet --draft SOURCE` drafts one")
        return
    from kavi.proposals.model import load_proposal
    from kavi.skills.base import SideEffectClass

    proposal = load_proposal(proposal_file)
    if proposal.side_effect_class is not SideEffectClass.READ_ONLY:
        _usage(f"{proposal.name} is {proposal.side_effect_class.value}: kavi vet takes READ_ONLY skills (a plain "
               "function has no handle to the vault, the network or secrets)")
    if any(ex.vault_files or ex.http_responses or ex.secrets
           for ex in (*proposal.examples, *proposal.holdout_examples)):
        _usage(f"{proposal.name}'s examples carry vault, HTTP or secret fixtures: a plain function cannot use them")
    from kavi.vet.contract import contract_problems

    problems = contract_problems(src, proposal)
    if problems:
        _rejected_before_gates(source, problems, as_json, "the function does not have the proposal's shape")
    outcome = _vet(open_home(home), src, proposal, proposal_file)
    if as_json:
        from kavi_assets.cli.outcome import forge_exit_status

        print_json(outcome)
        status = forge_exit_status(outcome)
    else:
        status = _print(outcome, src.code_path)
    if status:
        raise typer.Exit(status)


def _vet(h: Any, src: Any, proposal: Any, proposal_file: Path) -> dict[str, Any]:
    from kavi.forge.context import ForgeContext
    from kavi.forge.intake import intake
    from kavi.forge.vetted import VET_TAG, VetBundle, store_bundle
    from kavi.vet.contract import shipped_tests, tests_from_examples, wrap
    from kavi_assets.cli.dagster_env import add_partition, ensure_dagster_home
    from kavi_assets.cli.forge_run import forge_once
    from kavi_assets.cli.lifecycle_cmd import _no_llm

    ensure_dagster_home(h)
    ctx = ForgeContext.open(h, _no_llm)
    intake(ctx, proposal, str(proposal_file.resolve()), actor="kavi vet")
    add_partition(proposal.name)
    shipped = shipped_tests(src, proposal)
    bundle = VetBundle(proposal.name, wrap(src, proposal), shipped or tests_from_examples(proposal),
                       "third party" if shipped else "examples", src.origin, src.code_path, src.digest_set(),
                       src.digests, src.description, src.skill_md)
    digest = store_bundle(ctx, bundle)
    out = forge_once(h, proposal.name, tags={"kavi/trigger": "vet", VET_TAG: digest}, again=True)
    return {**out, "vetted": {"origin": src.origin, "code_path": src.code_path, "digest_set": bundle.digest_set,
                              "tests_from": bundle.tests_from, "bundle_sha256": digest}}


def _print(out: dict[str, Any], code_path: str) -> int:
    from kavi_assets.cli.outcome import print_forge_outcome

    v = out["vetted"]
    console.print(f"vetting {escape(code_path)} ({v['origin']}, digest set {v['digest_set'][:12]}; tests: "
                  f"{v['tests_from']}) as {escape(out['name'])}", highlight=False, soft_wrap=True)
    if out["status"] not in ("VERIFIED", "TRUSTED") and not out["errors"]:
        console.print("[bold red]REJECTED[/]: the gates found against the third party's code; no model will "
                      "retry it", highlight=False)
    return print_forge_outcome(out["name"], out, console, make_console(stderr=True))


def register(app: typer.Typer) -> None:
    app.command()(cli_errors(vet))
