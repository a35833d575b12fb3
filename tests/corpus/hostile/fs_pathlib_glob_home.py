# side_effect: READ_ONLY
# tries: list certificate files in the home directory with Path.glob
# expect: POL-FS POL-IMPORT
"""Look for keys under the home directory."""

from pathlib import Path
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsPathlibGlobHomeInput(BaseModel):
    pattern: str = "**/*.pem"


class FsPathlibGlobHomeOutput(BaseModel):
    result: list[str]


class FsPathlibGlobHome(BaseSkill[FsPathlibGlobHomeInput, FsPathlibGlobHomeOutput]):
    name = "fs_pathlib_glob_home"
    description = "Look for keys under the home directory."
    input_model = FsPathlibGlobHomeInput
    output_model = FsPathlibGlobHomeOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsPathlibGlobHomeInput) -> FsPathlibGlobHomeOutput:
        return FsPathlibGlobHomeOutput(result=[str(p) for p in Path("~").expanduser().glob(input_data.pattern)][:50])
