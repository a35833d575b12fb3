# side_effect: READ_ONLY
# tricky: xml.etree.ElementTree.fromstring on a document held in a string
# family: text-formats
"""Read item titles and prices from an XML catalogue given as text."""

import xml.etree.ElementTree as ET
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class XmlEtreeFromstringInput(BaseModel):
    xml_text: str


class XmlEtreeFromstringOutput(BaseModel):
    items: list[dict[str, str]]


class XmlEtreeFromstring(BaseSkill[XmlEtreeFromstringInput, XmlEtreeFromstringOutput]):
    name = "xml_etree_fromstring"
    description = "Read item titles and prices from an XML catalogue given as text."
    input_model = XmlEtreeFromstringInput
    output_model = XmlEtreeFromstringOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: XmlEtreeFromstringInput) -> XmlEtreeFromstringOutput:
        try:
            root = ET.fromstring(input_data.xml_text)
        except ET.ParseError as err:
            raise ValueError(f"invalid XML: {err}") from err
        items = []
        for item in root.iter("item"):
            items.append({"id": item.get("id", ""), "title": item.findtext("title", default=""),
                          "price": item.findtext("price", default="")})
        return XmlEtreeFromstringOutput(items=items)
