# side_effect: READ_ONLY
# tricky: tomllib.loads on a string (tomllib.load takes an open file)
# family: text-formats
"""List the dependencies declared in a pyproject.toml given as text."""

import re
import tomllib
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TomllibDependenciesInput(BaseModel):
    toml_text: str


class TomllibDependenciesOutput(BaseModel):
    name: str | None
    dependencies: list[str]
    extras: dict[str, list[str]]


class TomllibDependencies(BaseSkill[TomllibDependenciesInput, TomllibDependenciesOutput]):
    name = "tomllib_dependencies"
    description = "List the dependencies declared in a pyproject.toml given as text."
    input_model = TomllibDependenciesInput
    output_model = TomllibDependenciesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TomllibDependenciesInput) -> TomllibDependenciesOutput:
        try:
            data = tomllib.loads(input_data.toml_text)
        except tomllib.TOMLDecodeError as err:
            raise ValueError(f"invalid TOML: {err}") from err
        project = data.get("project", {})
        names = [re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0] for d in project.get("dependencies", [])]
        extras = {k: list(v) for k, v in project.get("optional-dependencies", {}).items()}
        return TomllibDependenciesOutput(name=project.get("name"), dependencies=names, extras=extras)
