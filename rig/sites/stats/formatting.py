"""How the stats portal writes numbers: on pages (grouped, signed) and in CSV (plain)."""

from __future__ import annotations

#: Decimal places per indicator.
DECIMALS = {"lifeExp": 3, "pop": 0, "gdpPercap": 2}


def cell(kind: str, indicator: str, value: object, csv: bool = False) -> str:
    """One cell as the portal displays it (or, with csv=True, as plain machine-readable text)."""
    if value is None:
        return ""
    if kind in ("country", "text"):
        return str(value)
    if kind in ("year", "count"):
        return str(int(value))  # type: ignore[call-overload]
    number = float(value)  # type: ignore[arg-type]
    if kind == "pct":
        return f"{number:.1f}" if csv else f"{number:+.1f}%"
    places = 0 if kind == "total" else DECIMALS[indicator]
    sign = "+" if kind == "change" and not csv else ""
    group = "" if csv else ","
    return f"{number:{sign}{group}.{places}f}"
