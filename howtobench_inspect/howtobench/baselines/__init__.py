"""Baseline scorers beside the Tree-of-Writing judge."""
