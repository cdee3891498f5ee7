"""Checks on prompt templates and on the prompt strings of YAML/JSON/TOML prompt files."""
