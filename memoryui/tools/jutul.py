"""Placeholder until the dialect lands."""
