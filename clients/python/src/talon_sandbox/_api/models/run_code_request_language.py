from enum import StrEnum


class RunCodeRequestLanguage(StrEnum):
    CODE_LANGUAGE_BASH = "CODE_LANGUAGE_BASH"
    CODE_LANGUAGE_JAVASCRIPT = "CODE_LANGUAGE_JAVASCRIPT"
    CODE_LANGUAGE_PYTHON = "CODE_LANGUAGE_PYTHON"
    CODE_LANGUAGE_UNSPECIFIED = "CODE_LANGUAGE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
