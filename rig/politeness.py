"""Moved to `rig.network.politeness`; these names stay importable here for code on other branches."""

from rig.network.politeness import BACKOFF_STATUSES, USER_AGENT_SUFFIX, PoliteGate, Politeness, polite_goto

__all__ = ["BACKOFF_STATUSES", "USER_AGENT_SUFFIX", "PoliteGate", "Politeness", "polite_goto"]
