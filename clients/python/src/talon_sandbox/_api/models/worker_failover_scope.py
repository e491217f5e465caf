from enum import StrEnum


class WorkerFailoverScope(StrEnum):
    FAILOVER_SCOPE_MOVABLE = "FAILOVER_SCOPE_MOVABLE"
    FAILOVER_SCOPE_NONE = "FAILOVER_SCOPE_NONE"
    FAILOVER_SCOPE_SHARED = "FAILOVER_SCOPE_SHARED"
    FAILOVER_SCOPE_UNSPECIFIED = "FAILOVER_SCOPE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
