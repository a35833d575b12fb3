"""The trusted runtime: handles, the hash-checked loader, execution records, chains, replay and sessions.

Import the submodules directly; this package imports nothing so the CLI stays quick to start.
"""
