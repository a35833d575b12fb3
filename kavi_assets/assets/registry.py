"""The registry projection: the trusted skills as the ledger records them, written to registry.json."""

import dagster as dg

from kavi.ledger.records import ForgeRecords
from kavi.ledger.store import Ledger
from kavi.promotion.registry import REBUILD, registry_state, write_registry
from kavi_assets.assets.forge import REGISTRY_ENTRY_KEY
from resources.home import SkillsHomeResource

SKILL_REGISTRY_KEY = dg.AssetKey(["forge", "skill_registry"])


@dg.asset(
    key=SKILL_REGISTRY_KEY,
    deps=[REGISTRY_ENTRY_KEY],
    group_name="registry",
    kinds={"duckdb", "json"},
    description="The trusted-skill registry, derived from the ledger (never edited by hand): every trusted version.",
)
def skill_registry(home: SkillsHomeResource) -> dg.MaterializeResult:  # type: ignore[type-arg]
    h = home.home()
    records = ForgeRecords(Ledger(h.ledger_path))
    state = registry_state(records, h.registry_path)
    if state.kind == "edited":
        # An edit is evidence: it is reported by `kavi verify` and rewritten only on purpose.
        raise dg.Failure(description=f"{h.registry_path} disagrees with the ledger and is left as it is: "
                                     f"{'; '.join(state.problems[:3])}. Inspect it (kavi verify), then `{REBUILD}`.")
    data = write_registry(records, h.registry_path)
    rows = [
        f"| {s['name']} | {s['latest']} | {', '.join(str(v['version']) for v in s['versions'])} | "
        f"{s['side_effect_class']} | `{s['source_sha256'][:16]}` | {s['approved_by']} |"
        for s in data["skills"]
    ]
    table = "\n".join(["| skill | latest | versions | class | sha256 | approved by |",
                       "| --- | --- | --- | --- | --- | --- |", *rows])
    return dg.MaterializeResult(
        metadata={
            "trusted_skills": dg.MetadataValue.int(len(data["skills"])),
            "registry": dg.MetadataValue.md(table),
            "path": dg.MetadataValue.path(str(h.registry_path)),
        }
    )
