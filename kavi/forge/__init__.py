"""The forge's steps as plain functions: what each Dagster asset calls, free of Dagster."""
