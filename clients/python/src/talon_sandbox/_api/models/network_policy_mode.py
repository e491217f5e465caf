from enum import StrEnum


class NetworkPolicyMode(StrEnum):
    EGRESS_MODE_ALLOWLIST = "EGRESS_MODE_ALLOWLIST"
    EGRESS_MODE_DENY = "EGRESS_MODE_DENY"
    EGRESS_MODE_OPEN = "EGRESS_MODE_OPEN"
    EGRESS_MODE_SEALED = "EGRESS_MODE_SEALED"
    EGRESS_MODE_UNSPECIFIED = "EGRESS_MODE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
