"""VulnDB's data: vendors, products and CVE records, generated deterministically (seeded).

Everything is synthetic: vendor and product names, CVE numbers, descriptions, dates and version ranges are made up
by `generate()` from a fixed seed. CVSS v3.1 and v2.0 base scores are computed from their (generated) vectors with
the specifications' formulas; the v4.0 scores are synthetic (derived from the v3.1 metrics, not computed by the v4.0
specification). `dataset()` holds the raw records the gold functions read; `query()` answers the site's SQL.
"""

from __future__ import annotations

import math
import random
import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Any

from rig.sites.memdb import MemoryDB

SEED = 27
DATA_VERSION = "vulndb-synthetic==1 (seed 27)"
FIRST_DAY, LAST_DAY = date(2016, 1, 1), date(2024, 6, 30)
V2_RETIRED = date(2022, 7, 13)  # no CVSS v2.0 assessments for records published after this day

VENDORS: dict[str, tuple[str, ...]] = {
    "Apexsoft": ("Apex Gateway Server", "Apex Gateway Client", "Apex Directory", "Apex Mail Relay"),
    "Bluewire": ("Bluewire Router OS", "Bluewire Mesh Controller", "Bluewire VPN Client"),
    "Cobaltix": ("Cobaltix CMS", "Cobaltix Forms Plugin", "Cobaltix Media Library"),
    "Driftwood Labs": ("Driftwood Sync", "Driftwood Backup Agent"),
    "Emberline": ("Emberline HMI", "Emberline PLC Firmware", "Emberline SCADA Historian"),
    "Fernhill Systems": ("Fernhill ERP", "Fernhill Payroll", "Fernhill Portal"),
    "Glasswing": ("Glasswing Browser", "Glasswing PDF Reader", "Glasswing Updater"),
    "Halcyon Networks": ("Halcyon Firewall", "Halcyon Load Balancer", "Halcyon SSL VPN"),
    "Kestrel Works": ("Kestrel Build Server", "Kestrel Artifact Store"),
    "Lumen Forge": ("Lumen Image Library", "Lumen Font Renderer", "Lumen Codec"),
    "Marlow Digital": ("Marlow Camera Firmware", "Marlow NVR"),
    "Northgate Software": ("Northgate Identity Server", "Northgate Auth SDK", "Northgate Admin Console"),
}
#: Products released as a pair: a record of one often affects the other too.
PAIRS = {"Apex Gateway Server": "Apex Gateway Client", "Northgate Identity Server": "Northgate Auth SDK",
         "Halcyon SSL VPN": "Halcyon Firewall", "Glasswing Browser": "Glasswing PDF Reader"}


@dataclass(frozen=True)
class Weakness:
    """A CWE with a description template and the CVSS v3.1 metrics typical of it (choices per metric)."""

    cwe: str
    name: str
    text: str
    metrics: dict[str, str]  # metric -> allowed values, e.g. {"AV": "N", "PR": "NL"}


WEAKNESSES: tuple[Weakness, ...] = (
    Weakness("CWE-79", "Improper Neutralization of Input During Web Page Generation ('Cross-site Scripting')",
             "Cross-site scripting (XSS) in the {component} of {product} allows remote attackers to "
             "inject arbitrary web script or HTML via the {param} parameter.",
             {"AV": "N", "AC": "L", "PR": "NL", "UI": "R", "S": "C", "C": "L", "I": "L", "A": "N"}),
    Weakness("CWE-89", "Improper Neutralization of Special Elements used in an SQL Command ('SQL Injection')",
             "SQL injection in the {component} of {product} allows remote authenticated users to "
             "execute arbitrary SQL commands via the {param} parameter.",
             {"AV": "N", "AC": "L", "PR": "NL", "UI": "N", "S": "U", "C": "H", "I": "HL", "A": "HN"}),
    Weakness("CWE-787", "Out-of-bounds Write",
             "An out-of-bounds write in the {component} of {product} allows remote attackers to "
             "execute arbitrary code via a crafted {input}.",
             {"AV": "NL", "AC": "LH", "PR": "N", "UI": "NR", "S": "U", "C": "H", "I": "H", "A": "H"}),
    Weakness("CWE-125", "Out-of-bounds Read",
             "An out-of-bounds read in the {component} of {product} allows remote attackers to "
             "obtain sensitive information from process memory via a crafted {input}.",
             {"AV": "NL", "AC": "L", "PR": "N", "UI": "NR", "S": "U", "C": "HL", "I": "N", "A": "NL"}),
    Weakness("CWE-22", "Improper Limitation of a Pathname to a Restricted Directory ('Path Traversal')",
             "Path traversal in the {component} of {product} allows remote attackers to read "
             "arbitrary files via a .. (dot dot) in the {param} parameter.",
             {"AV": "N", "AC": "L", "PR": "NL", "UI": "N", "S": "U", "C": "H", "I": "NL", "A": "N"}),
    Weakness("CWE-352", "Cross-Site Request Forgery (CSRF)",
             "Cross-site request forgery (CSRF) in the {component} of {product} allows remote "
             "attackers to hijack the authentication of administrators for requests that change the {setting}.",
             {"AV": "N", "AC": "L", "PR": "N", "UI": "R", "S": "U", "C": "HN", "I": "H", "A": "HN"}),
    Weakness("CWE-287", "Improper Authentication",
             "Improper authentication in the {component} of {product} allows remote attackers to "
             "bypass authentication via a crafted {token} token.",
             {"AV": "N", "AC": "LH", "PR": "N", "UI": "N", "S": "UC", "C": "H", "I": "H", "A": "HL"}),
    Weakness("CWE-502", "Deserialization of Untrusted Data",
             "Deserialization of untrusted data in the {component} of {product} allows remote "
             "attackers to execute arbitrary code via a crafted serialized object.",
             {"AV": "N", "AC": "L", "PR": "NL", "UI": "N", "S": "U", "C": "H", "I": "H", "A": "H"}),
    Weakness("CWE-400", "Uncontrolled Resource Consumption",
             "Uncontrolled resource consumption in the {component} of {product} allows remote "
             "attackers to cause a denial of service via a flood of crafted {input}s.",
             {"AV": "NA", "AC": "L", "PR": "N", "UI": "N", "S": "U", "C": "N", "I": "N", "A": "HL"}),
    Weakness("CWE-918", "Server-Side Request Forgery (SSRF)",
             "Server-side request forgery (SSRF) in the {component} of {product} allows remote "
             "attackers to make the server send requests to internal hosts via the {param} parameter.",
             {"AV": "N", "AC": "L", "PR": "NL", "UI": "N", "S": "C", "C": "L", "I": "L", "A": "N"}),
    Weakness("CWE-90", "Improper Neutralization of Special Elements used in an LDAP Query ('LDAP Injection')",
             "LDAP injection in the {component} of {product} allows remote attackers to read "
             "directory entries of other users via the {param} parameter.",
             {"AV": "N", "AC": "L", "PR": "N", "UI": "N", "S": "U", "C": "H", "I": "NL", "A": "N"}),
    Weakness("CWE-798", "Use of Hard-coded Credentials",
             "Hard-coded credentials in the {component} of {product} allow remote attackers to log "
             "in as a service account.",
             {"AV": "NA", "AC": "L", "PR": "N", "UI": "N", "S": "U", "C": "H", "I": "H", "A": "H"}),
)
_COMPONENTS = ("login page", "search handler", "export module", "REST API", "file upload handler",
               "session manager", "admin console", "report generator", "image parser", "update service",
               "configuration import", "message parser", "session token replay check", "template engine")
_PARAMS = ("q", "redirect", "name", "filter", "path", "id", "callback", "lang", "sort", "next")
_INPUTS = ("packet", "image file", "font file", "PDF document", "request header", "archive", "certificate")
_SETTINGS = ("password policy", "network settings", "user roles", "backup schedule", "SMTP relay")
_TOKENS = ("session", "refresh", "SAML", "API", "password-reset")

# ---- CVSS ------------------------------------------------------------------------------------------------------

_V31 = {"AV": {"N": 0.85, "A": 0.62, "L": 0.55, "P": 0.2}, "AC": {"L": 0.77, "H": 0.44},
        "UI": {"N": 0.85, "R": 0.62}, "CIA": {"H": 0.56, "L": 0.22, "N": 0.0}}


def _roundup(x: float) -> float:
    """CVSS v3.1 Roundup: the smallest number of one decimal place at least x (floating-point safe)."""
    n = round(x * 100000)
    return n / 100000.0 if n % 10000 == 0 else (math.floor(n / 10000) + 1) / 10.0


def cvss31(m: dict[str, str]) -> float:
    """The CVSS v3.1 base score of a metric dict (AV, AC, PR, UI, S, C, I, A)."""
    changed = m["S"] == "C"
    pr = {"N": 0.85, "L": 0.68 if changed else 0.62, "H": 0.5 if changed else 0.27}[m["PR"]]
    iss = 1 - math.prod(1 - _V31["CIA"][m[k]] for k in "CIA")
    impact = 7.52 * (iss - 0.029) - 3.25 * (iss - 0.02) ** 15 if changed else 6.42 * iss
    exploit = 8.22 * _V31["AV"][m["AV"]] * _V31["AC"][m["AC"]] * pr * _V31["UI"][m["UI"]]
    if impact <= 0:
        return 0.0
    return _roundup(min((1.08 if changed else 1.0) * (impact + exploit), 10))


def cvss2(m: dict[str, str]) -> float:
    """The CVSS v2.0 base score of a metric dict (AV, AC, Au, C, I, A)."""
    cia = {"N": 0.0, "P": 0.275, "C": 0.66}
    impact = 10.41 * (1 - math.prod(1 - cia[m[k]] for k in "CIA"))
    exploit = 20 * {"L": 0.395, "A": 0.646, "N": 1.0}[m["AV"]] * {"H": 0.35, "M": 0.61, "L": 0.71}[m["AC"]] \
        * {"M": 0.45, "S": 0.56, "N": 0.704}[m["Au"]]
    score = ((0.6 * impact) + (0.4 * exploit) - 1.5) * (0 if impact == 0 else 1.176)
    return float(f"{score + 1e-9:.1f}")


def severity(version: str, score: float) -> str:
    """The qualitative rating of a base score (v2.0 has no Critical)."""
    if version == "2.0":
        return "LOW" if score < 4 else "MEDIUM" if score < 7 else "HIGH"
    if score == 0:
        return "NONE"
    return "LOW" if score < 4 else "MEDIUM" if score < 7 else "HIGH" if score < 9 else "CRITICAL"


def _v2_metrics(m: dict[str, str]) -> dict[str, str]:
    to2 = {"H": "C", "L": "P", "N": "N"}
    return {"AV": {"N": "N", "A": "A", "L": "L", "P": "L"}[m["AV"]], "AC": "L" if m["AC"] == "L" else "M",
            "Au": {"N": "N", "L": "S", "H": "M"}[m["PR"]], "C": to2[m["C"]], "I": to2[m["I"]], "A": to2[m["A"]]}


def _v4(m: dict[str, str], rng: random.Random) -> tuple[float, str]:
    """A synthetic v4.0 score near the v3.1 one, and a v4.0-shaped vector from the same base metrics."""
    score = min(10.0, max(0.1, round(cvss31(m) + rng.choice((-0.6, -0.3, 0.0, 0.0, 0.2, 0.4)), 1)))
    at = "P" if m["AC"] == "H" else "N"
    ui = "P" if m["UI"] == "R" else "N"
    sub = "L" if m["S"] == "C" else "N"
    vector = (f"CVSS:4.0/AV:{m['AV']}/AC:L/AT:{at}/PR:{m['PR']}/UI:{ui}/VC:{m['C']}/VI:{m['I']}/VA:{m['A']}"
              f"/SC:{sub}/SI:{sub}/SA:N")
    return score, vector


# ---- generation ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VulnData:
    """The generated records: CVEs, their metrics, and the product version ranges each affects."""

    cves: list[dict[str, Any]]
    metrics: list[dict[str, Any]]  # {cve, version, score, severity, vector}
    configs: list[dict[str, Any]]  # {cve, vendor, product, start_incl, end_excl, end_incl}


def _day(rng: random.Random, lo: date, hi: date) -> date:
    return lo + timedelta(days=rng.randint(0, (hi - lo).days))


def _version(rng: random.Random, product: str, when: date) -> tuple[int, int, int]:
    """A product's version current at a date: a new major every two years, minor releases in between."""
    offset = sum(map(ord, product)) % 3
    major = 1 + offset + (when.year - 2016) // 2
    return major, (when.month - 1) // 2 + rng.randint(0, 3), rng.randint(0, 12)


def _ranges(rng: random.Random, product: str, published: date) -> list[tuple[str, str, str]]:
    """The affected ranges of one product: (from incl., up to excl., up to incl.)."""
    major, minor, patch = _version(rng, product, published)
    fix = f"{major}.{minor}.{patch}"
    kind = rng.random()
    if kind < 0.15:  # no fix yet: affected up to and including the current release
        last = f"{major}.{minor}.{max(0, patch - 1)}"
        return [("", "", last)]
    first = f"{major}.0.0" if rng.random() < 0.6 else ""
    out = [(first, fix, "")]
    if kind > 0.75 and major > 1:  # an older branch still maintained, fixed separately
        out.insert(0, (f"{major - 1}.0.0", f"{major - 1}.{rng.randint(4, 9)}.{rng.randint(1, 20)}", ""))
    return out


def _cves(rng: random.Random) -> VulnData:
    cves, metrics, configs = [], [], []
    taken: set[str] = set()
    for vendor, products in VENDORS.items():
        for product in products:
            for _ in range(rng.randint(10, 42)):
                published = _day(rng, FIRST_DAY, LAST_DAY)
                year = published.year - (1 if rng.random() < 0.1 and published.month < 4 else 0)
                cve = f"CVE-{year}-{rng.randint(1000, 49999)}"
                while cve in taken:
                    cve = f"CVE-{year}-{rng.randint(1000, 49999)}"
                taken.add(cve)
                if rng.random() < 0.22 and published < date(2024, 1, 1):  # reanalysed in 2024
                    modified = _day(rng, date(2024, 1, 2), LAST_DAY)
                else:
                    modified = min(LAST_DAY, published + timedelta(days=rng.randint(0, 75)))
                w = rng.choice(WEAKNESSES)
                m = {k: rng.choice(v) for k, v in w.metrics.items()}
                affected = [product]
                if product in PAIRS and rng.random() < 0.45:
                    affected.append(PAIRS[product])
                for p in affected:
                    ranges = _ranges(rng, p, published)
                    configs += [{"cve": cve, "vendor": vendor, "product": p, "start_incl": a, "end_excl": b,
                                 "end_incl": c} for a, b, c in ranges]
                # descriptions never name versions: the affected ranges are on the record's page only
                text = w.text.format(component=rng.choice(_COMPONENTS), product=product, param=rng.choice(_PARAMS),
                                     input=rng.choice(_INPUTS), setting=rng.choice(_SETTINGS),
                                     token=rng.choice(_TOKENS))
                cves.append({"cve": cve, "vendor": vendor, "product": product, "published": published.isoformat(),
                             "modified": modified.isoformat(), "cwe": w.cwe, "cwe_name": w.name,
                             "description": text})
                v31 = cvss31(m)
                vec31 = "CVSS:3.1/" + "/".join(f"{k}:{m[k]}" for k in ("AV", "AC", "PR", "UI", "S", "C", "I", "A"))
                metrics.append({"cve": cve, "version": "3.1", "score": v31, "severity": severity("3.1", v31),
                                "vector": vec31})
                if published <= V2_RETIRED:
                    m2 = _v2_metrics(m)
                    v2 = cvss2(m2)
                    metrics.append({"cve": cve, "version": "2.0", "score": v2, "severity": severity("2.0", v2),
                                    "vector": "/".join(f"{k}:{m2[k]}" for k in ("AV", "AC", "Au", "C", "I", "A"))})
                if published >= date(2023, 6, 1) and rng.random() < 0.7 or modified.year == 2024 and rng.random() < 0.3:
                    v4, vec4 = _v4(m, rng)
                    metrics.append({"cve": cve, "version": "4.0", "score": v4, "severity": severity("4.0", v4),
                                    "vector": vec4})
    return VulnData(cves, metrics, configs)


@lru_cache(maxsize=1)
def dataset() -> VulnData:
    """Every record of the catalogue, generated from the fixed seed (the same on every machine)."""
    return _cves(random.Random(SEED))


def _tables() -> dict[str, list[dict[str, Any]]]:
    data = dataset()
    return {"cves": data.cves, "metrics": data.metrics, "configs": data.configs}


_SCHEMA = (
    "CREATE TABLE cves (cve TEXT PRIMARY KEY, vendor TEXT, product TEXT, published TEXT, modified TEXT, cwe TEXT,"
    " cwe_name TEXT, description TEXT);"
    "CREATE TABLE metrics (cve TEXT, version TEXT, score REAL, severity TEXT, vector TEXT);"
    "CREATE TABLE configs (cve TEXT, vendor TEXT, product TEXT, start_incl TEXT, end_excl TEXT, end_incl TEXT);"
    "CREATE INDEX metrics_cve ON metrics (cve, version);"
    "CREATE INDEX configs_product ON configs (vendor, product);"
)
DB = MemoryDB(_SCHEMA, _tables)


def _connection() -> sqlite3.Connection:
    """The loaded database (the site's `warm`: built before the server accepts requests)."""
    return DB.connection


def query(sql: str, params: dict[str, Any] | tuple[Any, ...] | list[Any] = ()) -> list[sqlite3.Row]:
    """Run one read-only statement on the shared database; every row."""
    return DB.query(sql, params)
