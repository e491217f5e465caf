from enum import StrEnum


class ImageSource(StrEnum):
    IMAGE_SOURCE_BUILTIN = "IMAGE_SOURCE_BUILTIN"
    IMAGE_SOURCE_OCI_ARCHIVE = "IMAGE_SOURCE_OCI_ARCHIVE"
    IMAGE_SOURCE_UNSPECIFIED = "IMAGE_SOURCE_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
