//! Browser origins: which `Origin` a browser session's requests may carry
//! for a public URL (the gateway compares it whole).

/// The origins a browser session may come from for this public URL: its
/// own and, on loopback, the other loopback name of the same port
/// (`127.0.0.1` and `localhost` reach the same listener, and a user of
/// the default `talon up` types either; `*.localhost` previews are other
/// origins still).
pub fn browser_origins(public_url: &str) -> Vec<String> {
    let own = origin_of(public_url);
    let port = |rest: &str| {
        rest.is_empty()
            || rest
                .strip_prefix(':')
                .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
    };
    let alias = match (
        own.strip_prefix("http://127.0.0.1"),
        own.strip_prefix("http://localhost"),
    ) {
        (Some(rest), _) if port(rest) => Some(format!("http://localhost{rest}")),
        (_, Some(rest)) if port(rest) => Some(format!("http://127.0.0.1{rest}")),
        _ => None,
    };
    std::iter::once(own).chain(alias).collect()
}

/// `scheme://host[:port]` of a URL, as browsers send it in `Origin`.
pub fn origin_of(url: &str) -> String {
    match url.parse::<http::Uri>() {
        Ok(u) => format!(
            "{}://{}",
            u.scheme_str().unwrap_or("http"),
            u.authority().map(|a| a.as_str()).unwrap_or("")
        ),
        Err(_) => url.trim_end_matches('/').to_string(),
    }
}

#[cfg(test)]
mod origin_tests {
    use super::browser_origins;

    #[test]
    fn loopback_public_urls_take_both_loopback_names_and_nothing_else() {
        assert_eq!(
            browser_origins("http://127.0.0.1:8080/"),
            ["http://127.0.0.1:8080", "http://localhost:8080"]
        );
        assert_eq!(
            browser_origins("http://localhost:8080"),
            ["http://localhost:8080", "http://127.0.0.1:8080"]
        );
        assert_eq!(
            browser_origins("http://127.0.0.1.evil.example:8080"),
            ["http://127.0.0.1.evil.example:8080"]
        );
        assert_eq!(
            browser_origins("http://localhost.evil.example"),
            ["http://localhost.evil.example"]
        );
        assert_eq!(
            browser_origins("https://talon.example.com"),
            ["https://talon.example.com"]
        );
    }
}
