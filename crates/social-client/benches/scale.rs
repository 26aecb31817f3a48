//! `cargo xtask bench`: the scale of a user's program. A script creates N posts through
//! the client and iterates them back through `posts().iter()`, for N = 1,000 and 10,000,
//! against the sandbox in a child process (a fresh one per size); it reports the time
//! per item of each part and the client process's peak resident memory while iterating.
//!
//! Options: `--quick` (N = 100 and 1,000), `--write <file>` to also write the results as
//! a Markdown section.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::time::{Duration, Instant};

use social_client::{
    Client,
    posts::{ListPosts, NewPost, Platform},
};
use testkit::bench::{memory_mib, reset_peak};

/// The peak-memory target while iterating, whatever N.
const TARGET_PEAK_MIB: f64 = 16.0;

fn main() {
    if testkit::bench::flag("--serve") {
        let sandbox = sandbox::Sandbox::start().unwrap();
        testkit::bench::serve_until_stdin_closes(&format!(
            "{} {}",
            sandbox.social().url(),
            sandbox.api_key()
        ));
        return;
    }
    let quick = testkit::bench::flag("--quick");
    let write_to = testkit::bench::option("--write");
    let sizes: [usize; 2] = if quick { [100, 1_000] } else { [1_000, 10_000] };
    let baseline = memory_mib("VmRSS");

    let mut rows = Vec::new();
    for n in sizes {
        let (mut child, words) = testkit::bench::start_child(&["--serve"]);
        let client = Client::new(&words[0], words[1].as_str()).unwrap();
        let started = Instant::now();
        for i in 0..n {
            client
                .posts()
                .create(&NewPost::new(format!("post {i}"), [Platform::X]))
                .unwrap();
        }
        let create = started.elapsed();

        reset_peak();
        let started = Instant::now();
        let mut seen = 0usize;
        let mut last = String::new();
        for post in client.posts().iter() {
            let post = post.unwrap();
            seen += 1;
            last = post.content;
        }
        let iterate = started.elapsed();
        let peak = memory_mib("VmHWM");
        assert_eq!(seen, n, "every post came back");
        assert_eq!(last, format!("post {}", n - 1));
        // The pages a user would list by hand, to check `meta` agrees.
        let total = client
            .posts()
            .list(&ListPosts::new().limit(1))
            .unwrap()
            .meta
            .and_then(|m| m.total);
        assert_eq!(total, Some(n as u64));
        drop(child.stdin.take());
        let _ = child.wait();
        println!(
            "{n:>6} posts: create {:.1} µs/post, iterate {:.1} µs/post, peak RSS {peak:.1} MiB",
            per_item(create, n),
            per_item(iterate, n)
        );
        rows.push((n, create, iterate, peak));
    }

    let max_peak = rows.iter().map(|r| r.3).fold(0.0, f64::max);
    let (small, large) = (&rows[0], &rows[1]);
    let growth = per_item(large.2, large.0) / per_item(small.2, small.0);
    let verdict = if max_peak < TARGET_PEAK_MIB {
        "met"
    } else {
        "**missed**"
    };
    let mut table = String::new();
    for (n, create, iterate, peak) in &rows {
        table.push_str(&format!(
            "| {n} | {:.1} µs | {:.1} µs | {peak:.1} MiB |\n",
            per_item(*create, *n),
            per_item(*iterate, *n)
        ));
    }
    let report = format!(
        "## social-client: a script's scale\n\n\
Release build, one run: N posts created one by one through the client, then iterated back \
through `posts().iter()` (100 a page), against a fresh sandbox in a child process for each N. \
Peak memory is the client process's resident high-water mark while iterating (`VmHWM`, reset \
first); before anything it was {baseline:.1} MiB.\n\n\
| posts | create, per post | iterate, per post | peak resident memory |\n|---|---|---|---|\n\
{table}\n\
Iteration time per post at {} over at {}: **{growth:.2}** (1.0 is linear). Peak memory target \
under {TARGET_PEAK_MIB:.0} MiB: {verdict}.\n",
        large.0, small.0,
    );
    println!("\n{report}");
    if let Some(path) = write_to {
        std::fs::write(&path, report).unwrap();
        println!("written to {path}");
    }
}

fn per_item(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}
