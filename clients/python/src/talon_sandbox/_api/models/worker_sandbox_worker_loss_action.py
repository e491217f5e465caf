from enum import StrEnum


class WorkerSandboxWorkerLossAction(StrEnum):
    WORKER_LOSS_ACTION_MOVE = "WORKER_LOSS_ACTION_MOVE"
    WORKER_LOSS_ACTION_UNSPECIFIED = "WORKER_LOSS_ACTION_UNSPECIFIED"
    WORKER_LOSS_ACTION_WAIT = "WORKER_LOSS_ACTION_WAIT"

    def __str__(self) -> str:
        return str(self.value)
