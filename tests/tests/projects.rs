//! projects-client against a running sandbox: 250 projects created, iterated, partly
//! deleted and iterated again; the Free plan's burst; checks made before sending; a
//! dropped create that must not create twice.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::sync::Arc;

use e2e::sandbox_time_builder;
use projects_client::config::RequestOptions;
use projects_client::{
    Client, Error, ErrorKind, Plan,
    projects::{Environment, ListProjects, NewProject, Project, ProjectStatus},
};
use sandbox::{Fault, Sandbox, Service};

fn client(sandbox: &Sandbox) -> Client {
    Client::new(sandbox.projects().url(), sandbox.api_key()).unwrap()
}

fn all(client: &Client) -> Vec<Project> {
    client
        .projects()
        .iter()
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

#[test]
fn create_250_iterate_delete_some_iterate_again() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let environments = [
        Environment::Development,
        Environment::Staging,
        Environment::Production,
    ];
    for i in 0..250 {
        let project = client
            .projects()
            .create(
                &NewProject::new(format!("p-{i:03}"))
                    .description(format!("project number {i}"))
                    .environment(environments[i % 3].clone()),
            )
            .unwrap();
        assert_eq!(project.status, ProjectStatus::Active);
        assert_eq!(project.name, format!("p-{i:03}"));
    }

    // The default page is 20, with the totals.
    let first = client.projects().list(&ListProjects::new()).unwrap();
    assert_eq!(first.data.len(), 20);
    let meta = first.meta.unwrap();
    assert_eq!(
        (meta.total, meta.limit, meta.offset),
        (Some(250), Some(20), Some(0))
    );
    let last = client
        .projects()
        .list(&ListProjects::new().limit(100).offset(200))
        .unwrap();
    assert_eq!(last.data.len(), 50);

    let projects = all(&client);
    let names: Vec<String> = projects.iter().map(|p| p.name.clone()).collect();
    let expected: Vec<String> = (0..250).map(|i| format!("p-{i:03}")).collect();
    assert_eq!(names, expected, "every project once, oldest first");
    let ids: HashSet<_> = projects.iter().map(|p| p.id.clone()).collect();
    assert_eq!(ids.len(), 250);
    assert_eq!(projects[4].environment, Some(Environment::Staging));

    // Delete every third project, then iterate again.
    let deleted: Vec<_> = projects.iter().step_by(3).map(|p| p.id.clone()).collect();
    for id in &deleted {
        client.projects().delete(id).unwrap();
    }
    let remaining = all(&client);
    assert_eq!(remaining.len(), 250 - deleted.len());
    assert!(remaining.iter().all(|p| !deleted.contains(&p.id)));
    let expected: Vec<String> = (0..250)
        .filter(|i| i % 3 != 0)
        .map(|i| format!("p-{i:03}"))
        .collect();
    let names: Vec<String> = remaining.iter().map(|p| p.name.clone()).collect();
    assert_eq!(names, expected);

    // Deleting again: NotFound, which a clean-up treats as done.
    let err = client.projects().delete(&deleted[0]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    assert_eq!(err.status(), Some(404));
}

#[test]
fn iteration_stays_consistent_while_projects_are_created() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    for i in 0..150 {
        client
            .projects()
            .create(&NewProject::new(format!("a-{i}")))
            .unwrap();
    }
    // Projects created during an iteration come after the ones already listed: nothing
    // is seen twice and nothing older is skipped.
    let mut seen = Vec::new();
    for (n, project) in client.projects().iter().enumerate() {
        seen.push(project.unwrap().name);
        if n == 50 {
            client.projects().create(&NewProject::new("late")).unwrap();
        }
    }
    let unique: HashSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a project was listed twice");
    assert!(seen.starts_with(&(0..150).map(|i| format!("a-{i}")).collect::<Vec<_>>()));
}

#[test]
fn free_key_bursts_150_then_is_limited() {
    let sandbox = Arc::new(
        Sandbox::builder()
            .frozen_at(time::macros::datetime!(2026-03-01 12:00 UTC))
            .start()
            .unwrap(),
    );
    let client = Client::builder()
        .base_url(sandbox.projects().url())
        .api_key("sk_test_free")
        .max_retries(0)
        .build()
        .unwrap();
    for i in 0..150 {
        client
            .projects()
            .list(&ListProjects::new().limit(1))
            .unwrap_or_else(|e| panic!("request {i} of the burst: {e}"));
    }
    let err = client.projects().list(&ListProjects::new()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::RateLimited, "{err}");
    let api = err.api().unwrap();
    assert_eq!(api.retry_after, Some(std::time::Duration::from_secs(1)));
    assert_eq!(api.code.as_deref(), Some("rate_limited"));

    // The same plan set on the client: it paces itself (100/min after the burst of
    // 150) and never meets a 429, on the sandbox's clock: 300 calls take the plan's
    // theoretical minimum, (300 - 150) calls at 0.6 s each, within 2 %.
    sandbox.reset();
    let (builder, sleeper) =
        sandbox_time_builder::<Client>(&sandbox, Service::Projects, "sk_test_free");
    let paced = builder
        .rate_limit(Plan::Free)
        .max_retries(0)
        .build()
        .unwrap();
    let started = sandbox.now();
    for i in 0..300 {
        paced
            .projects()
            .list(&ListProjects::new().limit(1))
            .unwrap_or_else(|e| panic!("paced request {i} (no 429 may happen): {e}"));
    }
    let elapsed = (sandbox.now() - started).as_seconds_f64();
    let waits = sleeper.slept();
    assert_eq!(waits.len(), 150, "the 150 requests after the burst wait");
    let minimum = 150.0 * 0.6;
    let ratio = elapsed / minimum;
    eprintln!("pacing: 300 calls in {elapsed:.1} s of sandbox time, {ratio:.3} of the minimum");
    assert!(
        (0.98..=1.02).contains(&ratio),
        "300 calls took {elapsed} s against a minimum of {minimum} s"
    );
}

#[test]
fn bad_page_size_is_refused_without_a_request() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox).with_options(&RequestOptions::new().max_retries(0));
    // A fault armed for the next list request: had the client sent anything, the fault
    // would have been used up.
    sandbox.inject(Fault::on("GET", "/projects/v1/projects").status(500));
    for limit in [101, 0] {
        let err = client
            .projects()
            .list(&ListProjects::new().limit(limit))
            .unwrap_err();
        assert!(
            matches!(&err, Error::InvalidRequest(m) if m.contains("1 to 100")),
            "{err:?}"
        );
    }
    let err = client
        .projects()
        .list(&ListProjects::new().limit(100))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.status(), Some(500), "the armed fault was still there");
}

#[test]
fn server_validation_comes_back_typed() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    let err = client
        .projects()
        .create(&NewProject::new("qa").environment(Environment::from("qa")))
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadRequest);
    let api = err.api().unwrap();
    assert_eq!(api.code.as_deref(), Some("invalid_environment"));
    assert!(api.message.contains("development"), "{}", api.message);
    assert!(api.request_id.is_some());

    let err = Client::new(sandbox.projects().url(), "sk_test_wrong")
        .unwrap()
        .projects()
        .list(&ListProjects::new())
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unauthorized);
    assert!(!err.to_string().contains("sk_test_wrong"));
}

#[test]
fn a_dropped_create_is_not_sent_twice() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    sandbox.inject(Fault::on("POST", "/projects/v1/projects").drop_connection());
    let err = client
        .projects()
        .create(&NewProject::new("once"))
        .unwrap_err();
    assert!(err.may_have_been_processed(), "{err:?}");
    let projects = all(&client);
    assert_eq!(projects.len(), 1, "the project exists exactly once");
    assert_eq!(projects[0].name, "once");

    // A 503 before handling is retried, and creates one project.
    sandbox.inject(
        Fault::on("POST", "/projects/v1/projects")
            .status(503)
            .retry_after(0),
    );
    client
        .projects()
        .create(&NewProject::new("twice?"))
        .unwrap();
    assert_eq!(all(&client).len(), 2);
}

#[test]
fn pages_and_iteration_from_a_point_resume_where_asked() {
    let sandbox = e2e::sandbox().unwrap();
    let client = client(&sandbox);
    for i in 0..7 {
        client
            .projects()
            .create(&NewProject::new(format!("p{i}")))
            .unwrap();
    }
    let pages: Vec<Vec<String>> = client
        .projects()
        .pages(&ListProjects::new().limit(3))
        .map(|p| p.unwrap().data.into_iter().map(|p| p.name).collect())
        .collect();
    assert_eq!(
        pages,
        [vec!["p0", "p1", "p2"], vec!["p3", "p4", "p5"], vec!["p6"]]
    );
    let mut from = client
        .projects()
        .iter_from(&ListProjects::new().offset(2).limit(2));
    let first: Vec<String> = from.by_ref().take(3).map(|p| p.unwrap().name).collect();
    assert_eq!(first, ["p2", "p3", "p4"]);
    // Two pages of two fetched: the next starts at 6.
    assert_eq!(from.next_offset(), 6);
    let rest: Vec<String> = from.map(|p| p.unwrap().name).collect();
    assert_eq!(rest, ["p5", "p6"]);
}
