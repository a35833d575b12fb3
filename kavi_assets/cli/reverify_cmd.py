"""`kavi reverify`, `reinstate`, `economics` and `attest`, and the trust-reading commands' check that the judges
(tools, policy, gate configuration) have not moved since the trusted versions were verified."""

import json
import re
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from kavi.home import KaviHome
from kavi_assets.cli.console import make_console
from kavi_assets.cli.errors import cli_errors

console = make_console()
err_console = make_console(stderr=True)
HomeOpt = Annotated[str | None, typer.Option("--home", help="skills home (default: $KAVI_HOME or ~/.kavi)")]
_REF = re.compile(r"^([a-z][a-z0-9]*(?:_[a-z0-9]+)*)(?:@([1-9][0-9]{0,8}))?$")
MAX_NAME = 64


def parse_ref(ref: str, *, need_version: bool = False) -> tuple[str, int | None]:
    """NAME or NAME@VERSION, checked against the proposal-name rules before it reaches the ledger."""
    m = _REF.fullmatch(ref.strip()) if len(ref) <= MAX_NAME + 10 else None
    if m is None or len(m.group(1)) > MAX_NAME:
        raise typer.BadParameter(f"{ref[:80]!r} is not NAME or NAME@VERSION (snake_case name, version a number)")
    if need_version and m.group(2) is None:
        raise typer.BadParameter(f"{ref!r} names no version: write NAME@VERSION, as in {m.group(1)}@1")
    return m.group(1), None if m.group(2) is None else int(m.group(2))


def _home(home: str | None) -> KaviHome:
    return KaviHome.from_env(home).ensure()


def _records(h: KaviHome) -> Any:
    from kavi.ledger.records import ForgeRecords
    from kavi.ledger.store import Ledger

    return ForgeRecords(Ledger(h.ledger_path))


def _ctx(h: KaviHome) -> Any:
    """The forge context with the gate resource's settings (as `kavi forge` judges): re-verification judges alike."""
    from kavi.forge.context import ForgeContext
    from resources.gates import GateRunnerResource

    def no_model() -> Any:
        raise RuntimeError("re-verification makes no model call")

    return ForgeContext.open(h, no_model, GateRunnerResource().settings())


# -- the runtime's view: SUSPECT refusals and the start-up check -----------------------------------------------------
def refused_suspects(records: Any) -> dict[str, dict[int, str]]:
    """SUSPECT versions the setting keeps from running (none under KAVI_SUSPECT_POLICY=allow): name -> version ->
    reason."""
    from kavi.ledger.verification_records import VerificationRecords
    from kavi.settings import suspect_policy

    if suspect_policy() == "allow":
        return {}
    out: dict[str, dict[int, str]] = {}
    for e in VerificationRecords(records.ledger).suspects():
        out.setdefault(e.name, {})[e.version] = e.reason
    return out


def suspect_refusal(name: str, version: int, reason: str, trusted: dict[int, Any] | None) -> str:
    older = ", ".join(f"{name}@{v}" for v in sorted(trusted or {}))
    return (f"skill {name!r}: its latest version {name}@{version} is SUSPECT and is not run ({reason}); a person may "
            f"reinstate it (kavi reinstate {name}@{version} --by WHO --reason TEXT)"
            + (f", or pin an earlier trusted version ({older})" if older else "")
            + "; KAVI_SUSPECT_POLICY=allow runs SUSPECT versions")


def stale_verdicts_note(h: KaviHome, records: Any, build_ids: list[str]) -> None:
    """One line on stderr when trusted versions (their builds: `build_ids`) were verified under a fingerprint that is
    not today's (the tools, the policy or the gate configuration changed since): their verdicts are stale until
    `kavi reverify`. Cheap: the fingerprint is computed once per process without importing the forge, and this is
    one query inside the caller's session."""
    from kavi.forge.fingerprint import current_fingerprint, judge_settings
    from kavi.ledger.verification_records import VerificationRecords

    try:
        fp = current_fingerprint(judge_settings(), h)
        latest = VerificationRecords(records.ledger).latest_verification_of_builds(build_ids)
    except Exception:  # a start-up hint never stops the command it precedes
        return
    moved = sum(1 for v in latest.values() if v.fingerprint != fp.digest)
    if moved:
        err_console.print(f"[yellow]note:[/] {moved} trusted version(s) were verified under different judges (tool "
                          "versions, policy or gate configuration changed since): their verdicts are stale; "
                          "run `kavi reverify --stale`", highlight=False, soft_wrap=True)


# -- kavi reverify ------------------------------------------------------------------------------------------------
def reverify_cmd(
    name: Annotated[str | None, typer.Argument(help="a skill (every trusted version of it)")] = None,
    all_: Annotated[bool, typer.Option("--all", help="every trusted version of every skill")] = False,
    stale: Annotated[bool, typer.Option("--stale", help="only the versions not verified under today's "
                                                         "fingerprint")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    home: HomeOpt = None,
) -> None:
    """Re-run every gate on trusted versions under today's tools and policy; a version that now fails is SUSPECT."""
    from kavi.forge.reverify import fingerprint_for, reverify

    if name is None and not all_ and not stale:
        raise typer.BadParameter("give a skill NAME, --all, or --stale")
    names = None
    h = _home(home)
    ctx = _ctx(h)
    if name is not None:
        skill, version = parse_ref(name)
        if version is not None:
            raise typer.BadParameter("kavi reverify takes a NAME (all its trusted versions), not NAME@VERSION")
        if not ctx.records.trusted_versions(skill):
            raise typer.BadParameter(f"{skill!r} has no trusted version")
        names = [skill]
    fp = fingerprint_for(ctx)
    t0 = time.monotonic()
    results = reverify(ctx, names, only_stale=stale and not all_ and name is None)
    elapsed = time.monotonic() - t0
    if as_json:
        typer.echo(json.dumps({"fingerprint": fp.to_dict(), "elapsed_s": round(elapsed, 3),
                               "results": [r.to_dict() for r in results]}, indent=2, default=str))
    else:
        table = Table("version", "verdict", "failing gate", "before", "time")
        for r in results:
            verdict = ("[green]passed[/]" if r.passed else "[red]FAILED → SUSPECT[/]" if r.marked_suspect
                       else "[red]failed[/]") if r.ran else f"[yellow]{escape(r.note)}[/]"
            failing = "; ".join(f"{f['gate']}: {f['reason'][:80]}" for f in r.failing) or "–"
            before = "–" if r.previous is None else (
                f"{'passed' if r.previous['passed'] else 'failed'} under {str(r.previous['fingerprint'])[:12]}")
            table.add_row(r.ref, verdict, escape(failing), before, f"{r.duration_s:.1f}s")
        console.print(table)
        console.print(f"re-verified {sum(1 for r in results if r.ran)} version(s) in {elapsed:.1f}s under fingerprint "
                      f"{fp.digest[:12]} ({fp.parts['python']}, ruff {fp.parts['ruff']}, mypy {fp.parts['mypy']}, "
                      f"pytest {fp.parts['pytest']}, coverage {fp.parts['coverage']}, policy "
                      f"{str(fp.parts['policy'])[:12]})", highlight=False, soft_wrap=True)
    if any(r.ran and not r.passed for r in results):
        raise typer.Exit(1)


# -- kavi reinstate -----------------------------------------------------------------------------------------------
def reinstate_cmd(
    ref: Annotated[str, typer.Argument(help="NAME@VERSION of a SUSPECT version")],
    by: Annotated[str, typer.Option("--by", help="who decides")],
    reason: Annotated[str, typer.Option("--reason", help="why it is trusted again")],
    home: HomeOpt = None,
) -> None:
    """Record a person's decision that a SUSPECT version is trusted again."""
    from kavi.ledger.verification_records import VerificationRecords

    name, version = parse_ref(ref, need_version=True)
    assert version is not None
    h = _home(home)
    try:
        event = VerificationRecords(_records(h).ledger).reinstate(name, version, by=by, reason=reason)
    except ValueError as err:
        raise typer.BadParameter(str(err)) from None
    console.print(f"[green]✓[/] {event.ref} is TRUSTED again: {escape(event.reason)}", highlight=False,
                  soft_wrap=True)


# -- kavi economics -----------------------------------------------------------------------------------------------
def economics_cmd(
    name: Annotated[str | None, typer.Argument(help="one skill (default: every trusted skill)")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    home: HomeOpt = None,
) -> None:
    """Each trusted version's forge cost (every attempt, failed ones and research included), its executions and the
    number of uses at which it pays for itself."""
    from kavi.forge.economics import DEFINITION, economics
    from kavi.runtime.ingest import ingest_execution_log

    skill = parse_ref(name)[0] if name is not None else None
    h = _home(home)
    records = _records(h)
    ingest_execution_log(records.ledger, h.executions_log)  # the runs logged since the last ingest count too
    try:
        rows = economics(records, h, skill)
    except ValueError as err:
        err_console.print(f"[bold red]error:[/] {escape(str(err))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if as_json:
        typer.echo(json.dumps({"definition": DEFINITION, "versions": [r.to_dict() for r in rows]}, indent=2))
        return
    table = Table("version", "attempts", "forge cost", "tokens in/out", "model wall", "runs", "run total",
                  "run median", "saving/use", "break-even")
    for r in rows:
        tokens_in = sum(m.prompt_tokens for m in r.by_model)
        tokens_out = sum(m.completion_tokens for m in r.by_model)
        even = "never (no saving)" if r.break_even_uses is None else f"{r.break_even_uses} uses"
        table.add_row(r.ref, f"{r.attempts} ({r.failed_attempts} failed)", f"${r.forge_cost_usd:.4f}",
                      f"{tokens_in}/{tokens_out}", f"{r.forge_wall_s:.1f}s", str(r.executions),
                      f"{r.executions_total_s:.3f}s",
                      "–" if r.executions_median_ms is None else f"{r.executions_median_ms:.1f}ms",
                      f"${r.saving_per_use_usd:.4f}", even)
    console.print(table)
    for r in rows:
        for m in r.by_model:
            console.print(f"  {r.ref} · {escape(m.model)}: {m.calls} call(s), {m.prompt_tokens} in / "
                          f"{m.completion_tokens} out tokens, {m.wall_ms / 1000:.1f}s, ${m.cost_usd:.4f}"
                          + ("" if m.priced else " (unpriced: 0)"), highlight=False, soft_wrap=True)
    console.print(f"[dim]{escape(DEFINITION)}[/]", highlight=False, soft_wrap=True)


# -- kavi attest --------------------------------------------------------------------------------------------------
def attest_cmd(
    ref: Annotated[str | None, typer.Argument(help="NAME or NAME@VERSION (default: its latest promotion)")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="write the export to FILE")] = None,
    verify_file: Annotated[Path | None, typer.Option("--verify", help="verify an exported attestation, or an "
                                                     "exported folder (kavi export): all its signatures")] = None,
    key: Annotated[Path | None, typer.Option("--key", help="with --verify: the public key (PEM) it must be signed "
                                                           "by")] = None,
    home: HomeOpt = None,
) -> None:
    """Export a promotion's signed attestation (with the public key), or verify an exported one."""
    from kavi.promotion.attestation import (
        MAX_EXPORT_BYTES,
        AttestationError,
        export_document,
        home_public_key,
        load_public_pem,
        verify_export,
    )

    if verify_file is not None:
        if ref is not None:
            raise typer.BadParameter("give either NAME[@VERSION] or --verify FILE")
        if verify_file.is_dir():  # an exported folder: its attestation, statements and Model Signing signature
            from kavi.promotion.exported import verify_folder_evidence

            checks = verify_folder_evidence(verify_file, key.read_text(encoding="utf-8")[:10_000] if key else None)
            for what, held, detail in checks:
                mark = "[green]✓[/]" if held else "[bold red]✗[/]"
                console.print(f"{mark} {escape(what)}: {escape(detail)}", highlight=False, soft_wrap=True)
            if not all(held for _, held, _ in checks):
                raise typer.Exit(1)
            return
        try:
            with verify_file.open("rb") as fh:
                data = fh.read(MAX_EXPORT_BYTES + 1)
            pinned = load_public_pem(key.read_text(encoding="utf-8")[:10_000]) if key is not None else None
            verified = verify_export(data, pinned)
        except OSError as err:
            raise typer.BadParameter(f"cannot read {err.filename}: {err.strerror}") from None
        except AttestationError as err:
            err_console.print(f"[bold red]✗[/] {escape(str(err))}", highlight=False, soft_wrap=True)
            raise typer.Exit(1) from None
        pred = verified.statement.get("predicate", {})
        skill = pred.get("skill", {}) if isinstance(pred, dict) else {}
        console.print(f"[green]✓[/] signature valid (key {verified.key_id}"
                      + ("" if key else ", the key the file carries: pin one with --key") + f"): "
                      f"{escape(str(skill.get('name')))}@{escape(str(skill.get('version')))} sha256 "
                      f"{verified.subject_sha256}, approved by "
                      f"{escape(str((pred.get('approver') or {}).get('approved_by')))}", highlight=False,
                      soft_wrap=True)
        return
    if ref is None:
        raise typer.BadParameter("give NAME[@VERSION] to export, or --verify FILE")
    from kavi.ledger.artifacts import ArtifactStore
    from kavi.promotion.provenance import find_attestation

    name, version = parse_ref(ref)
    h = _home(home)
    try:
        promo, sha = find_attestation(_records(h), name, version)
    except LookupError as err:
        err_console.print(f"[bold red]error:[/] {escape(str(err))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    public = home_public_key(h)
    if public is None:
        err_console.print("[bold red]error:[/] the home's public key (keys/attestation.pub) is missing",
                          highlight=False)
        raise typer.Exit(2)
    doc = export_document(json.loads(ArtifactStore(h.artifacts_dir).get(sha)), public)
    text = json.dumps(doc, indent=2) + "\n"
    if output is None:
        typer.echo(text, nl=False)
        return
    output.write_text(text, encoding="utf-8")
    console.print(f"[green]✓[/] wrote the attestation of {name}@{promo.version} to {output} (verify it anywhere "
                  f"with: kavi attest --verify {output})", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("reverify")(cli_errors(reverify_cmd))
    app.command("reinstate")(cli_errors(reinstate_cmd))
    app.command("economics")(cli_errors(economics_cmd))
    app.command("attest")(cli_errors(attest_cmd))


# -- kavi doctor's lines ------------------------------------------------------------------------------------------
def doctor_checks(home: KaviHome) -> list[Any]:
    """`kavi doctor`: stale verdicts (judged under another fingerprint) and SUSPECT versions."""
    from kavi.forge.context import ForgeContext
    from kavi.forge.fingerprint import current_fingerprint, judge_settings
    from kavi.forge.reverify import stale_versions, suspects
    from kavi.settings import suspect_policy
    from kavi_assets.cli.health_check import Check

    if not home.ledger_path.exists():
        return []
    try:
        settings = judge_settings()
        ctx = ForgeContext.open(home, lambda: None, settings, lock_timeout_s=10)  # type: ignore[arg-type,return-value]
        fp = current_fingerprint(settings, home)
        stale = stale_versions(ctx, fp)
        suspect = suspects(ctx)
        policy = suspect_policy()
    except Exception as err:
        return [Check("re-verification", "warn", f"could not compare fingerprints: {err}", "run `kavi verify`")]
    moved = [s for s in stale if s.verified_under is not None]
    unknown = [s for s in stale if s.verified_under is None]
    checks: list[Any] = []
    if moved:
        checks.append(Check("re-verification", "warn",
                            f"{len(moved)} trusted version(s) were verified under other judges (now {fp.digest[:12]}): "
                            + "; ".join(f"{s.ref}: {', '.join(s.changes)}" for s in moved[:5]),
                            "kavi reverify --stale (or let the judging_fingerprint_moved sensor launch the reverify "
                            "job)"))
    elif unknown:
        checks.append(Check("re-verification", "warn",
                            f"{len(unknown)} trusted version(s) have no recorded fingerprint (promoted before "
                            "fingerprints existed): " + ", ".join(s.ref for s in unknown[:5]), "kavi reverify --stale"))
    else:
        checks.append(Check("re-verification", "ok", f"every trusted version was verified under today's judges "
                                                      f"(fingerprint {fp.digest[:12]})"))
    if suspect:
        served = "not served, refused by kavi run" if policy == "refuse" else "still served (KAVI_SUSPECT_POLICY=allow)"
        checks.append(Check("suspect versions", "warn", f"{len(suspect)} SUSPECT, {served}: "
                            + "; ".join(f"{e.ref}: {e.reason[:160]}" for e in suspect[:5]),
                            "kavi reinstate NAME@VERSION --by WHO --reason TEXT after checking it, or re-forge it"))
    else:
        checks.append(Check("suspect versions", "ok", "none"))
    return checks
