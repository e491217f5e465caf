//! Isolation levels: what a create asks for and what each worker offers
//! (it says so when it registers). Stored by name.

use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Isolation {
    /// Namespaces, cgroups and seccomp around the host's kernel.
    #[default]
    Container,
    /// gVisor's user-space kernel.
    Gvisor,
}

impl Isolation {
    pub fn name(self) -> &'static str {
        match self {
            Isolation::Container => "container",
            Isolation::Gvisor => "gvisor",
        }
    }

    /// The contract's value (the worker's spec, the API's sandbox).
    pub fn to_proto(self) -> talon_proto::v1::Isolation {
        match self {
            Isolation::Container => talon_proto::v1::Isolation::Container,
            Isolation::Gvisor => talon_proto::v1::Isolation::Gvisor,
        }
    }

    /// A stored name; anything else is an error, never the default.
    pub fn parse(name: &str) -> Result<Isolation> {
        match name {
            "container" => Ok(Isolation::Container),
            "gvisor" => Ok(Isolation::Gvisor),
            other => Err(Error::Internal(format!(
                "unknown isolation level {other:?}"
            ))),
        }
    }
}

/// Why no worker can take a sandbox of `level`, when none connected
/// offers it: FAILED_PRECONDITION, naming it.
pub fn none_offers(level: Isolation) -> Error {
    Error::FailedPrecondition(format!(
        "no connected worker offers {} isolation; start a worker with runsc (gVisor) installed, or ask for container",
        level.name()
    ))
}
