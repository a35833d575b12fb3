"""Promotion: a verified, approved build becomes a trusted skill in the skills home."""
