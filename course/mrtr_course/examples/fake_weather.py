"""A pretend weather service, so the lessons need no network and no API key (docs/architecture.md
§4).

Everything is derived from a SHA-256 of the city name and the day, so the same question always
gets the same answer — in a notebook's stored output and in every test run.
"""

from __future__ import annotations

import hashlib

CONDITIONS = ("sunny", "partly cloudy", "overcast", "light rain", "windy", "thunderstorms")
CITIES = ("Lisbon", "Oslo", "Paris", "Tokyo", "Nairobi", "Lima")
UNITS = ("celsius", "fahrenheit")


def forecast(city: str, day: int = 0) -> tuple[int, str]:
    """(temperature in °C, condition) for ``city``, ``day`` days from today."""
    digest = hashlib.sha256(f"{city.strip().lower()}|{day}".encode()).digest()
    return digest[0] % 30 - 2, CONDITIONS[digest[1] % len(CONDITIONS)]


def temperature(celsius: int, units: str = "celsius") -> str:
    if units == "fahrenheit":
        return f"{round(celsius * 9 / 5 + 32)} °F"
    return f"{celsius} °C"


def describe(city: str, day: int = 0, units: str = "celsius") -> str:
    """One line, e.g. ``Paris: 18 °C, light rain``."""
    celsius, condition = forecast(city, day)
    return f"{city}: {temperature(celsius, units)}, {condition}"
