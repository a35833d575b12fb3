"""The model side: an OpenAI-compatible client, the recorded model for offline runs, prompts, answer parsing."""
