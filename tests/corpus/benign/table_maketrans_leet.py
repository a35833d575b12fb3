# side_effect: READ_ONLY
# tricky: str.maketrans tables and a reversed dict comprehension at module level
# family: module-tables
"""Translate text to and from simple leetspeak."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


TO_LEET = str.maketrans({"a": "4", "e": "3", "i": "1", "o": "0", "s": "5", "t": "7"})
FROM_LEET = str.maketrans({v: chr(k) for k, v in TO_LEET.items() if isinstance(v, str)})


class TableMaketransLeetInput(BaseModel):
    text: str
    reverse: bool = False


class TableMaketransLeetOutput(BaseModel):
    result: str


class TableMaketransLeet(BaseSkill[TableMaketransLeetInput, TableMaketransLeetOutput]):
    name = "table_maketrans_leet"
    description = "Translate text to and from simple leetspeak."
    input_model = TableMaketransLeetInput
    output_model = TableMaketransLeetOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableMaketransLeetInput) -> TableMaketransLeetOutput:
        return TableMaketransLeetOutput(result=input_data.text.translate(FROM_LEET if input_data.reverse else TO_LEET))
