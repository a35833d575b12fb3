"""The scanner's rule families, one module each, with their tests side by side in tests/policy."""
