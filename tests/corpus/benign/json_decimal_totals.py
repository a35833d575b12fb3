# side_effect: READ_ONLY
# tricky: json.loads with parse_float=Decimal and an object_hook
# family: text-formats
"""Total the amounts in a JSON list of invoices without float rounding."""

import json
from decimal import Decimal
from typing import Any
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


def _hook(obj: dict[str, Any]) -> dict[str, Any]:
    return {k.lower(): v for k, v in obj.items()}


class JsonDecimalTotalsInput(BaseModel):
    invoices_json: str


class JsonDecimalTotalsOutput(BaseModel):
    count: int
    total: str


class JsonDecimalTotals(BaseSkill[JsonDecimalTotalsInput, JsonDecimalTotalsOutput]):
    name = "json_decimal_totals"
    description = "Total the amounts in a JSON list of invoices without float rounding."
    input_model = JsonDecimalTotalsInput
    output_model = JsonDecimalTotalsOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: JsonDecimalTotalsInput) -> JsonDecimalTotalsOutput:
        try:
            invoices = json.loads(input_data.invoices_json, parse_float=Decimal, object_hook=_hook)
        except json.JSONDecodeError as err:
            raise ValueError(f"invalid JSON at line {err.lineno}: {err.msg}") from err
        total = sum((Decimal(str(i.get("amount", 0))) for i in invoices), Decimal("0"))
        return JsonDecimalTotalsOutput(count=len(invoices), total=str(total))
