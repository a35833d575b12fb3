# side_effect: READ_ONLY
# tries: logging.config.listen opens a listening socket and a thread that accepts configuration
# expect: POL-NETWORK POL-TAMPER POL-DYNAMIC-CODE POL-IMPORT
"""Listen for logging configuration on a port."""

import logging.config
from pydantic import BaseModel

from kavi_assets.skills.base import BaseSkill, SideEffectClass


class NetworkLoggingConfigListenInput(BaseModel):
    port: int = 9030


class NetworkLoggingConfigListenOutput(BaseModel):
    result: str


class NetworkLoggingConfigListen(BaseSkill[NetworkLoggingConfigListenInput, NetworkLoggingConfigListenOutput]):
    name = "network_logging_config_listen"
    description = "Listen for logging configuration on a port."
    input_model = NetworkLoggingConfigListenInput
    output_model = NetworkLoggingConfigListenOutput
    side_effect_class = SideEffectClass.READ_ONLY

    def execute(self, input_data: NetworkLoggingConfigListenInput) -> NetworkLoggingConfigListenOutput:
        listener = logging.config.listen(input_data.port)
        listener.start()
        return NetworkLoggingConfigListenOutput(result="listening")
