"""Judgement: what the findings advise and what they cost (used by the rules)."""
