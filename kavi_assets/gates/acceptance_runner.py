"""Runs inside the sandbox: loads the built skill from its file and runs the proposal's examples against it.

Reads a JSON job on stdin and prints one result line prefixed with RESULT_PREFIX (the skill may print too).
"""

import importlib.util
import json
import math
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Any

RESULT_PREFIX = "KAVI-ACCEPTANCE-RESULT:"


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b if isinstance(a, bool) and isinstance(b, bool) else False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def _load(skill_path: Path) -> Any:
    from kavi_assets.skills.base import BaseSkill

    spec = importlib.util.spec_from_file_location(f"kavi_acceptance_{skill_path.stem}", skill_path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {skill_path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    classes = [v for v in vars(module).values()
               if isinstance(v, type) and issubclass(v, BaseSkill) and v is not BaseSkill
               and v.__module__ == module.__name__]
    if len(classes) != 1:
        raise TypeError(f"expected one BaseSkill subclass, found {len(classes)}")
    return classes[0]


def write_vault_files(vault_root: Path, files: dict[str, str]) -> None:
    """Write an example's fixture files, each checked again here: a path that is absolute, climbs out or goes
    through a link is refused (ValueError) even if the proposal reached the runner without validation."""
    from kavi_assets.proposals.paths import check_vault_relpaths, resolve_inside

    check_vault_relpaths(files)
    for rel, content in files.items():
        target = resolve_inside(vault_root, rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        resolve_inside(vault_root, rel)  # again, now that the directories exist
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(content)


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    from kavi_assets.runtime.handles import DeclaredSecrets, FixtureHttp, Vault
    from kavi_assets.skills.base import SideEffectClass, SkillContext

    cls = _load(Path(job["skill_path"]))
    side = SideEffectClass(job["side_effect_class"])
    results = []
    for ex in job["examples"]:
        vault_root = Path(tempfile.mkdtemp(prefix="vault-", dir="."))
        entry: dict[str, Any] = {"label": ex["label"], "holdout": ex["holdout"]}
        try:
            write_vault_files(vault_root, ex.get("vault_files") or {})
        except (ValueError, OSError) as err:
            entry.update(ok=False, error=f"vault_files: {err}")
            results.append(entry)
            continue
        ctx = SkillContext(
            vault=Vault(vault_root, writable=side is SideEffectClass.FILE_WRITE),
            http=FixtureHttp(ex.get("http_responses") or {}) if side is SideEffectClass.NETWORK else None,
            secrets=(DeclaredSecrets(job.get("declared_secrets") or [], ex.get("secrets") or {})
                     if side is SideEffectClass.SECRET_READ else None),
        )
        try:
            out = cls(ctx).execute(cls.input_model.model_validate(ex["input"]))
            dumped = cls.output_model.model_validate(out.model_dump()).model_dump(mode="json")
            wrong = {k: {"expected": v, "got": dumped.get(k, "<missing>")}
                     for k, v in ex["expected"].items() if k not in dumped or not _equal(dumped[k], v)}
            entry.update(ok=not wrong, mismatches=wrong)
        except Exception as err:
            entry.update(ok=False, error=f"{type(err).__name__}: {err}",
                         trace=traceback.format_exc(limit=3)[-800:])
        results.append(entry)
    return {"results": results}


def main() -> None:
    job = json.loads(sys.stdin.read())
    # The nonce leaves the job before any skill code runs, so a skill cannot print a result line of its own.
    nonce = str(job.pop("nonce", ""))
    try:
        out = run_job(job)
    except Exception as err:
        out = {"load_error": f"{type(err).__name__}: {err}"}
    sys.stdout.write("\n" + RESULT_PREFIX + nonce + ":" + json.dumps(out) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
