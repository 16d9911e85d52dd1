"""Agents: one interface, one module per agent kind."""
