//! Egress policies: the one model is `talon_core::egress` (the worker
//! enforces the same type); here its errors become the API's.

use crate::error::Error;
pub use talon_core::egress::{EgressPolicy, PolicyError, PolicyParts};

impl From<PolicyError> for Error {
    fn from(e: PolicyError) -> Error {
        match e {
            // A row this server wrote and can't read back is its own fault.
            PolicyError::Corrupt(_) => Error::Internal(e.to_string()),
            _ => Error::InvalidArgument(e.to_string()),
        }
    }
}
