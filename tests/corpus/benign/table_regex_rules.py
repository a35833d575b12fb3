# side_effect: READ_ONLY
# tricky: a module-level list of (name, re.compile(...)) pairs built with a comprehension
# family: module-tables
"""Flag personal data patterns (emails, phone numbers, card numbers) in a text."""

import re
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


RAW_RULES = {
    "email": r"[\w.+-]+@[\w-]+\.[\w.-]+",
    "phone": r"\+?\d[\d ()-]{7,}\d",
    "card": r"\b(?:\d[ -]?){13,16}\b",
}
RULES = [(name, re.compile(pattern)) for name, pattern in RAW_RULES.items()]


class TableRegexRulesInput(BaseModel):
    text: str


class TableRegexRulesOutput(BaseModel):
    findings: dict[str, list[str]]
    redacted: str


class TableRegexRules(BaseSkill[TableRegexRulesInput, TableRegexRulesOutput]):
    name = "table_regex_rules"
    description = "Flag personal data patterns (emails, phone numbers, card numbers) in a text."
    input_model = TableRegexRulesInput
    output_model = TableRegexRulesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableRegexRulesInput) -> TableRegexRulesOutput:
        findings: dict[str, list[str]] = {}
        redacted = input_data.text
        for name, rule in RULES:
            hits = rule.findall(input_data.text)
            if hits:
                findings[name] = hits
                redacted = rule.sub(f"[{name}]", redacted)
        return TableRegexRulesOutput(findings=findings, redacted=redacted)
