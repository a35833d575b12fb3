# side_effect: READ_ONLY
# tricky: import os.path for join/basename/dirname/splitext only (no os.listdir, no os.system)
# family: pure-paths
"""Build output file names next to input names with a new extension."""

import os.path
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class OsPathStringJoinInput(BaseModel):
    inputs: list[str]
    extension: str
    folder: str = ""


class OsPathStringJoinOutput(BaseModel):
    outputs: list[str]


class OsPathStringJoin(BaseSkill[OsPathStringJoinInput, OsPathStringJoinOutput]):
    name = "os_path_string_join"
    description = "Build output file names next to input names with a new extension."
    input_model = OsPathStringJoinInput
    output_model = OsPathStringJoinOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: OsPathStringJoinInput) -> OsPathStringJoinOutput:
        ext = input_data.extension if input_data.extension.startswith(".") else "." + input_data.extension
        outputs = []
        for name in input_data.inputs:
            stem, _ = os.path.splitext(os.path.basename(name))
            base = input_data.folder or os.path.dirname(name)
            outputs.append(os.path.join(base, stem + ext))
        return OsPathStringJoinOutput(outputs=outputs)
