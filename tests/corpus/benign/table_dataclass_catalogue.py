# side_effect: READ_ONLY
# tricky: a module-level tuple of instances of a frozen dataclass defined in the module
# family: module-tables
"""Look up products in a small built-in catalogue and total an order."""

from dataclasses import dataclass
from decimal import Decimal
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


@dataclass(frozen=True)
class Product:
    sku: str
    title: str
    price: Decimal


CATALOGUE = (
    Product("pen", "Fountain pen", Decimal("12.50")),
    Product("ink", "Ink bottle", Decimal("4.20")),
    Product("pad", "Note pad", Decimal("3.00")),
)
BY_SKU = {p.sku: p for p in CATALOGUE}


class TableDataclassCatalogueInput(BaseModel):
    order: dict[str, int]


class TableDataclassCatalogueOutput(BaseModel):
    lines: list[str]
    total: str
    unknown: list[str]


class TableDataclassCatalogue(BaseSkill[TableDataclassCatalogueInput, TableDataclassCatalogueOutput]):
    name = "table_dataclass_catalogue"
    description = "Look up products in a small built-in catalogue and total an order."
    input_model = TableDataclassCatalogueInput
    output_model = TableDataclassCatalogueOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableDataclassCatalogueInput) -> TableDataclassCatalogueOutput:
        lines: list[str] = []
        total = Decimal("0")
        unknown: list[str] = []
        for sku, qty in sorted(input_data.order.items()):
            product = BY_SKU.get(sku)
            if product is None:
                unknown.append(sku)
                continue
            total += product.price * qty
            lines.append(f"{qty} x {product.title} @ {product.price}")
        return TableDataclassCatalogueOutput(lines=lines, total=str(total), unknown=unknown)
