# side_effect: READ_ONLY
# tricky: tomllib.loads and a recursive merge of two documents held in strings
# family: text-formats
"""Merge an override TOML document into a base TOML document."""

import json
import tomllib
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


class TomllibSettingsMergeInput(BaseModel):
    base: str
    override: str


class TomllibSettingsMergeOutput(BaseModel):
    merged_json: str


class TomllibSettingsMerge(BaseSkill[TomllibSettingsMergeInput, TomllibSettingsMergeOutput]):
    name = "tomllib_settings_merge"
    description = "Merge an override TOML document into a base TOML document."
    input_model = TomllibSettingsMergeInput
    output_model = TomllibSettingsMergeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TomllibSettingsMergeInput) -> TomllibSettingsMergeOutput:
        merged = _merge(tomllib.loads(input_data.base), tomllib.loads(input_data.override))
        return TomllibSettingsMergeOutput(merged_json=json.dumps(merged, sort_keys=True, default=str))
