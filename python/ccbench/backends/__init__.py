"""Backends that run a Scenario and return a Run."""
