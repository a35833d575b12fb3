"""Report the distinct domains of e-mail addresses (lowercased, sorted) and how many addresses there are."""

from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class DomainsOfAddressesInput(BaseModel):
    addresses: list[str]


class DomainsOfAddressesOutput(BaseModel):
    domains: list[str]
    count: int


class DomainsOfAddresses(BaseSkill[DomainsOfAddressesInput, DomainsOfAddressesOutput]):
    name = "domains_of_addresses"
    description = "Report the distinct domains of e-mail addresses and how many addresses there are."
    input_model = DomainsOfAddressesInput
    output_model = DomainsOfAddressesOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: DomainsOfAddressesInput) -> DomainsOfAddressesOutput:
        domains = {a.rpartition("@")[2].lower() for a in input_data.addresses if "@" in a}
        return DomainsOfAddressesOutput(domains=sorted(domains), count=len(input_data.addresses))
