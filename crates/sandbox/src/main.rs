//! The sandbox as a program: `cargo run -p service-clients-sandbox`, or installed,
//! `service-clients-sandbox [--port PORT] [--host ADDR] ...`.

use std::process::ExitCode;
use std::time::Duration;

/// The port the program listens on unless told otherwise: the one the READMEs' export
/// lines name.
const DEFAULT_PORT: u16 = 4010;

/// How long after sending the program's e-signature signers sign on their own: long
/// enough to see the document sent, short enough for a script to wait for.
const DEFAULT_SIGN_AFTER: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut port = DEFAULT_PORT;
    let mut builder = service_clients_sandbox::Sandbox::builder().sign_after(DEFAULT_SIGN_AFTER);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => match args.next().and_then(|p| p.parse::<u16>().ok()) {
                Some(p) => port = p,
                None => return usage("--port needs a number from 0 to 65535 (0: any free port)"),
            },
            "--host" => match args.next().and_then(|h| h.parse::<std::net::IpAddr>().ok()) {
                Some(host) => {
                    if !host.is_loopback() {
                        eprintln!(
                            "warning: listening on {host}: anyone who reaches this address can use \
                             the sandbox, whose keys are public; it has no real security"
                        );
                    }
                    builder = builder.host(host);
                }
                None => return usage("--host needs an IP address, e.g. 0.0.0.0 in a container"),
            },
            "--no-market-hours" => builder = builder.market_hours(false),
            "--seed" => match args.next().and_then(|s| s.parse::<u64>().ok()) {
                Some(seed) => builder = builder.seed(seed),
                None => return usage("--seed needs a number"),
            },
            "--sign-after" => match args.next().and_then(|s| s.parse::<u64>().ok()) {
                Some(secs) => builder = builder.sign_after(Duration::from_secs(secs)),
                None => return usage("--sign-after needs a number of seconds"),
            },
            "--frozen-at" => match args.next().and_then(|t| {
                time::OffsetDateTime::parse(&t, &time::format_description::well_known::Rfc3339).ok()
            }) {
                Some(start) => builder = builder.frozen_at(start),
                None => {
                    return usage("--frozen-at needs an RFC 3339 time, e.g. 2026-03-02T14:30:00Z");
                }
            },
            "-h" | "--help" => {
                println!("{HELP}");
                return ExitCode::SUCCESS;
            }
            other => return usage(&format!("unknown argument {other:?}")),
        }
    }
    let sandbox = match builder.port(port).start() {
        Ok(sandbox) => sandbox,
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            eprintln!(
                "service-clients-sandbox: {e}: another program has port {port}; start with \
                 --port N for another, or --port 0 for any free one"
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("service-clients-sandbox: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("{}", sandbox.banner());
    println!("press Ctrl-C to stop");
    wait_for_ctrl_c();
    println!("sandbox stopped");
    drop(sandbox);
    ExitCode::SUCCESS
}

fn wait_for_ctrl_c() {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        let _ = tokio::signal::ctrl_c().await;
    });
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("service-clients-sandbox: {problem}\n\n{HELP}");
    ExitCode::from(2)
}

const HELP: &str = "usage: service-clients-sandbox [--port PORT] [--host ADDR] [--seed SEED]\n\
\x20                              [--sign-after SECS] [--frozen-at RFC3339]\n\
\x20                              [--no-market-hours]\n\n\
Runs the local emulator of the six services, on 127.0.0.1:4010 unless told otherwise.\n\
--port 0 picks a free port. --host 0.0.0.0 (in a container, as a CI service) lets\n\
others in: the sandbox has no real security. --sign-after: e-signature signers sign\n\
on their own this many seconds after a document is sent (2 by default). --frozen-at\n\
starts its clock at that time and moves it only when advanced\n\
(POST /_sandbox/clock/advance). Trading's orders fill only while its market is open\n\
(weekdays 14:30-21:00 UTC, GET /trading/v1/clock); --no-market-hours: it never closes.\n\
GET / lists the services and their base URLs.";
