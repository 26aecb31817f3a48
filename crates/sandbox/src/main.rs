//! The sandbox as a program: `cargo run -p sandbox -- --port 8080`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut builder = sandbox::Sandbox::builder();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => match args.next().and_then(|p| p.parse::<u16>().ok()) {
                Some(port) => builder = builder.port(port),
                None => return usage("--port needs a number from 0 to 65535"),
            },
            "--seed" => match args.next().and_then(|s| s.parse::<u64>().ok()) {
                Some(seed) => builder = builder.seed(seed),
                None => return usage("--seed needs a number"),
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
    let sandbox = match builder.start() {
        Ok(sandbox) => sandbox,
        Err(e) => {
            eprintln!("sandbox: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("sandbox listening on {}", sandbox.url());
    for service in sandbox::Service::ALL {
        println!(
            "  {:<8} {}",
            service.prefix(),
            sandbox.service_url(*service)
        );
    }
    println!("try a service (in another terminal):");
    for service in sandbox::Service::ALL {
        println!("  {:<8} {}", service.prefix(), sandbox.hint(*service));
    }
    println!("  control  {}/_sandbox", sandbox.url());
    println!("keys:");
    for (key, plan) in sandbox::DEFAULT_KEYS {
        println!("  {key:<20} plan {plan}");
    }
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
    eprintln!("sandbox: {problem}\n\n{HELP}");
    ExitCode::from(2)
}

const HELP: &str = "usage: sandbox [--port PORT] [--seed SEED] [--frozen-at RFC3339]\n\n\
Runs the local emulator of the services on 127.0.0.1 (port 0 picks a free one).\n\
--frozen-at starts its clock at that time and moves it only when advanced\n\
(POST /_sandbox/clock/advance).";
