"""The report page: the headline comparison of the strategy families, then every measurement's section."""
