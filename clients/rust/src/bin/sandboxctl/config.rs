//! Where the endpoint and the API key are kept (`login`), and the client
//! made from them.

use super::*;

#[derive(serde::Serialize, serde::Deserialize, Default)]
pub struct Config {
    pub url: Option<String>,
}

pub fn config_dir() -> PathBuf {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_else(|| "/".into())).join(".config")
        })
        .join("talon")
}

fn load_config() -> Config {
    std::fs::read(config_dir().join("config.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

pub fn credentials_path() -> PathBuf {
    config_dir().join("credentials")
}

pub fn url(cli: &Cli) -> String {
    cli.url
        .clone()
        .or(load_config().url)
        .unwrap_or_else(|| "http://127.0.0.1:7070".into())
}

pub async fn client(cli: &Cli) -> anyhow::Result<Client> {
    let key = match std::env::var("TALON_API_KEY") {
        Ok(k) if !k.is_empty() => k,
        _ => std::fs::read_to_string(credentials_path())
            .map(|s| s.trim().to_string())
            .map_err(|_| {
                anyhow::anyhow!("not logged in: run `sandboxctl login` or set TALON_API_KEY")
            })?,
    };
    Ok(Client::connect(&url(cli), &key).await?)
}
