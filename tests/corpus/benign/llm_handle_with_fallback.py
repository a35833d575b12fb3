# side_effect: READ_ONLY
# tricky: uses the model handle through its checked methods, with a deterministic fallback
"""Title-case a text, or ask the model for a title when one is configured."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class TitleInput(BaseModel):
    text: str
    model: str = "default"  # a field named like the handle's concept is fine


class TitleOutput(BaseModel):
    title: str
    method: str


class Title(BaseSkill[TitleInput, TitleOutput]):
    name = "llm_handle_with_fallback"
    description = "Suggest a title for a text."
    input_model = TitleInput
    output_model = TitleOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TitleInput) -> TitleOutput:
        if self.llm.can_complete():
            suggestion = self.llm.complete("Suggest a short title for: " + input_data.text[:2000], max_tokens=20)
            if suggestion.strip():
                return TitleOutput(title=suggestion.strip(), method="model:" + input_data.model)
        return TitleOutput(title=input_data.text[:60].title(), method="fallback")
