# side_effect: READ_ONLY
# tricky: DEFAULTS = json.loads('...') of a literal string at module level
# family: module-tables
"""Fill a settings object with defaults and report unknown keys."""

import json
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


DEFAULTS: dict[str, Any] = json.loads('{"theme": "light", "font_size": 12, "autosave": true, "plugins": []}')


class TableJsonDefaultsInput(BaseModel):
    settings: dict[str, Any]


class TableJsonDefaultsOutput(BaseModel):
    effective: dict[str, Any]
    unknown: list[str]


class TableJsonDefaults(BaseSkill[TableJsonDefaultsInput, TableJsonDefaultsOutput]):
    name = "table_json_defaults"
    description = "Fill a settings object with defaults and report unknown keys."
    input_model = TableJsonDefaultsInput
    output_model = TableJsonDefaultsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableJsonDefaultsInput) -> TableJsonDefaultsOutput:
        unknown = sorted(set(input_data.settings) - set(DEFAULTS))
        effective = {**DEFAULTS, **{k: v for k, v in input_data.settings.items() if k in DEFAULTS}}
        return TableJsonDefaultsOutput(effective=effective, unknown=unknown)
