from enum import StrEnum


class ProcessOutputStream(StrEnum):
    OUTPUT_STREAM_STDERR = "OUTPUT_STREAM_STDERR"
    OUTPUT_STREAM_STDOUT = "OUTPUT_STREAM_STDOUT"
    OUTPUT_STREAM_UNSPECIFIED = "OUTPUT_STREAM_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
