# side_effect: READ_ONLY
# tricky: a module-level tuple of ipaddress.ip_network objects built with a comprehension
# family: module-tables
"""Tell whether hosts given as IP addresses are in reserved ranges."""

import ipaddress
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


RESERVED = tuple(ipaddress.ip_network(n) for n in (
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "127.0.0.0/8", "169.254.0.0/16", "fc00::/7", "::1/128"))


class TableIpaddressPrivateRangesInput(BaseModel):
    addresses: list[str]


class TableIpaddressPrivateRangesOutput(BaseModel):
    reserved: dict[str, str | None]


class TableIpaddressPrivateRanges(BaseSkill[TableIpaddressPrivateRangesInput, TableIpaddressPrivateRangesOutput]):
    name = "table_ipaddress_private_ranges"
    description = "Tell whether hosts given as IP addresses are in reserved ranges."
    input_model = TableIpaddressPrivateRangesInput
    output_model = TableIpaddressPrivateRangesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: TableIpaddressPrivateRangesInput) -> TableIpaddressPrivateRangesOutput:
        out: dict[str, str | None] = {}
        for text in input_data.addresses:
            addr = ipaddress.ip_address(text)
            out[text] = next((str(n) for n in RESERVED if n.version == addr.version and addr in n), None)
        return TableIpaddressPrivateRangesOutput(reserved=out)
