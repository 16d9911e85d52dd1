"""Model prices and what tokens cost: the bundled table `rig/data/prices.yaml`, a user's table named by `RIG_PRICES`
laid over it (its entries replace or add to the bundled ones), and the cost of tokens by the table's entry for a model.

No price is written in code: a model the table does not name has no cost (null), never 0 (docs/runner.md "Cost")."""

from __future__ import annotations

import os
from pathlib import Path

import yaml
from pydantic import ValidationError

from rig.errors import InputError
from rig.formats.files import read_limited
from rig.formats.usage import Price, PriceTable

#: The price table shipped with the rig.
BUNDLED_PRICES = Path(__file__).resolve().parent / "data" / "prices.yaml"
#: The environment variable naming a user's price table, laid over the bundled one.
PRICES_ENV = "RIG_PRICES"
PER_TOKENS = 1_000_000


def read_price_table(path: str | Path) -> PriceTable:
    """One price-table file; InputError naming the file, the field and the reason."""
    raw = read_limited(path, "the price table")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise InputError(str(path), None, f"not a YAML price table: {exc}") from None
    try:
        return PriceTable.model_validate(data if data is not None else {})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(str(path), ".".join(str(x) for x in err["loc"]) or None, err["msg"]) from None


def load_prices() -> PriceTable:
    """The price table in force: the bundled one with `$RIG_PRICES`'s entries laid over it (InputError for a bad
    user file, naming it). Read afresh each time: a run reads it once, before its first episode."""
    table = read_price_table(BUNDLED_PRICES)
    user = os.environ.get(PRICES_ENV)
    if user:
        mine = read_price_table(user)
        table = PriceTable(as_of=mine.as_of or table.as_of, models={**table.models, **mine.models})
    return table


def price_of(table: PriceTable, model: str) -> tuple[str, Price] | None:
    """The table's entry for `model` (`provider:model`, or a bare model name that one entry alone ends in), if any."""
    if model in table.models:
        return model, table.models[model]
    if ":" not in model:
        found = [(k, p) for k, p in table.models.items() if k.partition(":")[2] == model]
        if len(found) == 1:
            return found[0]
    return None


def token_cost(price: Price, tokens_in: int, tokens_out: int, tokens_cached: int | None = None) -> float:
    """US dollars for the tokens: uncached input at `input`, cached input at `cached_input` (else `input`), output
    at `output`, each per million tokens."""
    cached = min(max(tokens_cached or 0, 0), tokens_in)
    cached_rate = price.cached_input if price.cached_input is not None else price.input
    return ((tokens_in - cached) * price.input + cached * cached_rate + tokens_out * price.output) / PER_TOKENS
