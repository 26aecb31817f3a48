//! Documentation that can go stale is checked against the code: the list of error
//! variants in docs/architecture.md names every variant of `Error`, and only those.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[test]
fn the_architecture_doc_lists_every_error_variant() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let doc = std::fs::read_to_string(format!("{root}/docs/architecture.md")).unwrap();
    let listed = doc
        .split("<!-- error-variants")
        .nth(1)
        .and_then(|s| s.split("<!-- /error-variants -->").next())
        .expect("the error-variants block");
    let mut documented: Vec<String> = listed
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_owned)
        .collect();
    let source =
        std::fs::read_to_string(format!("{}/src/error.rs", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let body = source
        .split("pub enum Error {")
        .nth(1)
        .and_then(|s| s.split("\n}\n").next())
        .unwrap();
    let mut variants: Vec<String> = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("///") && !l.starts_with('#') && !l.is_empty())
        .filter_map(|l| {
            let name: String = l
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            (!name.is_empty()
                && name.starts_with(|c: char| c.is_ascii_uppercase())
                && (l[name.len()..].starts_with(['(', ' ', '{']) || l.len() == name.len() + 1))
                .then_some(name)
        })
        .collect();
    documented.sort();
    documented.dedup();
    variants.sort();
    variants.dedup();
    assert_eq!(
        documented, variants,
        "docs/architecture.md's error list is stale"
    );
}
