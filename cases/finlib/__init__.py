"""finlib: a tiny stand-in for a team's proprietary finance SDK (used by the format-B suite)."""

from __future__ import annotations


class FinanceLib:
    """Helpers the generated code is expected to call correctly."""

    @staticmethod
    def calculate_growth(start: float, end: float, years: int) -> float:
        """Compound annual growth rate, as a fraction (0.084 means 8.4%)."""
        if start <= 0 or years <= 0:
            raise ValueError("start and years must be positive")
        return (end / start) ** (1 / years) - 1

    @staticmethod
    def monthly_payment(principal: float, annual_rate: float, months: int) -> float:
        """Fixed payment of an amortised loan."""
        if months <= 0:
            raise ValueError("months must be positive")
        rate = annual_rate / 12
        if rate == 0:
            return principal / months
        return principal * rate / (1 - (1 + rate) ** -months)

    @staticmethod
    def vat(amount: float, rate: float = 0.075) -> float:
        """Nigerian VAT (7.5% by default) on an amount."""
        return round(amount * rate, 2)
