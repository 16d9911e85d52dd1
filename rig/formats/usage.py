"""What an episode (or a judge's call) cost and how much the agent did: `Usage` in `episode.json` and `grade.json`;
what a CLI agent may report of its own LLM use (`AgentUsageReport`: the `report_usage` tool, the `RIG_USAGE_FILE`);
and the price table the rig computes costs from (`PriceTable`, `rig/data/prices.yaml`, docs/runner.md "Cost").

Unknown is null, never 0: an agent that drives no model records no tokens and no cost, and a model missing from the
price table gets tokens and a null cost."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, NonNegativeInt

UsageSource = Literal["browser-use", "report_usage", "usage_file", "judge"]


class Usage(BaseModel):
    """Tokens, cost and effort of one episode's attempt (or of one judge call). Null: not known (the agent drives no
    model, does not report its use, or its model has no price), never 0."""

    tokens_in: int | None = Field(default=None, description="input (prompt) tokens over every LLM call, cached ones "
                                  "included")
    tokens_cached: int | None = Field(default=None, description="of tokens_in, those read from a prompt cache (priced "
                                      "at the table's cached_input when it has one)")
    tokens_out: int | None = Field(default=None, description="output (completion) tokens over every LLM call")
    cost_usd: float | None = Field(default=None, description="US dollars: as the agent reported it, else computed from "
                                   "the price table for every call's model (null: a model is not in the table, or no "
                                   "tokens are known)")
    priced_as: list[str] | None = Field(default=None, description="the price-table entries the cost was computed "
                                        "with (null: reported by the agent, or not computed)")
    unpriced: list[str] | None = Field(default=None, description="models of LLM calls the price table has no entry for "
                                       "(the reason cost_usd is null)")
    llm_calls: int | None = Field(default=None, description="LLM calls (those that reported their tokens)")
    wall_s: float | None = Field(default=None, description="seconds the attempt took, start page included")
    steps: int | None = Field(default=None, description="recorded trajectory steps")
    tool_calls: int | None = Field(default=None, description="calls of the episode's tool server (mcp, cli agents) or "
                                   "browser-use's actions (null: the agent has no tools the rig counts)")
    observation_bytes: int | None = Field(default=None, description="UTF-8 bytes of what the rig showed the agent: the "
                                          "tool server's results (snapshots, fetched text, SQL rows), browser-use's "
                                          "state messages (text; images not counted); null for agents the rig shows "
                                          "nothing (scripted, cdp, operator)")
    source: UsageSource | None = Field(default=None, description="where the tokens came from: browser-use's own "
                                       "accounting, the agent's report_usage calls, its RIG_USAGE_FILE, or a judge call")


class AgentUsageReport(BaseModel):
    """What a CLI or MCP agent reports of its own LLM use: each `report_usage` call adds one such report to the
    episode's totals; a `RIG_USAGE_FILE` holds one report, the command's total, which replaces the calls' sum."""

    model_config = ConfigDict(extra="forbid")

    tokens_in: NonNegativeInt | None = Field(default=None, description="input tokens (cached ones included)")
    tokens_cached: NonNegativeInt | None = Field(default=None, description="of tokens_in, read from a prompt cache")
    tokens_out: NonNegativeInt | None = Field(default=None, description="output tokens")
    llm_calls: NonNegativeInt | None = Field(default=None, description="LLM calls these tokens were spent in")
    cost_usd: NonNegativeFloat | None = Field(default=None, description="what the calls cost, if the agent knows "
                                              "(else the rig prices the tokens by `model`)")
    model: str | None = Field(default=None, description="the model, `provider:model` as the price table names it "
                              "(e.g. `anthropic:claude-sonnet-4-5`), or its bare name")


class Price(BaseModel):
    """One model's price in US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: NonNegativeFloat = Field(description="per million input tokens")
    output: NonNegativeFloat = Field(description="per million output tokens")
    cached_input: NonNegativeFloat | None = Field(default=None, description="per million cached input tokens "
                                                  "(absent: charged as input)")


class PriceTable(BaseModel):
    """`prices.yaml`: per-token prices by model (`provider:model`, as `--model` names it)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["sgr-rig/prices/1"] = "sgr-rig/prices/1"
    as_of: str | None = Field(default=None, description="when these prices were read off the providers' pages")
    models: dict[str, Price] = Field(default_factory=dict, description="`provider:model` -> its price")
