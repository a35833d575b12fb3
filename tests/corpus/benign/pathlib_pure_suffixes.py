# side_effect: READ_ONLY
# tricky: pathlib.PurePosixPath parts and suffixes; no Path, nothing touches the disk
# family: pure-paths
"""Split file names into directory, stem and suffixes and group them by extension."""

from collections import defaultdict
from pathlib import PurePosixPath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class PathlibPureSuffixesInput(BaseModel):
    names: list[str]


class PathlibPureSuffixesOutput(BaseModel):
    by_extension: dict[str, list[str]]
    parts: list[dict[str, str]]


class PathlibPureSuffixes(BaseSkill[PathlibPureSuffixesInput, PathlibPureSuffixesOutput]):
    name = "pathlib_pure_suffixes"
    description = "Split file names into directory, stem and suffixes and group them by extension."
    input_model = PathlibPureSuffixesInput
    output_model = PathlibPureSuffixesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PathlibPureSuffixesInput) -> PathlibPureSuffixesOutput:
        groups: defaultdict[str, list[str]] = defaultdict(list)
        parts = []
        for name in input_data.names:
            path = PurePosixPath(name)
            groups[path.suffix.lower() or "(none)"].append(path.name)
            parts.append({"parent": str(path.parent), "stem": path.stem, "suffixes": "".join(path.suffixes)})
        return PathlibPureSuffixesOutput(by_extension=dict(groups), parts=parts)
