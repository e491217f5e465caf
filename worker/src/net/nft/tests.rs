//! The rules as JSON: what a sandbox joins with, and the base's order.
use super::*;

fn tables() -> Tables {
    Tables {
        name: "talon0".into(),
        bridge: "talon0".into(),
        port_glob: "talon0v*".into(),
        pool: "10.88.0.0/16".parse().unwrap(),
        gateway: "10.88.0.1".parse().unwrap(),
    }
}

#[test]
fn a_sandbox_joins_with_its_chain_its_verdict_and_its_port() {
    let t = tables();
    let who = Member {
        id: "sbx_a",
        port: "talon0v3",
        mac: [2, 0x74, 0, 0, 0, 3],
        addr: "10.88.0.5".parse().unwrap(),
    };
    let j = t
        .member(
            &who,
            &Verdict::Allowlist {
                cidrs: vec!["198.51.100.0/24".parse().unwrap()],
            },
            true,
        )
        .to_json();
    for needle in [
        r#""name":"sb_sbx_a""#,
        r#""@ac_sbx_a""#,
        r#""@pin_sbx_a""#,
        r#"{"jump":{"target":"sb_sbx_a"}}"#,
        r#""02:74:00:00:00:03""#,
        r#""addr":"198.51.100.0","len":24"#,
    ] {
        assert!(j.contains(needle), "{needle} missing from {j}");
    }
    // Sealed: the resolver's element ends deleted (it was added just
    // before, so the delete can't fail on a sandbox that never had it).
    let sealed = t.member(&who, &Verdict::Sealed, false).to_json();
    let steps: Vec<String> = serde_json::from_str::<Value>(&sealed).unwrap()["nftables"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| {
            let (verb, body) = c.as_object()?.iter().next()?;
            (body["element"]["name"] == "dns_ok").then(|| verb.clone())
        })
        .collect();
    assert_eq!(steps, ["add", "delete"], "sealed may not ask DNS: {sealed}");
}

#[test]
fn the_base_denies_before_the_policy() {
    let j = tables()
        .base(&["169.254.0.0/16".parse().unwrap()])
        .to_json();
    let deny = j.find("@deny4").unwrap();
    let vmap = j.find("@egress").unwrap();
    assert!(deny < vmap, "the deny list comes first");
    assert!(j.contains(r#""len":16"#));
}
