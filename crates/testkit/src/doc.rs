//! What the documentation examples run against: a sandbox whose clock is frozen at a
//! fixed instant (so an example never depends on the date or the hour), and a deadline:
//! an example that hangs (waits for an event that never comes, reads a made-up id
//! forever) ends its process with a message after [`DEADLINE`] instead of holding the
//! test run.
//!
//! The sandbox is the one at [`SANDBOX_URL_VAR`] when that is set (`cargo xtask test`
//! starts one and runs the front-page and README examples twice against it, so an
//! example that only works on a fresh sandbox, with a hard-coded id or name, fails), and
//! otherwise one started in-process at [`FROZEN_AT`].
//!
//! Each helper gives the base URL and key of one service, as an example's first (hidden)
//! line: `# let (base_url, api_key) = testkit::doc::trading();`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::OnceLock;
use std::time::Duration;

/// The longest an example may take.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The environment variable naming a running sandbox's root URL
/// (`http://127.0.0.1:<port>`), started with `--frozen-at` [`FROZEN_AT`].
pub const SANDBOX_URL_VAR: &str = "DOC_SANDBOX_URL";

/// Where the sandbox's clock stands: 2026-03-02 14:30 UTC, a Monday, the market open.
pub const FROZEN_AT: &str = "2026-03-02T14:30:00Z";

/// The key of the sandbox's most generous plan.
const KEY: &str = "sk_test_sandbox";

/// The root URL of the sandbox this process's examples use (started on first use when
/// [`SANDBOX_URL_VAR`] is not set), and the deadline armed.
pub fn sandbox_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        std::thread::spawn(|| {
            std::thread::sleep(DEADLINE);
            eprintln!("the example did not finish within {DEADLINE:?}");
            std::process::exit(101);
        });
        match std::env::var(SANDBOX_URL_VAR) {
            Ok(url) if !url.is_empty() => url.trim_end_matches('/').to_owned(),
            _ => in_process(),
        }
    })
}

#[cfg(feature = "sandbox")]
fn in_process() -> String {
    static SANDBOX: OnceLock<sandbox::Sandbox> = OnceLock::new();
    let sandbox = SANDBOX.get_or_init(|| {
        let start =
            time::OffsetDateTime::parse(FROZEN_AT, &time::format_description::well_known::Rfc3339)
                .expect("FROZEN_AT is RFC 3339");
        sandbox::Sandbox::builder()
            .frozen_at(start)
            .start()
            .expect("the sandbox starts")
    });
    sandbox.url().to_owned()
}

#[cfg(not(feature = "sandbox"))]
fn in_process() -> String {
    panic!("no sandbox: set {SANDBOX_URL_VAR} or turn on testkit's `sandbox` feature")
}

macro_rules! service {
    ($($name:ident),+) => {$(
        #[doc = concat!("The `", stringify!($name), "` service of the examples' sandbox: its base URL and the key of its most generous plan.")]
        pub fn $name() -> (String, String) {
            (format!("{}/{}", sandbox_url(), stringify!($name)), KEY.to_owned())
        }
    )+};
}

service!(social, esign, vision, projects, trading, worlds);

/// Signs e-signature document `id` for the signer whose turn it is, through the
/// sandbox's control route (`POST /_sandbox/esign/documents/{id}/sign`).
///
/// # Panics
/// When the sandbox refuses (an unknown document, no signer left): an example's setup
/// that fails is a failed example.
pub fn esign_sign(id: &str) {
    let status = control_post(&format!("/_sandbox/esign/documents/{id}/sign"));
    assert_eq!(status, 200, "the sandbox refused to sign {id}");
}

/// POSTs an empty body to a control route of the sandbox; the answer's status.
fn control_post(path: &str) -> u16 {
    let root = sandbox_url();
    let host = root.trim_start_matches("http://");
    let mut stream = TcpStream::connect(host).expect("the sandbox accepts a connection");
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("the request is written");
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0)
}
