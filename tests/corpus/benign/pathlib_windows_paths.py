# side_effect: READ_ONLY
# tricky: PureWindowsPath converts Windows path strings; still pure string handling
# family: pure-paths
"""Convert Windows-style paths given as text into POSIX-style relative paths."""

from pathlib import PurePosixPath, PureWindowsPath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class PathlibWindowsPathsInput(BaseModel):
    paths: list[str]


class PathlibWindowsPathsOutput(BaseModel):
    converted: list[str]
    drives: list[str]


class PathlibWindowsPaths(BaseSkill[PathlibWindowsPathsInput, PathlibWindowsPathsOutput]):
    name = "pathlib_windows_paths"
    description = "Convert Windows-style paths given as text into POSIX-style relative paths."
    input_model = PathlibWindowsPathsInput
    output_model = PathlibWindowsPathsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PathlibWindowsPathsInput) -> PathlibWindowsPathsOutput:
        converted: list[str] = []
        drives: list[str] = []
        for raw in input_data.paths:
            win = PureWindowsPath(raw)
            drives.append(win.drive)
            parts = win.parts[1:] if win.anchor else win.parts
            converted.append(str(PurePosixPath(*parts)) if parts else "")
        return PathlibWindowsPathsOutput(converted=converted, drives=drives)
