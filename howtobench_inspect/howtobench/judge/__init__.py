"""What every LLM judge shares: the materials it reads and the way its JSON replies are asked for."""
