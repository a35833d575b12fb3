# side_effect: READ_ONLY
# tricky: class-level constant tuples, frozensets and dicts on the skill
"""Class-level constant tuples, frozensets and dicts on the skill."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class ClassLevelConstantsInput(BaseModel):
    text: str = ""


class ClassLevelConstantsOutput(BaseModel):
    result: str


class ClassLevelConstants(BaseSkill[ClassLevelConstantsInput, ClassLevelConstantsOutput]):
    name = "class_level_constants"
    description = "Corpus skill: class-level constant tuples, frozensets and dicts on the skill."
    input_model = ClassLevelConstantsInput
    output_model = ClassLevelConstantsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    STOP_WORDS = frozenset({"a", "an", "the"})
    WEIGHTS = {"short": 1, "long": 2}
    ORDER: tuple[str, ...] = ("short", "long")

    def execute(self, input_data: ClassLevelConstantsInput) -> ClassLevelConstantsOutput:
        words = [w for w in input_data.text.lower().split() if w not in self.STOP_WORDS]
        score = sum(self.WEIGHTS["long" if len(w) > 5 else "short"] for w in words)
        return ClassLevelConstantsOutput(result=f"{score} {self.ORDER[0]}")
