"""Checks that run a chat template on a synthetic conversation and compare its renderings."""
