"""Decomposition (RIVA): split a proposal the forge cannot verify into children and a composition."""
