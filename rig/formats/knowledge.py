"""One entry of a database's knowledge catalog (`<db>_kb.jsonl`, LiveSQLBench's layout as HybridDeepResearch uses it)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

#: The entry types LiveSQLBench's catalogs use (others are kept as written).
KNOWLEDGE_TYPES = ("calculation_knowledge", "domain_knowledge", "value_illustration")


class KnowledgeEntry(BaseModel):
    """A named piece of domain knowledge a query may need: a formula, a rule, or how values are written."""

    model_config = ConfigDict(extra="allow")

    id: int = Field(ge=0, description="number of the entry within its database; others refer to it by this id")
    knowledge: str = Field(min_length=1, description="the entry's title: the term a question uses")
    description: str = Field(default="", description="one sentence on what the entry is for")
    definition: str = Field(description="the rule, formula or value list itself")
    type: str = Field(description=f"one of {', '.join(KNOWLEDGE_TYPES)}")
    children_knowledge: int | list[int] = Field(default=-1, description="ids of the entries this one builds on, "
                                                                        "or -1 for none")
