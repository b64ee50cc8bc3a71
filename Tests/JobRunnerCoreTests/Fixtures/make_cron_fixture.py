#!/usr/bin/env python3
"""Writes cron-reference.json: cron expressions x IANA time zones x start dates, each with its
next five fire dates as computed by the PyPI library croniter (pinned below), for
CronReferenceTests to compare jobrunner's own dates with.

Run it with `make fixtures` (which installs croniter when it is missing); the tests only read
the JSON it writes, so they need no Python. The output is the same on every run (fixed seed),
as long as croniter's version and the system's time zone data stay the same.

How the reference dates are made, and where they are not croniter's own answer:

1. The day fields follow crontab(5): when both day-of-month and day-of-week are restricted
   (neither starts with '*') a day matches if either does, otherwise both must. croniter's
   default reads a field that starts with '*' but is not '*' itself (like '*/2') as
   restricted, so '0 0 */2 * 1' fires on odd days OR Mondays there, on odd Mondays in
   crontab(5). `implement_cron_bug=True` makes croniter follow crontab(5); it is used for
   every case, and the cases where the default would differ are counted in the summary.

2. Daylight saving follows SPEC 5.8: a local time skipped by a change fires once, at the first
   minute after the gap; a local time that repeats fires once, at its first occurrence. So
   croniter is asked for the *local wall-clock* minutes the expression matches (a naive
   datetime: croniter's pure calendar arithmetic, no time zone), and `to_instant` below turns
   each into an instant by that rule, dropping duplicates (several skipped minutes, or a
   skipped minute and the minute after the gap, are one firing). Where croniter's own
   time-zone-aware answer differs, the case carries it as "croniterWithTimeZone" and the
   summary counts it; those differences are croniter's DST handling, not the calendar.

3. Left out, because croniter reads them unlike crontab(5) (the script never generates them):
   - a range whose two ends are equal, like '5-5': croniter reads it as the whole field
     ('5-5 * * * *' fires every minute there), crontab(5) as the one value 5;
   - a range that goes backwards, like 'sat-sun' or '22-2': croniter wraps around the end of
     the field, crontab(5) has no such thing and jobrunner refuses it.

4. Also left out (generated, then dropped by `croniter_reads_days_otherwise`): expressions
   whose two day fields are both restricted, one of them covering its whole range and the
   other holding a '*' past its start, like '7 2 17,*/2 * 5-6,0-6/1'. croniter turns a field
   that covers its whole range into '*' when the other day field contains a '*' anywhere, and
   then needs both fields to match (odd days and the 17th); crontab(5) looks only at the
   first character, so either field matches, and the day-of-week field matches every day.

Usage: make_cron_fixture.py [OUTPUT]   (default: cron-reference.json beside this script)
"""

import datetime as dt
import json
import os
import random
import sys
from zoneinfo import ZoneInfo

CRONITER_VERSION = "7.0.0"

try:
    import croniter as croniter_module
    from croniter import croniter
except ImportError:
    sys.exit(f"needs croniter: python3 -m pip install croniter=={CRONITER_VERSION} (or: make fixtures)")

installed = getattr(croniter_module, "__version__", None)
if installed is None:
    from importlib.metadata import version

    installed = version("croniter")
if installed != CRONITER_VERSION:
    sys.exit(f"needs croniter {CRONITER_VERSION}, found {installed}: python3 -m pip install croniter=={CRONITER_VERSION}")

UTC = dt.timezone.utc
SEED = 20261122
COUNT = 5
FIXED_START = dt.datetime(2026, 5, 13, 8, 41, 27, tzinfo=UTC)

# Zones with and without daylight saving, with whole-hour, half-hour and 45-minute offsets and
# changes at 00:00, 01:00 UTC, 02:00 and 02:45 local. Zones whose rules changed in recent years
# (so the answer depends on how new the time zone data is) are left out.
ZONES = [
    "UTC",
    "Europe/Berlin",
    "Europe/London",
    "Europe/Dublin",  # "negative" DST in the data: winter is the exception there
    "America/New_York",
    "America/Los_Angeles",
    "America/St_Johns",  # -03:30 / -02:30
    "America/Havana",  # changes at midnight
    "America/Santiago",  # changes at 24:00 on Saturdays
    "America/Sao_Paulo",  # DST until 2019, at midnight: see HISTORIC_STARTS
    "America/Phoenix",  # no DST
    "Australia/Sydney",
    "Australia/Adelaide",  # +09:30 / +10:30
    "Australia/Lord_Howe",  # a 30-minute change
    "Pacific/Auckland",
    "Pacific/Chatham",  # +12:45 / +13:45
    "Asia/Kolkata",  # +05:30, no DST
    "Asia/Kathmandu",  # +05:45
    "Asia/Tokyo",
]

# Sao Paulo's last changes: clocks went from 00:00 to 01:00 on 2018-11-04 and back from 00:00
# to 23:00 on 2019-02-17.
HISTORIC_STARTS = {
    "America/Sao_Paulo": [dt.datetime(2018, 11, 4, 3, 0, tzinfo=UTC), dt.datetime(2019, 2, 17, 2, 0, tzinfo=UTC)],
}


def transitions(zone, year):
    """The instants in `year` at which `zone`'s UTC offset changes, to the second."""
    found = []
    t = dt.datetime(year, 1, 1, tzinfo=UTC)
    end = dt.datetime(year + 1, 1, 1, tzinfo=UTC)
    step = dt.timedelta(hours=1)
    while t < end:
        if t.astimezone(zone).utcoffset() != (t + step).astimezone(zone).utcoffset():
            low, high = t, t + step
            while high - low > dt.timedelta(seconds=1):
                middle = low + (high - low) / 2
                middle = middle.replace(microsecond=0)
                if middle.astimezone(zone).utcoffset() == low.astimezone(zone).utcoffset():
                    low = middle
                else:
                    high = middle
            found.append(high)
        t += step
    return found


def starts(name, rng):
    """Start dates for a zone: the fixed one, and dates shortly before each change."""
    zone = ZoneInfo(name)
    changes = transitions(zone, 2026) + HISTORIC_STARTS.get(name, [])
    result = [FIXED_START]
    for change in changes:
        for before in (dt.timedelta(minutes=1), dt.timedelta(minutes=rng.randint(2, 90)), dt.timedelta(hours=rng.randint(2, 30))):
            result.append(change - before)
        result.append(change)  # exactly at the change
        result.append(change + dt.timedelta(minutes=rng.randint(1, 70)))  # inside a repeated hour
    return result


def to_instant(civil, zone):
    """SPEC 5.8: the earliest instant whose local time in `zone` is `civil` (a naive
    datetime); for a local time skipped by a change, the instant of the change."""
    readings = [civil.replace(tzinfo=zone, fold=fold).astimezone(UTC) for fold in (0, 1)]
    valid = [t for t in readings if t.astimezone(zone).replace(tzinfo=None) == civil]
    if valid:
        return min(valid)
    low, high = min(readings), max(readings)
    while high - low > dt.timedelta(seconds=1):
        middle = (low + (high - low) / 2).replace(microsecond=0)
        if middle.astimezone(zone).replace(tzinfo=None) >= civil:
            high = middle
        else:
            low = middle
    return high


def reference_dates(expression, name, start, **options):
    """The next COUNT fire dates after `start` by crontab(5) and SPEC 5.8 (see the top)."""
    zone = ZoneInfo(name)
    local_start = start.astimezone(zone).replace(tzinfo=None)
    wall = croniter(expression, local_start, implement_cron_bug=True, **options)
    dates = []
    for _ in range(10_000):
        instant = to_instant(wall.get_next(dt.datetime), zone)
        if instant > start and (not dates or instant > dates[-1]):
            dates.append(instant)
            if len(dates) == COUNT:
                return dates
    raise RuntimeError(f"no {COUNT} dates for {expression!r} in {name} after {start}")


def croniter_reads_days_otherwise(expression):
    """Point 4 at the top: croniter made a restricted day field '*'."""
    if expression.startswith("@"):
        return False
    fields = expression.split()
    expanded = croniter.expand(expression)[0]
    restricted = not fields[2].startswith("*") and not fields[4].startswith("*")
    return restricted and (expanded[2] == ["*"] or expanded[4] == ["*"])


def croniter_with_time_zone(expression, name, start):
    """croniter's own answer, time zone and all."""
    it = croniter(expression, start.astimezone(ZoneInfo(name)), implement_cron_bug=True)
    return [it.get_next(dt.datetime).astimezone(UTC) for _ in range(COUNT)]


def croniter_default_days(expression, start):
    """croniter's default reading of the day fields, in UTC (to count where it differs)."""
    it = croniter(expression, start)
    return [it.get_next(dt.datetime) for _ in range(COUNT)]


# --- random expressions -------------------------------------------------------------------

MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
DAYS = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]
MACROS = ["@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually"]


def random_case(rng, word):
    """A name in a random mix of cases: names are case-insensitive."""
    return rng.choice([word, word.upper(), word.capitalize()])


def value_text(rng, value, names, offset):
    if names and rng.random() < 0.5:
        return random_case(rng, names[value - offset])
    return str(value)


def item(rng, low, high, names=None, offset=0, sunday_seven=False):
    """One item of a list: a value, a range, '*/n', 'a-b/n' or 'a/n'."""
    kind = rng.choices(["value", "range", "star-step", "range-step", "start-step"], [4, 3, 2, 2, 1])[0]
    top = 7 if sunday_seven else high
    if kind == "value":
        value = rng.randint(low, top)
        return value_text(rng, value % 7 if sunday_seven else value, names, offset) if value != 7 else "7"
    if kind == "star-step":
        return f"*/{rng.randint(1, max(2, (high - low) // 2))}"
    a = rng.randint(low, top - 1)
    b = rng.randint(a + 1, top)  # never equal, never backwards: see the top
    first = value_text(rng, a, names, offset)
    second = "7" if b == 7 and sunday_seven else value_text(rng, b, names, offset)
    if kind == "range":
        return f"{first}-{second}"
    if kind == "range-step":
        return f"{first}-{second}/{rng.randint(1, max(1, b - a))}"
    return f"{a}/{rng.randint(1, max(1, (high - a) or 1))}"


def field(rng, low, high, star_weight, names=None, offset=0, sunday_seven=False):
    if rng.random() < star_weight:
        return "*"
    count = rng.choices([1, 2, 3], [6, 3, 1])[0]
    return ",".join(item(rng, low, high, names, offset, sunday_seven) for _ in range(count))


def random_expression(rng, near_hour=None):
    """A random valid expression. With `near_hour`, the hour field names that local hour or
    one next to it more often than not, so that dates near a change are exercised."""
    if rng.random() < 0.07:
        return rng.choice(MACROS)
    minute = field(rng, 0, 59, 0.2)
    if near_hour is not None and rng.random() < 0.7:
        hours = sorted({(near_hour + rng.choice([-1, 0, 0, 1])) % 24 for _ in range(rng.randint(1, 2))})
        if hours[0] < 23 and rng.random() < 0.3:
            hour = f"{hours[0]}-{min(23, hours[-1] + 1)}"  # never an equal range: see the top
        else:
            hour = ",".join(map(str, hours))
    else:
        hour = field(rng, 0, 23, 0.35)
    both_days = rng.random() < 0.2  # both day fields restricted: either matches
    dom = field(rng, 1, 31, 0.0 if both_days else 0.75)
    month = field(rng, 1, 12, 0.75, MONTHS, 1)
    dow = field(rng, 0, 6, 0.0 if both_days else 0.75, DAYS, 0, sunday_seven=True)
    return " ".join([minute, hour, dom, month, dow])


def main():
    output = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cron-reference.json")
    rng = random.Random(SEED)
    cases = []
    differs_with_time_zone = []
    differs_by_day_rule = []
    left_out = []
    for name in ZONES:
        zone = ZoneInfo(name)
        for start in starts(name, rng):
            near_hour = start.astimezone(zone).hour if start != FIXED_START else None
            per_start = 14 if start == FIXED_START else 6
            made = 0
            while made < per_start:
                expression = random_expression(rng, near_hour)
                if croniter_reads_days_otherwise(expression):
                    left_out.append(expression)
                    continue
                try:
                    dates = reference_dates(expression, name, start)
                except Exception:  # impossible dates, or croniter refuses the syntax: not a case
                    continue
                case = {"cron": expression, "timezone": name, "start": iso(start), "next": [iso(d) for d in dates]}
                aware = croniter_with_time_zone(expression, name, start)
                if aware != dates:
                    case["croniterWithTimeZone"] = [iso(d) for d in aware]
                    differs_with_time_zone.append(case)
                if name == "UTC" and croniter_default_days(expression, start) != dates:
                    differs_by_day_rule.append(expression)
                cases.append(case)
                made += 1
    document = {
        "about": "made by make_cron_fixture.py (read its docstring); do not edit by hand",
        "croniter": CRONITER_VERSION,
        "seed": SEED,
        "count": len(cases),
        "cases": cases,
    }
    # One case a line: small, and a diff shows which cases changed.
    lines = [json.dumps(case) for case in cases]
    head = json.dumps({key: value for key, value in document.items() if key != "cases"})[:-1]
    with open(output, "w") as handle:
        handle.write(head + ', "cases": [\n' + ",\n".join(lines) + "\n]}\n")
    print(f"{len(cases)} cases written to {output}")
    print(f"{len(differs_with_time_zone)} where croniter's own time-zone handling gives other dates, e.g.:")
    for case in differs_with_time_zone[:6]:
        print(f"  {case['cron']!r} in {case['timezone']} after {case['start']}:")
        print(f"      SPEC 5.8: {' '.join(case['next'][:3])}")
        print(f"      croniter: {' '.join(case['croniterWithTimeZone'][:3])}")
    print(f"{len(left_out)} expressions left out as croniter reads their day fields otherwise (point 4), e.g. {left_out[:3]}")
    print(f"{len(differs_by_day_rule)} UTC cases where croniter's default day rule differs, e.g. {differs_by_day_rule[:3]}")


def iso(date):
    return date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


if __name__ == "__main__":
    main()
