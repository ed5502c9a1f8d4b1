"""tcp-cocktail benchmark library: statistics, tables, plots, metadata,
namespaces and traffic helpers used by bench/scenarios/*."""
