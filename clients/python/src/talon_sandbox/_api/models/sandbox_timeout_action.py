from enum import StrEnum


class SandboxTimeoutAction(StrEnum):
    TIMEOUT_ACTION_DELETE = "TIMEOUT_ACTION_DELETE"
    TIMEOUT_ACTION_PAUSE = "TIMEOUT_ACTION_PAUSE"
    TIMEOUT_ACTION_UNSPECIFIED = "TIMEOUT_ACTION_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
