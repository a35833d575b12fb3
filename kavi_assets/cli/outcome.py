"""How the CLI tells a person what an attempt came to: one verdict line, which gates failed and with what first
message, where the research note is, what to do next, and the exit status that goes with it."""

from typing import Any

from rich.console import Console
from rich.markup import escape

from kavi.home import KaviHome

# The exit statuses every command follows (documented in `kavi --help`).
EXIT_OK = 0
EXIT_VERDICT = 1  # a verdict against what was asked: an attempt that did not verify, a failed run or check, a crash
EXIT_USAGE = 2  # a usage or configuration error, printed as one line on stderr
EXIT_ENVIRONMENT = 3  # the environment failed (a full disk, the ledger file, the model endpoint), not the verdict

EXIT_STATUS_HELP = (
    "Exit status: 0 done (for forge and retry: the attempt VERIFIED or is TRUSTED); 1 a verdict against it (an "
    "attempt FAILED, ESCALATED or GATE_VIOLATION, a skill run that failed, a check or audit that found a problem) "
    "or a step that crashed; 2 a usage error (a bad argument or option, an input that does not match the skill's "
    "schema, a refused run, a missing proposal, a bad KAVI_* setting or no model endpoint for the proposal); 3 the "
    "environment failed, not the verdict (a full disk, an unreadable or corrupt ledger, the model endpoint down, a "
    "gate tool missing). "
    "Results go to stdout, errors and usage errors to stderr. `kavi forge --json` puts the attempt's outcome in "
    "the document (status, failure_kind, errors) and exits with the same status as without --json; `kavi forge "
    "--all --json` exits 1 when any attempt's verdict is against it."
)

_PASSING = ("VERIFIED", "TRUSTED")
_SHOWN_MESSAGES = 1  # per failed gate; `kavi lineage NAME` shows up to five, the research note all of them
_NOT_CONFIGURED = "LLM_NOT_CONFIGURED"
_ENDPOINT = "ENDPOINT_UNAVAILABLE"


def verdict_text(out: dict[str, Any]) -> str:
    """`→ STATUS (KIND)`, without repeating a failure kind that is the status itself (GATE_VIOLATION)."""
    status, kind = str(out["status"]), out.get("failure_kind")
    return status + (f" ({kind})" if kind and kind != status else "")


def research_details(records: Any, home: KaviHome, name: str, build: Any) -> dict[str, Any]:
    """The attempt's research note as the CLI shows it: its file, failed gates with their first messages,
    allowlist violations and escalation triggers (empty when the attempt did not fail)."""
    from kavi.ledger.artifacts import ArtifactStore

    note = next((n for n in reversed(records.research_notes(name)) if n["build_id"] == build.build_id), None)
    if note is None:
        return {"research_note": None, "failed_gates": [], "gate_messages": {}, "violations": [], "triggers": []}
    facts = note["facts"] or {}
    gates = facts.get("gates") or {}
    return {
        "research_note": str(ArtifactStore(home.artifacts_dir).path_for(note["note_sha256"])),
        "failed_gates": sorted(facts.get("failed_gates") or gates),
        "gate_messages": {g: [info.get("reason", ""), *info.get("messages", [])[:_SHOWN_MESSAGES]]
                          for g, info in sorted(gates.items())},
        "violations": list(facts.get("violations") or []),
        "triggers": list(note["triggers"] or []),
        "error": facts.get("error"),
        "outage": facts.get("outage"),
    }


def forge_exit_status(out: dict[str, Any]) -> int:
    """The exit status of one attempt's outcome (see EXIT_STATUS_HELP): what print_forge_outcome returns."""
    from kavi.infrastructure import is_disk_full

    if out["errors"]:
        return EXIT_ENVIRONMENT if any(is_disk_full(str(e)) for e in out["errors"]) else EXIT_VERDICT
    if out["infrastructure"] or (out.get("failure_kind") == _ENDPOINT and out.get("outage")):
        return EXIT_ENVIRONMENT
    if out["status"] in _PASSING:
        return EXIT_OK
    return EXIT_USAGE if out.get("failure_kind") == _NOT_CONFIGURED else EXIT_VERDICT


def print_forge_outcome(name: str, out: dict[str, Any], console: Console, err: Console) -> int:
    """The outcome of one attempt as a person reads it; returns the exit status (see EXIT_STATUS_HELP)."""
    from kavi.infrastructure import DISK_FULL_FIX, is_disk_full

    code = forge_exit_status(out)  # what each branch below ends with

    if any(is_disk_full(str(e)) for e in out["errors"]):
        # A step met a full disk: the environment, said once in the words every door uses (the attempt it left
        # open was closed by forge_once).
        err.print(f"[red]error:[/] the disk is full: {escape(DISK_FULL_FIX)} (run {str(out['run_id'])[:8]}; not the "
                  "model's failure)", highlight=False, soft_wrap=True)
        return code
    for e in out["errors"]:
        err.print(f"[red]error:[/] {escape(str(e))}", highlight=False, soft_wrap=True)
    if out["errors"]:
        return code
    colour = {"TRUSTED": "green", "VERIFIED": "green", "FAILED": "yellow"}.get(out["status"], "red")
    console.print(f"{name}: attempt {out['attempt']} ({escape(str(out['model']))}) → "
                  f"[{colour}]{escape(verdict_text(out))}[/]  run {out['run_id'][:8]}", highlight=False,
                  soft_wrap=True)
    if out.get("trusted_version"):
        console.print(f"  {name}@{out['trusted_version']} is the trusted version `kavi run {name}` runs",
                      highlight=False, soft_wrap=True)
    if out["infrastructure"]:
        if is_disk_full(str(out["infrastructure"])):  # one wording for a full disk, whichever writer met it
            err.print(f"[red]error:[/] the disk is full: {escape(DISK_FULL_FIX)}. Not the model's failure: attempt "
                      f"{out['attempt']} is closed as INFRASTRUCTURE and nothing was charged to "
                      f"{escape(str(out['model']))}", highlight=False, soft_wrap=True)
            return code
        err.print(f"[red]error:[/] not the model's failure: {escape(out['infrastructure'])}. Nothing was charged to "
                  f"{escape(str(out['model']))}; the retry sensor tries again after a backoff (or: kavi forge {name})",
                  highlight=False, soft_wrap=True)
        return code
    if out.get("failure_kind") == _ENDPOINT and out.get("outage"):
        o = out["outage"]
        where = f"the model endpoint {o.get('endpoint')}" if o.get("endpoint") else "the model endpoint"
        said = f"{where} failed ({o.get('last_status') or 'unavailable'}): not the model's failure"
        if out.get("triggers"):
            err.print(f"[red]error:[/] {escape(said)}, {o['attempts_in_a_row']} attempts in a row. The outage waits "
                      f"for a person: check the endpoint, then kavi retry {name} --by YOU", highlight=False,
                      soft_wrap=True)
        else:
            left = int(o.get("escalates_at") or 0) - int(o["attempts_in_a_row"])
            err.print(f"[red]error:[/] {escape(said)}. Nothing was charged to {escape(str(out['model']))}; the retry "
                      f"sensor tries again after a backoff (or: kavi forge {name}); {left} more in a row and it waits "
                      "for a person", highlight=False, soft_wrap=True)
        return code
    if out["status"] in _PASSING:
        if out["status"] == "VERIFIED":
            for line in out.get("widening") or []:
                console.print(f"  reaches more than {name}@{out['trusted_version']}: {escape(line)} (auto-approve "
                              f"never covers a wider surface; kavi diff {name}@{out['trusted_version']} {name})",
                              highlight=False, soft_wrap=True)
            console.print(f"  awaiting approval: kavi approve {name} --by YOU", highlight=False)
        return code
    for gate, lines in (out.get("gate_messages") or {}).items():
        reason, *first = [" ".join(str(x).split()) for x in lines]
        console.print(f"  {gate}: {escape(reason)}" + (f" — {escape(first[0])}" if first else ""), highlight=False,
                      soft_wrap=True)
    for v in (out.get("violations") or [])[:5]:
        console.print(f"  allowlist: {escape(str(v))}", highlight=False, soft_wrap=True)
    if out.get("research_note"):
        console.print(f"  research note: {escape(out['research_note'])}", highlight=False, soft_wrap=True)
    if out.get("failure_kind") == _NOT_CONFIGURED:
        from kavi_assets.cli.recorded_hint import NOT_CONFIGURED_FIX

        err.print(f"[yellow]configuration:[/] {escape(NOT_CONFIGURED_FIX)}, then: kavi forge {name}",
                  highlight=False, soft_wrap=True)
        return code
    if out.get("triggers"):
        console.print(f"  escalated ({escape(', '.join(out['triggers']))}): waits for a person — "
                      f"kavi retry {name} --by YOU [--hint TEXT]", highlight=False, soft_wrap=True)
    else:
        console.print(f"  next: kavi forge {name} (under dagster dev the retry sensor requests it)", highlight=False,
                      soft_wrap=True)
    console.print(f"  details: kavi lineage {name}", highlight=False, soft_wrap=True)
    return code

