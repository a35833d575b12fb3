"""Skill proposals: the validated SKILL_SPEC a build starts from."""
