//! Fencing: which generation of a sandbox a command may act on, and the
//! worker's refusals, each with its gRPC code (a stale generation is
//! ABORTED, not a runtime failure).
//!
//! Two modes. A command for the sandbox as it is (pause, resume, stop,
//! start, a policy, a data-plane call) must name exactly the generation
//! held. A create or a delete may name a newer one: the control plane
//! moved the sandbox on (a reassignment), and the newer word wins; an
//! older one is refused.

use super::*;

/// What a worker refuses, apart from what its runtime fails at.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WorkerError {
    #[error("sandbox {0} is not on this worker")]
    NotHere(String),
    #[error("stale generation {asked} for sandbox {id}: this worker holds generation {held}")]
    Stale { id: String, asked: i64, held: i64 },
    #[error("sandbox {id} was deleted (generation {generation})")]
    Deleted { id: String, generation: i64 },
    #[error("the record of sandbox {id} does not read ({reason}); refusing to guess its state")]
    Corrupt { id: String, reason: String },
    #[error("invalid sandbox id {0:?}")]
    InvalidId(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Exists(String),
    #[error("{0}")]
    TooLarge(String),
    /// Its disk is not mounted on the host where it should be: what is
    /// there is the host's own filesystem, never read as the sandbox's.
    #[error("sandbox {0}'s disk is not mounted on its worker; stop and start it")]
    DiskNotMounted(String),
}

impl WorkerError {
    pub fn code(&self) -> tonic::Code {
        match self {
            WorkerError::NotHere(_) => tonic::Code::NotFound,
            WorkerError::Stale { .. } | WorkerError::Deleted { .. } => tonic::Code::Aborted,
            WorkerError::Corrupt { .. } => tonic::Code::Internal,
            WorkerError::InvalidId(_) | WorkerError::Invalid(_) => tonic::Code::InvalidArgument,
            WorkerError::Exists(_) => tonic::Code::AlreadyExists,
            WorkerError::TooLarge(_) => tonic::Code::ResourceExhausted,
            WorkerError::DiskNotMounted(_) => tonic::Code::FailedPrecondition,
        }
    }
}

/// The code of any failure of a command: a refusal's own, else
/// FAILED_PRECONDITION (the runtime or the host could not do it).
pub fn code_of(e: &anyhow::Error) -> tonic::Code {
    e.downcast_ref::<WorkerError>()
        .map_or(tonic::Code::FailedPrecondition, WorkerError::code)
}

/// Whether a command may act on a sandbox held at `held`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fence {
    /// The generation held, exactly.
    Exact,
    /// That generation or a newer one (create, delete).
    AtLeast,
}

/// The fence itself: whether a command of generation `asked` may act on
/// sandbox `id` held at generation `held`.
pub fn fence(id: &str, held: i64, asked: i64, mode: Fence) -> Result<(), WorkerError> {
    let ok = match mode {
        Fence::Exact => asked == held,
        Fence::AtLeast => asked >= held,
    };
    if ok {
        Ok(())
    } else {
        Err(WorkerError::Stale {
            id: id.to_string(),
            asked,
            held,
        })
    }
}

impl SandboxHost {
    /// The sandbox `id`, if a command or a data-plane call of `generation`
    /// may act on it as it is (`Fence::Exact`).
    pub fn fenced_for_call(&self, id: &str, generation: i64) -> Result<Held, WorkerError> {
        let h = self.record(id)?;
        fence(id, h.generation, generation, Fence::Exact)?;
        Ok(h)
    }

    pub(super) async fn fenced(&self, id: &str, generation: i64) -> anyhow::Result<Held> {
        Ok(self.fenced_for_call(id, generation)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_modes() {
        assert_eq!(fence("sbx_a", 2, 2, Fence::Exact), Ok(()));
        for asked in [1, 3] {
            let e = fence("sbx_a", 2, asked, Fence::Exact).unwrap_err();
            assert_eq!(e.code(), tonic::Code::Aborted, "{e}");
        }
        assert_eq!(fence("sbx_a", 2, 2, Fence::AtLeast), Ok(()));
        assert_eq!(fence("sbx_a", 2, 3, Fence::AtLeast), Ok(()));
        let e = fence("sbx_a", 2, 1, Fence::AtLeast).unwrap_err();
        assert_eq!(
            e,
            WorkerError::Stale {
                id: "sbx_a".into(),
                asked: 1,
                held: 2
            }
        );
    }

    #[test]
    fn refusals_have_their_codes_and_failures_theirs() {
        let stale: anyhow::Error = WorkerError::Stale {
            id: "sbx_a".into(),
            asked: 1,
            held: 2,
        }
        .into();
        assert_eq!(code_of(&stale), tonic::Code::Aborted);
        // Wrapped in context, still found.
        assert_eq!(code_of(&stale.context("pause")), tonic::Code::Aborted);
        assert_eq!(
            code_of(&WorkerError::NotHere("sbx_a".into()).into()),
            tonic::Code::NotFound
        );
        assert_eq!(
            code_of(&anyhow::anyhow!("runc: exit status 1")),
            tonic::Code::FailedPrecondition
        );
    }
}
