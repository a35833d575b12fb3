"""Jobs over the forge's assets; every job runs in process (see DAGSTER-NOTES: steps are cheap, runs are not)."""

import dagster as dg

from kavi.forge.batch import ENDPOINT_TAG
from kavi_assets.assets.forge import REGISTRY_ENTRY_KEY
from kavi_assets.assets.learning import MODEL_POSTERIORS_KEY
from kavi_assets.assets.registry import SKILL_REGISTRY_KEY

FORGE_JOB = "forge"
PROMOTE_JOB = "promote"
REGISTRY_JOB = "registry"
LEARN_JOB = "learn"



def _endpoint() -> str:
    """The model endpoint the forge runs call (run tag `kavi/endpoint`), read when the code location loads: every
    forge run carries it, those a sensor or the UI launches included, so the queue's per-endpoint limit (see
    kavi_assets/cli/parallel.py) holds for them too."""
    from kavi.forge.batch import endpoint_tag
    from kavi.settings_parsers import ConfigError

    try:
        return endpoint_tag()
    except ConfigError:
        return "unconfigured"  # the run itself reports the bad setting


forge_job = dg.define_asset_job(
    FORGE_JOB,
    selection=dg.AssetSelection.groups("forge"),
    description="One attempt of one proposal: packet, build, verify (gates), research, promotion.",
    executor_def=dg.in_process_executor,
    tags={ENDPOINT_TAG: _endpoint()},
)
promote_job = dg.define_asset_job(
    PROMOTE_JOB,
    selection=dg.AssetSelection.assets(REGISTRY_ENTRY_KEY),
    description="Promote a verified, approved build into the skills home.",
    executor_def=dg.in_process_executor,
)
registry_job = dg.define_asset_job(
    REGISTRY_JOB,
    selection=dg.AssetSelection.assets(SKILL_REGISTRY_KEY),
    description="Regenerate the registry projection from the ledger.",
    executor_def=dg.in_process_executor,
)
learn_job = dg.define_asset_job(
    LEARN_JOB,
    selection=dg.AssetSelection.assets(MODEL_POSTERIORS_KEY),
    description="Update the model posteriors from new outcomes.",
    executor_def=dg.in_process_executor,
)
