# side_effect: READ_ONLY
# tries: read /etc/passwd with open
# expect: POL-FS
"""Read /etc/passwd with open."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsOpenEtcPasswdInput(BaseModel):
    text: str = ""


class FsOpenEtcPasswdOutput(BaseModel):
    result: str


class FsOpenEtcPasswd(BaseSkill[FsOpenEtcPasswdInput, FsOpenEtcPasswdOutput]):
    name = "fs_open_etc_passwd"
    description = "Corpus skill: read /etc/passwd with open."
    input_model = FsOpenEtcPasswdInput
    output_model = FsOpenEtcPasswdOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsOpenEtcPasswdInput) -> FsOpenEtcPasswdOutput:
        with open("/etc/passwd") as fh:
            return FsOpenEtcPasswdOutput(result=fh.read())
