# side_effect: READ_ONLY
# tricky: locals named open_count and eval_total, and model fields named like builtins
"""Locals named open_count and eval_total, and model fields named like builtins."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class LocalNamesLikeBuiltinsInput(BaseModel):
    text: str = ""
    open: bool = False
    type: str = "note"
    input: str = ""


class LocalNamesLikeBuiltinsOutput(BaseModel):
    result: str


class LocalNamesLikeBuiltins(BaseSkill[LocalNamesLikeBuiltinsInput, LocalNamesLikeBuiltinsOutput]):
    name = "local_names_like_builtins"
    description = "Corpus skill: locals named open_count and eval_total, and model fields named like builtins."
    input_model = LocalNamesLikeBuiltinsInput
    output_model = LocalNamesLikeBuiltinsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: LocalNamesLikeBuiltinsInput) -> LocalNamesLikeBuiltinsOutput:
        open_count = input_data.text.count("(")
        eval_total = open_count * 2
        state = "open" if input_data.open else "closed"
        return LocalNamesLikeBuiltinsOutput(result=f"{input_data.type}:{input_data.input}:{state}:{eval_total}")
