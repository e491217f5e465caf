//! Fencing: which generation of a sandbox a command may act on.

use super::*;

impl SandboxHost {
    pub(super) async fn fenced(&self, id: &str, generation: i64) -> anyhow::Result<Held> {
        let h = self
            .held(id)
            .ok_or_else(|| anyhow::anyhow!("sandbox {id} is not on this worker"))?;
        anyhow::ensure!(
            h.generation == generation,
            "stale generation {generation}, holding {}",
            h.generation
        );
        Ok(h)
    }
}
