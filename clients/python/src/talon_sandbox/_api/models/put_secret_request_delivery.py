from enum import StrEnum


class PutSecretRequestDelivery(StrEnum):
    SECRET_DELIVERY_ENV = "SECRET_DELIVERY_ENV"
    SECRET_DELIVERY_FILE = "SECRET_DELIVERY_FILE"
    SECRET_DELIVERY_UNSPECIFIED = "SECRET_DELIVERY_UNSPECIFIED"

    def __str__(self) -> str:
        return str(self.value)
