"""The skill contract's public import path (`kavi_assets.skills.base`), kept for the skills already forged."""
