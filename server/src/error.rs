//! Domain errors and their one mapping onto gRPC status codes. Handlers
//! return `Error`; tonic sees `Status` only through `From` below.

use tonic::Code;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    InvalidArgument(String),
    /// Also used for objects of another tenant, so there is no existence
    /// oracle.
    #[error("{0} not found")]
    NotFound(String),
    #[error("{0}")]
    AlreadyExists(String),
    #[error("{0}")]
    PermissionDenied(String),
    #[error("{0}")]
    Unauthenticated(String),
    #[error("{0}")]
    FailedPrecondition(String),
    #[error("{0}")]
    ResourceExhausted(String),
    #[error("{0}")]
    Unavailable(String),
    /// A wait ran out; `detail` is an encoded message for the status details.
    #[error("{message}")]
    DeadlineExceeded {
        message: String,
        /// The sandbox as it was, for the status details.
        sandbox: Box<crate::db::entity::sandbox::Model>,
    },
    #[error("{0}")]
    Aborted(String),
    #[error("database: {0}")]
    Db(#[from] sea_orm::DbErr),
    #[error("{0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn code(&self) -> Code {
        match self {
            Error::InvalidArgument(_) => Code::InvalidArgument,
            Error::NotFound(_) => Code::NotFound,
            Error::AlreadyExists(_) => Code::AlreadyExists,
            Error::PermissionDenied(_) => Code::PermissionDenied,
            Error::Unauthenticated(_) => Code::Unauthenticated,
            Error::FailedPrecondition(_) => Code::FailedPrecondition,
            Error::ResourceExhausted(_) => Code::ResourceExhausted,
            Error::Unavailable(_) => Code::Unavailable,
            Error::DeadlineExceeded { .. } => Code::DeadlineExceeded,
            Error::Aborted(_) => Code::Aborted,
            Error::Db(_) | Error::Internal(_) => Code::Internal,
        }
    }
}

impl From<argon2::password_hash::Error> for Error {
    fn from(e: argon2::password_hash::Error) -> Self {
        Error::Internal(format!("password hashing: {e}"))
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::Internal(format!("json: {e}"))
    }
}

/// True when a database error is a unique-constraint violation.
pub fn is_unique_violation(e: &sea_orm::DbErr) -> bool {
    let s = e.to_string().to_ascii_lowercase();
    s.contains("unique") || s.contains("duplicate key")
}
