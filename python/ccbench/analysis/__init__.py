"""Analysis of run tables: delay distributions, goodput, loss events, fairness."""
