"""The `kavi` command line."""
