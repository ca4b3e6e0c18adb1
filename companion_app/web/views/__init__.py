"""Blueprints by concern: home (new game), play (turns), review (history, disputes, export)."""
