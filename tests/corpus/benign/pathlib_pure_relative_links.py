# side_effect: READ_ONLY
# tricky: PurePosixPath.relative_to/with_suffix/joinpath to compute links between note names
# family: pure-paths
"""Compute the relative link from one note to another inside a notes tree."""

import posixpath
from pathlib import PurePosixPath
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class PathlibPureRelativeLinksInput(BaseModel):
    source: str
    target: str


class PathlibPureRelativeLinksOutput(BaseModel):
    link: str
    html_name: str


class PathlibPureRelativeLinks(BaseSkill[PathlibPureRelativeLinksInput, PathlibPureRelativeLinksOutput]):
    name = "pathlib_pure_relative_links"
    description = "Compute the relative link from one note to another inside a notes tree."
    input_model = PathlibPureRelativeLinksInput
    output_model = PathlibPureRelativeLinksOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: PathlibPureRelativeLinksInput) -> PathlibPureRelativeLinksOutput:
        source = PurePosixPath(input_data.source)
        target = PurePosixPath(input_data.target)
        if source.is_absolute() or target.is_absolute():
            raise ValueError("note names are relative to the notes root")
        link = posixpath.relpath(str(target), start=str(source.parent))
        return PathlibPureRelativeLinksOutput(link=link, html_name=str(target.with_suffix(".html")))
