"""The capability policy: what a skill's source may do, decided from its AST and its declared class."""
