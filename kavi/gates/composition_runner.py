"""Runs inside the gate sandbox, like acceptance_runner: runs a decomposed parent's composition (its trusted
children, chained) on the parent's example inputs and reports what came out. It never sees an expected output.

The job arrives on stdin: the composition document, each child's relative file, SHA-256, side-effect class and
declared secrets, and the cases (id, input, fixtures). Each child is loaded exactly as `kavi run` loads it
(`kavi.skills.loading`, through acceptance_runner's loader, hash-checked) and gets the same handle classes.
The steps of one case share that case's vault (a step may read what an earlier one wrote). Results go to stdout on
lines prefixed with RESULT_PREFIX and the job's nonce, as acceptance_runner's do.
"""

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from kavi.gates.acceptance_runner import (
    MAX_OUTPUT_CHARS,
    _fixture_transport,
    _load,
    result_channel,
    write_vault_files,
)


def _child_context(child: dict[str, Any], case: dict[str, Any], vault_root: Path) -> Any:
    from kavi.runtime.context import context_for
    from kavi.runtime.http_client import HttpClient
    from kavi.skills.base import SideEffectClass

    side = SideEffectClass(child["side_effect_class"])
    http = HttpClient(transport=_fixture_transport(case.get("http_responses") or {})) \
        if side is SideEffectClass.NETWORK else None
    declared = list(child.get("declared_secrets") or [])
    secrets = {k: v for k, v in (case.get("secrets") or {}).items() if k in declared}
    return context_for(side, vault_root=vault_root, declared_secrets=declared, environ=secrets, http=http, llm=None)


def run_case(doc: dict[str, Any], classes: dict[str, Any], children: dict[str, dict[str, Any]],
             case: dict[str, Any], entry: dict[str, Any]) -> None:
    from kavi.runtime.composition import StepFailed, run_composition

    vault_root = Path(tempfile.mkdtemp(prefix="vault-", dir="."))
    try:
        write_vault_files(vault_root, {str(k): str(v) for k, v in (case.get("vault_files") or {}).items()})
    except Exception as err:
        entry.update(ran=False, error=f"vault_files: {err}", error_kind="fixture")
        return

    def call(index: int, name: str, data: dict[str, Any]) -> dict[str, Any]:
        cls = classes[name]
        try:
            out = cls(_child_context(children[name], case, vault_root)).execute(cls.input_model.model_validate(data))
            dumped: dict[str, Any] = cls.output_model.model_validate(out.model_dump()).model_dump(mode="json")
        except Exception as err:
            raise StepFailed(f"step {index} ({name}): {type(err).__name__}: {str(err)[:300]}") from None
        return dumped

    try:
        output = run_composition(doc, dict(case.get("input") or {}), call)
    except StepFailed as err:
        entry.update(ran=False, error=str(err)[:500], error_kind="raised")
        return
    text = json.dumps(output)
    if len(text) > MAX_OUTPUT_CHARS:
        entry.update(ran=False, error=f"output of {len(text)} characters exceeds {MAX_OUTPUT_CHARS}",
                     error_kind="output")
    else:
        entry.update(ran=True, output=output)


def run_job(job: dict[str, Any], emit: Any) -> int:
    doc = job["composition"]
    children: dict[str, dict[str, Any]] = job["children"]
    classes = {name: _load({"skill_name": name, "skill_file": c["skill_file"], "sha256": c["sha256"]})
               for name, c in children.items()}
    done = 0
    for case in job["cases"]:
        entry: dict[str, Any] = {"id": case["id"]}
        run_case(doc, classes, children, case, entry)
        emit(entry)
        done += 1
    return done


def main() -> None:
    # Not httpx: only a NETWORK child's fixtures need it (acceptance_runner._import_httpx, when they are built).
    import pydantic  # noqa: F401

    import kavi.runtime.composition
    import kavi.runtime.context
    import kavi.skills.loading  # noqa: F401

    job = json.loads(sys.stdin.read())
    line = result_channel(str(job.pop("nonce", "")))  # the nonce leaves the job before any skill code runs
    try:
        done = run_job(job, lambda entry: line({"result": entry}))
        line({"done": done})
    except Exception as err:
        line({"load_error": f"{type(err).__name__}: {str(err)[:500]}"})


if __name__ == "__main__":
    main()
