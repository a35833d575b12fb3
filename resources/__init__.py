"""Dagster ConfigurableResources: the skills home, the ledger, the model endpoint, the gate runner."""
