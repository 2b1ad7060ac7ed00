"""Framework glue. Each module imports its framework on import; ``grammar_decode`` itself never
imports any of them."""
