"""Model routing: complexity, task types, Beta posteriors and Thompson sampling."""
