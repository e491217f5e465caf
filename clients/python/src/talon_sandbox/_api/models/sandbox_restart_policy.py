from enum import StrEnum


class SandboxRestartPolicy(StrEnum):
    RESTART_POLICY_ALWAYS = "RESTART_POLICY_ALWAYS"
    RESTART_POLICY_NEVER = "RESTART_POLICY_NEVER"
    RESTART_POLICY_UNSPECIFIED = "RESTART_POLICY_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
