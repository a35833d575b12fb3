"""The dynamic partitions of the forge: one per proposal, keyed by skill name."""

import dagster as dg

PROPOSALS = "proposals"

proposals_partitions = dg.DynamicPartitionsDefinition(name=PROPOSALS)
