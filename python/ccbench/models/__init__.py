"""Analytical models: one module per model, pure numpy/scipy."""
