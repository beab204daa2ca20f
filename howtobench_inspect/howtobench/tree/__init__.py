"""Tree-of-Writing: the tree as data, its negotiator, experts, rules and aggregation."""
