# side_effect: READ_ONLY
# tricky: uuid.uuid5 with uuid.NAMESPACE_URL gives stable ids
# family: uuids
"""Give each URL a stable name-based UUID."""

import uuid
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class UuidNamespaceIdsInput(BaseModel):
    urls: list[str]


class UuidNamespaceIdsOutput(BaseModel):
    ids: dict[str, str]


class UuidNamespaceIds(BaseSkill[UuidNamespaceIdsInput, UuidNamespaceIdsOutput]):
    name = "uuid_namespace_ids"
    description = "Give each URL a stable name-based UUID."
    input_model = UuidNamespaceIdsInput
    output_model = UuidNamespaceIdsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: UuidNamespaceIdsInput) -> UuidNamespaceIdsOutput:
        return UuidNamespaceIdsOutput(ids={url: str(uuid.uuid5(uuid.NAMESPACE_URL, url)) for url in input_data.urls})
