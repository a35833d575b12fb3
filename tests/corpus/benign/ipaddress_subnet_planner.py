# side_effect: READ_ONLY
# tricky: ipaddress subnets() and collapse_addresses for address planning
# family: network-values
"""Split a network into equal subnets and collapse a list of networks."""

import ipaddress
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class IpaddressSubnetPlannerInput(BaseModel):
    network: str
    new_prefix: int
    to_collapse: list[str] = []


class IpaddressSubnetPlannerOutput(BaseModel):
    subnets: list[str]
    collapsed: list[str]
    hosts_per_subnet: int


class IpaddressSubnetPlanner(BaseSkill[IpaddressSubnetPlannerInput, IpaddressSubnetPlannerOutput]):
    name = "ipaddress_subnet_planner"
    description = "Split a network into equal subnets and collapse a list of networks."
    input_model = IpaddressSubnetPlannerInput
    output_model = IpaddressSubnetPlannerOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: IpaddressSubnetPlannerInput) -> IpaddressSubnetPlannerOutput:
        net = ipaddress.ip_network(input_data.network, strict=True)
        if not net.prefixlen <= input_data.new_prefix <= net.max_prefixlen or input_data.new_prefix - net.prefixlen > 12:
            raise ValueError("new prefix out of range")
        subnets = list(net.subnets(new_prefix=input_data.new_prefix))
        collapsed = ipaddress.collapse_addresses(ipaddress.ip_network(n) for n in input_data.to_collapse)
        return IpaddressSubnetPlannerOutput(subnets=[str(s) for s in subnets], collapsed=[str(c) for c in collapsed],
                   hosts_per_subnet=max(0, subnets[0].num_addresses - 2))
