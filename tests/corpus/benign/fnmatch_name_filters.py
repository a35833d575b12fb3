# side_effect: READ_ONLY
# tricky: fnmatch.filter/fnmatchcase on names given as strings (glob would list directories)
# family: pure-paths
"""Split file names into included and excluded ones by glob patterns."""

import fnmatch
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FnmatchNameFiltersInput(BaseModel):
    names: list[str]
    include: list[str]
    exclude: list[str] = []


class FnmatchNameFiltersOutput(BaseModel):
    included: list[str]
    excluded: list[str]


class FnmatchNameFilters(BaseSkill[FnmatchNameFiltersInput, FnmatchNameFiltersOutput]):
    name = "fnmatch_name_filters"
    description = "Split file names into included and excluded ones by glob patterns."
    input_model = FnmatchNameFiltersInput
    output_model = FnmatchNameFiltersOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FnmatchNameFiltersInput) -> FnmatchNameFiltersOutput:
        included: list[str] = []
        excluded: list[str] = []
        for name in input_data.names:
            base = name.rsplit("/", 1)[-1]
            wanted = any(fnmatch.fnmatchcase(base, p) for p in input_data.include)
            if wanted and not any(fnmatch.fnmatchcase(base, p) for p in input_data.exclude):
                included.append(name)
            else:
                excluded.append(name)
        return FnmatchNameFiltersOutput(included=sorted(included), excluded=fnmatch.filter(excluded, "*"))
