# side_effect: READ_ONLY
# tricky: a project namespace computed with uuid.uuid5 at module level
# family: module-tables
"""Derive stable ids for records in a project's own UUID namespace."""

import uuid
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


PROJECT_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "skills.kavi.example")


class TableUuidNamespaceInput(BaseModel):
    keys: list[str]


class TableUuidNamespaceOutput(BaseModel):
    ids: list[str]
    namespace: str


class TableUuidNamespace(BaseSkill[TableUuidNamespaceInput, TableUuidNamespaceOutput]):
    name = "table_uuid_namespace"
    description = "Derive stable ids for records in a project's own UUID namespace."
    input_model = TableUuidNamespaceInput
    output_model = TableUuidNamespaceOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableUuidNamespaceInput) -> TableUuidNamespaceOutput:
        return TableUuidNamespaceOutput(ids=[str(uuid.uuid5(PROJECT_NAMESPACE, k)) for k in input_data.keys], namespace=str(PROJECT_NAMESPACE))
