# side_effect: READ_ONLY
# tricky: posixpath.normpath/join/basename/splitext are string functions
# family: pure-paths
"""Normalise user-supplied relative paths and reject ones that climb out of the root."""

import posixpath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class PosixpathNormalizeInput(BaseModel):
    paths: list[str]


class PosixpathNormalizeOutput(BaseModel):
    safe: list[str]
    rejected: list[str]
    extensions: list[str]


class PosixpathNormalize(BaseSkill[PosixpathNormalizeInput, PosixpathNormalizeOutput]):
    name = "posixpath_normalize"
    description = "Normalise user-supplied relative paths and reject ones that climb out of the root."
    input_model = PosixpathNormalizeInput
    output_model = PosixpathNormalizeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PosixpathNormalizeInput) -> PosixpathNormalizeOutput:
        safe: list[str] = []
        rejected: list[str] = []
        for raw in input_data.paths:
            norm = posixpath.normpath(posixpath.join("", raw))
            if posixpath.isabs(norm) or norm == ".." or norm.startswith("../"):
                rejected.append(raw)
            else:
                safe.append(norm)
        extensions = [posixpath.splitext(posixpath.basename(p))[1] for p in safe]
        return PosixpathNormalizeOutput(safe=safe, rejected=rejected, extensions=extensions)
