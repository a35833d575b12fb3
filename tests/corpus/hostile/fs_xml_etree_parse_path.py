# side_effect: READ_ONLY
# tries: ElementTree.parse a file by path (fromstring is the pure part)
# expect: POL-FS POL-IMPORT
"""Parse an XML file from disk."""

import xml.etree.ElementTree as ET
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class FsXmlEtreeParsePathInput(BaseModel):
    path: str = "/etc/fonts/fonts.conf"


class FsXmlEtreeParsePathOutput(BaseModel):
    result: str


class FsXmlEtreeParsePath(BaseSkill[FsXmlEtreeParsePathInput, FsXmlEtreeParsePathOutput]):
    name = "fs_xml_etree_parse_path"
    description = "Parse an XML file from disk."
    input_model = FsXmlEtreeParsePathInput
    output_model = FsXmlEtreeParsePathOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: FsXmlEtreeParsePathInput) -> FsXmlEtreeParsePathOutput:
        return FsXmlEtreeParsePathOutput(result=ET.parse(input_data.path).getroot().tag)
