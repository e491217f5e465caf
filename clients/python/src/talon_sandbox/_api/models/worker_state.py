from enum import StrEnum


class WorkerState(StrEnum):
    WORKER_STATE_ACTIVE = "WORKER_STATE_ACTIVE"
    WORKER_STATE_DRAINING = "WORKER_STATE_DRAINING"
    WORKER_STATE_OFFLINE = "WORKER_STATE_OFFLINE"
    WORKER_STATE_UNSPECIFIED = "WORKER_STATE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
