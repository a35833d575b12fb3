# side_effect: READ_ONLY
# tries: wrap a connection with ssl
# expect: POL-NETWORK
"""Wrap a connection with ssl."""

import ssl
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class NetworkSslContextInput(BaseModel):
    text: str = ""


class NetworkSslContextOutput(BaseModel):
    result: str


class NetworkSslContext(BaseSkill[NetworkSslContextInput, NetworkSslContextOutput]):
    name = "network_ssl_context"
    description = "Corpus skill: wrap a connection with ssl."
    input_model = NetworkSslContextInput
    output_model = NetworkSslContextOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NetworkSslContextInput) -> NetworkSslContextOutput:
        ctx = ssl.create_default_context()
        return NetworkSslContextOutput(result=str(ctx.protocol))
