# side_effect: READ_ONLY
# tricky: import os; only os.path.commonpath/split/normcase and os.sep, all string functions
# family: pure-paths
"""Find the common folder of a set of paths and each path relative to it."""

import os
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class OsPathCommonPrefixInput(BaseModel):
    paths: list[str]


class OsPathCommonPrefixOutput(BaseModel):
    common: str
    relative: list[str]
    depth: list[int]


class OsPathCommonPrefix(BaseSkill[OsPathCommonPrefixInput, OsPathCommonPrefixOutput]):
    name = "os_path_common_prefix"
    description = "Find the common folder of a set of paths and each path relative to it."
    input_model = OsPathCommonPrefixInput
    output_model = OsPathCommonPrefixOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: OsPathCommonPrefixInput) -> OsPathCommonPrefixOutput:
        if not input_data.paths:
            return OsPathCommonPrefixOutput(common="", relative=[], depth=[])
        normalised = [os.path.normpath(p) for p in input_data.paths]
        common = os.path.commonpath(normalised)
        relative = [os.path.relpath(p, common) if common else p for p in normalised]
        return OsPathCommonPrefixOutput(common=common, relative=relative, depth=[r.count(os.sep) for r in relative])
