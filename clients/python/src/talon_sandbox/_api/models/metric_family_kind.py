from enum import StrEnum


class MetricFamilyKind(StrEnum):
    METRIC_KIND_COUNTER = "METRIC_KIND_COUNTER"
    METRIC_KIND_GAUGE = "METRIC_KIND_GAUGE"
    METRIC_KIND_HISTOGRAM = "METRIC_KIND_HISTOGRAM"
    METRIC_KIND_UNSPECIFIED = "METRIC_KIND_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
