"""Chat models for LLM-driven agents: the scripted model for offline runs (`rig.llm.scripted`)."""
