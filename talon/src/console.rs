//! The web console's flag (the gateway serves `clients/console`'s build at
//! `/console/`), checked at start: a directory without `index.html` is a
//! mistake the operator should hear about then, not as a 404 later.

use std::path::PathBuf;

#[derive(clap::Args, Clone, Default)]
pub struct ConsoleArgs {
    /// The web console's built files (clients/console/dist, made by clients/console/build.sh; scripts/up.sh passes it), served at /console/. Unset: no console.
    #[arg(long, env = "TALON_CONSOLE_DIR")]
    pub console_dir: Option<PathBuf>,
}

impl ConsoleArgs {
    /// The directory to serve, once it is known to hold a built console.
    pub fn dir(&self) -> anyhow::Result<Option<PathBuf>> {
        let Some(d) = &self.console_dir else {
            return Ok(None);
        };
        let d = std::fs::canonicalize(d)
            .map_err(|e| anyhow::anyhow!("--console-dir {}: {e}", d.display()))?;
        anyhow::ensure!(
            d.join("index.html").is_file(),
            "--console-dir {}: no index.html; build the console first (clients/console/build.sh)",
            d.display()
        );
        Ok(Some(d))
    }
}
