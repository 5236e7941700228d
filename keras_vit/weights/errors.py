class WeightsError(ValueError):
    """A weights file that cannot be used: unreadable, truncated, unknown."""


class WeightsMismatchError(WeightsError):
    """A checkpoint whose variables do not fit the model.

    Attributes list every problem at once: `missing` and `unexpected` keys
    and `mismatched` as (key, expected shape, found shape).
    """

    def __init__(self, source, missing=(), unexpected=(), mismatched=(), hints=()):
        self.missing = sorted(missing)
        self.unexpected = sorted(unexpected)
        self.mismatched = sorted(mismatched)
        lines = [f"weights {source} do not fit the model:"]
        if self.missing:
            lines.append(f"  missing keys ({len(self.missing)}): " + ", ".join(self.missing))
        if self.unexpected:
            lines.append(f"  unexpected keys ({len(self.unexpected)}): " + ", ".join(self.unexpected))
        for key, expected, found in self.mismatched:
            lines.append(f"  shape mismatch: {key}: model expects {tuple(expected)}, file has {tuple(found)}")
        lines.extend(f"  hint: {h}" for h in hints)
        super().__init__("\n".join(lines))
