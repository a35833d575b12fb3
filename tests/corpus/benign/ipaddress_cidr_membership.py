# side_effect: READ_ONLY
# tricky: ipaddress.ip_network/ip_address membership tests; no socket
# family: network-values
"""Tell which of a list of addresses fall inside given networks."""

import ipaddress
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IpaddressCidrMembershipInput(BaseModel):
    networks: list[str]
    addresses: list[str]


class IpaddressCidrMembershipOutput(BaseModel):
    matches: dict[str, str | None]
    invalid: list[str]
    private: list[str]


class IpaddressCidrMembership(BaseSkill[IpaddressCidrMembershipInput, IpaddressCidrMembershipOutput]):
    name = "ipaddress_cidr_membership"
    description = "Tell which of a list of addresses fall inside given networks."
    input_model = IpaddressCidrMembershipInput
    output_model = IpaddressCidrMembershipOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IpaddressCidrMembershipInput) -> IpaddressCidrMembershipOutput:
        nets = [ipaddress.ip_network(n, strict=False) for n in input_data.networks]
        matches: dict[str, str | None] = {}
        invalid: list[str] = []
        private: list[str] = []
        for text in input_data.addresses:
            try:
                addr = ipaddress.ip_address(text)
            except ValueError:
                invalid.append(text)
                continue
            matches[text] = next((str(n) for n in nets if addr.version == n.version and addr in n), None)
            if addr.is_private:
                private.append(text)
        return IpaddressCidrMembershipOutput(matches=matches, invalid=invalid, private=private)
