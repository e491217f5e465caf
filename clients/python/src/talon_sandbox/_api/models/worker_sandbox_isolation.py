from enum import StrEnum


class WorkerSandboxIsolation(StrEnum):
    ISOLATION_CONTAINER = "ISOLATION_CONTAINER"
    ISOLATION_GVISOR = "ISOLATION_GVISOR"
    ISOLATION_MICROVM = "ISOLATION_MICROVM"
    ISOLATION_UNSPECIFIED = "ISOLATION_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
