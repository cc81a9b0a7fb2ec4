"""Pure functions shared by the trainers (returns, advantages, losses)."""
