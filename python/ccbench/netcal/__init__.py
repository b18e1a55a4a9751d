"""Service-curve benchmark of Lübben & Fidler: estimator, bounds, probing."""
