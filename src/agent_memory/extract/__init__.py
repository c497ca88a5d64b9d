"""Automatic extraction: the model behind a small protocol, prompts, budget and dedup."""
