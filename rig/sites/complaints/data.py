"""The complaints site's data: a synthetic consumer-complaint register, generated deterministically from a seed, and
the in-memory sqlite3 database (with an FTS5 index over narratives, issues and companies) the site answers from.

The register is made up (no real company, person or complaint): 2019-2023, six products with their sub-products
and issues, twenty companies, sixteen states, and a narrative for a little over half of the complaints, written
from sentence banks whose wording (`medical bill`, `doctors`, `loan modification`, `forbearance`, ...) the
tasks' search terms tell apart.
"""

from __future__ import annotations

import random
import sqlite3
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache

from rig.sites.memdb import MemoryDB

SEED = 34
DATA_VERSION = "complaints-synthetic==1"
FIRST_DAY, LAST_DAY = date(2019, 1, 1), date(2023, 12, 31)

#: Product -> sub-products (the hierarchy of the search form) and issues.
PRODUCTS: dict[str, dict[str, tuple[str, ...]]] = {
    "Debt collection": {
        "sub": ("Medical debt", "Credit card debt", "Auto debt", "Payday loan debt", "Other debt"),
        "issues": ("Attempts to collect debt not owed", "Written notification about debt",
                   "False statements or representation", "Communication tactics")},
    "Credit card": {
        "sub": ("General-purpose credit card or charge card", "Store credit card"),
        "issues": ("Fees or interest", "Problem with a purchase shown on your statement", "Getting a credit card",
                   "Closing your account")},
    "Mortgage": {
        "sub": ("Conventional home mortgage", "FHA mortgage", "VA mortgage",
                "Home equity loan or line of credit (HELOC)"),
        "issues": ("Trouble during payment process", "Struggling to pay mortgage",
                   "Applying for a mortgage or refinancing an existing mortgage", "Closing on a mortgage")},
    "Checking or savings account": {
        "sub": ("Checking account", "Savings account", "CD (Certificate of Deposit)"),
        "issues": ("Managing an account", "Problem caused by your funds being low", "Opening an account",
                   "Closing an account")},
    "Credit reporting": {
        "sub": ("Credit reporting", "Other personal consumer report"),
        "issues": ("Incorrect information on your report", "Problem with a company's investigation into an existing "
                   "problem", "Improper use of your report")},
    "Student loan": {
        "sub": ("Federal student loan servicing", "Private student loan"),
        "issues": ("Dealing with your lender or servicer", "Struggling to repay your loan", "Getting a loan")},
}
#: Complaints per year and product (before random variation).
VOLUME = {"Debt collection": 520, "Credit card": 330, "Mortgage": 300, "Checking or savings account": 260,
          "Credit reporting": 420, "Student loan": 300}
#: Company -> {product or "product/sub-product": weight}.
COMPANIES: dict[str, dict[str, float]] = {
    "Northfield National Bank": {"Credit card/General-purpose credit card or charge card": 3,
                                 "Checking or savings account": 4, "Mortgage": 2},
    "Meridian Card Services": {"Credit card/General-purpose credit card or charge card": 6},
    "Summit Retail Credit": {"Credit card/Store credit card": 5},
    "Brightway Stores Financial": {"Credit card/Store credit card": 4},
    "Redwood Trust Bank": {"Credit card/General-purpose credit card or charge card": 2,
                           "Checking or savings account": 3, "Mortgage": 1.5, "Credit card/Store credit card": 0.6},
    "Evergreen Community Credit Union": {"Checking or savings account": 2, "Credit card": 1, "Mortgage": 0.8},
    "Prairie Federal Savings": {"Checking or savings account": 2.5, "Mortgage": 1.5},
    "Harbor Mortgage Company": {"Mortgage": 4},
    "Lakeshore Home Loans": {"Mortgage": 3.5},
    "Cascade Recovery Group": {"Debt collection": 4},
    "Pinnacle Receivables LLC": {"Debt collection": 3.5},
    "Harborline Collections": {"Debt collection": 2, "Debt collection/Medical debt": 3},
    "Keystone Medical Billing Services": {"Debt collection/Medical debt": 4},
    "Clearview Credit Bureau": {"Credit reporting": 5},
    "Axis Consumer Data": {"Credit reporting": 4},
    "Veritas Information Services": {"Credit reporting": 3},
    "Scholar Loan Servicing": {"Student loan/Federal student loan servicing": 5},
    "Campus Capital Lending": {"Student loan/Private student loan": 4},
    "Horizon Education Finance": {"Student loan/Private student loan": 3,
                                  "Student loan/Federal student loan servicing": 1},
    "Atlas Auto Finance": {"Debt collection/Auto debt": 3},
}
STATES: dict[str, float] = {"CA": 12, "TX": 9, "FL": 8, "NY": 7, "PA": 4.5, "IL": 4.5, "OH": 4, "GA": 4, "NC": 3.5,
                            "MI": 3.2, "NJ": 3, "VA": 2.8, "WA": 2.5, "AZ": 2.4, "MA": 2.2, "CO": 2}
SUBMITTED_VIA = ("Web", "Web", "Web", "Phone", "Referral", "Postal mail", "Email")
RESPONSES = ("Closed with explanation", "Closed with explanation", "Closed with explanation",
             "Closed with non-monetary relief", "Closed with monetary relief", "In progress")

#: Sentence banks. Per product: general sentences; per theme: the wording the search terms tell apart.
_GENERAL = {
    "Debt collection": (
        "A collection agency keeps calling me about a debt I do not recognize.",
        "I sent a letter disputing the debt and never received a validation notice.",
        "The collector threatened to report the account to the credit bureaus.",
        "They call my workplace several times a week even after I asked them to stop.",
        "The amount they say I owe is higher than the original balance.",
        "The account was sold to another agency and now two companies want payment."),
    "Credit card": (
        "I was charged an annual fee that was waived when I opened the account.",
        "A purchase I returned was never credited to my statement.",
        "The interest rate went up without any notice to me.",
        "I asked to close the account and it is still open with a balance.",
        "My credit limit was lowered after I paid the card down."),
    "Mortgage": (
        "My escrow payment increased without explanation.",
        "The servicer charged late fees even though I paid on time.",
        "I was not given a reason for the denial of my refinance application.",
        "My payment was applied to the principal instead of the monthly installment.",
        "The closing was delayed three times and my rate lock expired."),
    "Checking or savings account": (
        "The bank froze my account without telling me why.",
        "I was charged an overdraft fee for a transaction that had already cleared.",
        "A deposit I made at the branch took two weeks to appear.",
        "They closed my savings account and mailed a check I never received.",
        "The promotional bonus for opening the account was never paid."),
    "Credit reporting": (
        "An account that is not mine appears on my credit report.",
        "I disputed the late payment and the bureau verified it without any investigation.",
        "My report lists an old address and a name I have never used.",
        "A hard inquiry I never authorized appears on my report.",
        "The bureau did not answer my dispute within thirty days."),
    "Student loan": (
        "My payments were applied to the wrong loan.",
        "The lender added interest after I paid off the balance.",
        "The servicer lost my paperwork for an income-driven repayment plan.",
        "I was told my cosigner could be released, then the request was denied."),
}
_MEDICAL = (  # "medical OR doctor" matches the first three; "medical bills OR doctors" the third and fourth
    "The debt is for a medical bill that my insurance already paid.",
    "I was told the account came from my doctor's office, but I paid the doctor in full.",
    "These medical bills were supposed to be covered under a payment plan with the hospital.",
    "I have receipts showing I paid both doctors who treated me.",
    "The hospital sent the account to collections without sending me a statement.",
    "The account is for an emergency room visit from two years ago.")
_MEDICAL_ELSEWHERE = {
    "Credit card": "I used the card to pay a medical bill and was charged a fee anyway.",
    "Credit reporting": "A medical debt that was paid still appears on my report.",
}
_MODIFICATION = (  # the phrase "loan modification" is in the first two only
    "I applied for a loan modification and the servicer keeps losing my documents.",
    "My loan modification was approved but the new payment was never applied.",
    "The servicer said my loan was not eligible, and no modification was offered.",
    "After the modification of my escrow account my loan payment went up.")
_MODIFICATION_ELSEWHERE = "My loan modification was reported to the bureaus as a missed payment."
_FORBEARANCE = (
    "I requested forbearance during my unemployment and it was never processed.",
    "The servicer placed my loans in deferment without asking me.",
    "They told me forbearance and deferment were both unavailable for my loans.",
    "I was steered into forbearance instead of an income-driven plan.")


@dataclass(frozen=True)
class Complaint:
    """One complaint as the register holds it."""

    id: int
    date_received: str
    product: str
    sub_product: str
    issue: str
    company: str
    state: str
    submitted_via: str
    company_response: str
    timely: str
    narrative: str  # "" when the consumer did not consent to publish one


def _weighted(rng: random.Random, weights: dict[str, float]) -> str:
    names = sorted(weights)
    return rng.choices(names, weights=[weights[n] for n in names])[0]


def _company(rng: random.Random, product: str, sub_product: str) -> str:
    weights = {}
    for name, affinity in COMPANIES.items():
        w = affinity.get(f"{product}/{sub_product}", 0) + affinity.get(product, 0)
        if w:
            weights[name] = w
    return _weighted(rng, weights)


def _narrative(rng: random.Random, product: str, sub_product: str) -> str:
    sentences = rng.sample(_GENERAL[product], 2)
    if product == "Debt collection" and rng.random() < (0.9 if sub_product == "Medical debt" else 0.08):
        sentences.insert(rng.randrange(3), rng.choice(_MEDICAL))
    elif product in _MEDICAL_ELSEWHERE and rng.random() < 0.06:
        sentences.insert(rng.randrange(3), _MEDICAL_ELSEWHERE[product])
    if product == "Mortgage" and rng.random() < 0.35:
        sentences.insert(rng.randrange(3), rng.choice(_MODIFICATION))
    if product == "Credit reporting" and rng.random() < 0.05:
        sentences.insert(rng.randrange(3), _MODIFICATION_ELSEWHERE)
    if product == "Student loan" and rng.random() < 0.6:
        sentences.insert(rng.randrange(3), rng.choice(_FORBEARANCE))
    return " ".join(sentences)


@lru_cache(maxsize=1)
def complaints() -> tuple[Complaint, ...]:
    """Every complaint of the register, in order of receipt (ids ascending), the same on every run."""
    rng = random.Random(SEED)
    drafts = []
    for year in range(FIRST_DAY.year, LAST_DAY.year + 1):
        for product in sorted(PRODUCTS):
            spec = PRODUCTS[product]
            n = int(VOLUME[product] * rng.uniform(0.85, 1.15))
            for _ in range(n):
                day = date(year, 1, 1) + timedelta(days=rng.randrange(366 if year % 4 == 0 else 365))
                sub = rng.choice(spec["sub"])
                narrative = _narrative(rng, product, sub) if rng.random() < 0.56 else ""
                drafts.append((day.isoformat(), product, sub, rng.choice(spec["issues"]), _company(rng, product, sub),
                               _weighted(rng, STATES), rng.choice(SUBMITTED_VIA), rng.choice(RESPONSES),
                               "Yes" if rng.random() < 0.97 else "No", narrative))
    drafts.sort(key=lambda d: d[0])  # stable: same-day complaints keep their drawing order
    return tuple(Complaint(3_100_001 + i, *d) for i, d in enumerate(drafts))


_SCHEMA = (
    "CREATE TABLE complaints (id INTEGER PRIMARY KEY, date_received TEXT, product TEXT, sub_product TEXT,"
    " issue TEXT, company TEXT, state TEXT, submitted_via TEXT, company_response TEXT, timely TEXT,"
    " narrative TEXT);"
    "CREATE INDEX complaints_date ON complaints (date_received);"
    "CREATE VIRTUAL TABLE complaints_fts USING fts5(narrative, issue, company, content='complaints',"
    " content_rowid='id', tokenize='unicode61');"
)


def _tables() -> dict[str, list[dict[str, object]]]:
    rows = [vars(c) for c in complaints()]
    return {"complaints": rows,
            "complaints_fts": [{"rowid": r["id"], "narrative": r["narrative"], "issue": r["issue"],
                                "company": r["company"]} for r in rows]}


#: The register's database (built on first use).
DB = MemoryDB(_SCHEMA, _tables)
fetch = DB.query


def connection() -> sqlite3.Connection:
    """The loaded database (the site's `warm`: built before the server accepts requests)."""
    return DB.connection
