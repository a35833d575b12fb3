# side_effect: READ_ONLY
# tricky: @dataclass(order=True, frozen=True) with field(compare=False) and dataclasses.replace/asdict
# family: types
"""Parse semantic versions, sort them and bump the highest one."""

import dataclasses
import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$")


@dataclasses.dataclass(order=True, frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    label: str = dataclasses.field(default="", compare=False)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}" + (f"-{self.label}" if self.label else "")


class DataclassOrderedVersionsInput(BaseModel):
    versions: list[str]
    bump: str = "patch"


class DataclassOrderedVersionsOutput(BaseModel):
    ordered: list[str]
    next_version: str
    latest: dict[str, int | str]


class DataclassOrderedVersions(BaseSkill[DataclassOrderedVersionsInput, DataclassOrderedVersionsOutput]):
    name = "dataclass_ordered_versions"
    description = "Parse semantic versions, sort them and bump the highest one."
    input_model = DataclassOrderedVersionsInput
    output_model = DataclassOrderedVersionsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DataclassOrderedVersionsInput) -> DataclassOrderedVersionsOutput:
        parsed = []
        for text in input_data.versions:
            m = SEMVER.match(text.strip())
            if not m:
                raise ValueError(f"not a semantic version: {text!r}")
            parsed.append(Version(int(m[1]), int(m[2]), int(m[3]), m[4] or ""))
        if not parsed:
            raise ValueError("no versions given")
        latest = max(parsed)
        bumps = {"major": dataclasses.replace(latest, major=latest.major + 1, minor=0, patch=0, label=""),
                 "minor": dataclasses.replace(latest, minor=latest.minor + 1, patch=0, label=""),
                 "patch": dataclasses.replace(latest, patch=latest.patch + 1, label="")}
        return DataclassOrderedVersionsOutput(ordered=[str(v) for v in sorted(parsed)], next_version=str(bumps[input_data.bump]),
                   latest=dataclasses.asdict(latest))
