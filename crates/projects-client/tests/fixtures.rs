//! The client against recorded and hand-written server answers (tests/fixtures/*.json),
//! served by mockito over a real socket. Each case snapshots what the client sent and
//! what it made of the answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Debug;

use projects_client::{
    Client,
    projects::{Environment, ListProjects, NewProject, ProjectId},
};
use serde_json::{Value, json};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn check<T: Debug>(name: &str, call: impl FnOnce(&Client) -> projects_client::Result<T>) {
    let (sent, decoded) = testkit::exchange(DIR, name, testkit::client::<Client>, call);
    insta::assert_json_snapshot!(format!("{name}__sent"), sent);
    insta::assert_debug_snapshot!(format!("{name}__decoded"), decoded);
}

fn recorded_id(name: &str) -> ProjectId {
    ProjectId::new(testkit::load(DIR, name).path_id())
}

// ---- recorded from the sandbox ----

#[test]
fn projects_create() {
    check("projects_create", |c| {
        c.projects().create(
            &NewProject::new("billing")
                .description("Invoices and payments")
                .environment(Environment::Production),
        )
    });
}

#[test]
fn projects_create_minimal() {
    check("projects_create_minimal", |c| {
        c.projects().create(&NewProject::new("scratch"))
    });
}

#[test]
fn projects_list() {
    // No parameters: the service's default page size applies.
    check("projects_list", |c| c.projects().list(&ListProjects::new()));
}

#[test]
fn projects_list_page() {
    check("projects_list_page", |c| {
        c.projects().list(&ListProjects::new().limit(2).offset(1))
    });
}

#[test]
fn projects_delete() {
    let id = recorded_id("projects_delete");
    check("projects_delete", |c| c.projects().delete(id));
}

#[test]
fn error_project_not_found() {
    let id = recorded_id("error_project_not_found");
    check("error_project_not_found", |c| c.projects().delete(id));
}

#[test]
fn error_unknown_environment() {
    check("error_unknown_environment", |c| {
        c.projects()
            .create(&NewProject::new("qa box").environment(Environment::from("qa")))
    });
}

// The client refuses these before sending; the raw escape hatch still reaches the
// server's own checks, so the recorded errors are decoded through it.
#[test]
fn error_missing_name() {
    check("error_missing_name", |c| {
        c.raw()
            .post::<Value, _>("/v1/projects", &json!({"description": "no name"}))
    });
}

#[test]
fn error_invalid_limit() {
    check("error_invalid_limit", |c| {
        c.raw().get::<Value>("/v1/projects", &[("limit", "101")])
    });
}

#[test]
fn error_unauthorized() {
    check("error_unauthorized", |c| {
        c.projects().list(&ListProjects::new())
    });
}

#[test]
fn error_rate_limited() {
    check("error_rate_limited", |c| {
        c.projects().list(&ListProjects::new().limit(1))
    });
}

// ---- hand-written: odd but legal answers ----

#[test]
fn projects_list_no_meta() {
    check("projects_list_no_meta", |c| {
        c.projects().list(&ListProjects::new())
    });
}

#[test]
fn projects_create_wrapped() {
    check("projects_create_wrapped", |c| {
        c.projects()
            .create(&NewProject::new("billing").description("Invoices"))
    });
}

#[test]
fn projects_delete_200_body() {
    check("projects_delete_200_body", |c| {
        c.projects().delete("proj_1")
    });
}

#[test]
fn projects_delete_200_empty() {
    check("projects_delete_200_empty", |c| {
        c.projects().delete("proj_1")
    });
}

#[test]
fn error_html_500() {
    check("error_html_500", |c| {
        c.projects().list(&ListProjects::new())
    });
}

#[test]
fn error_rate_limited_http_date() {
    check("error_rate_limited_http_date", |c| {
        c.projects().list(&ListProjects::new())
    });
}

// ---- refused before sending ----

#[test]
fn bad_input_is_refused_without_a_request() {
    // A client pointed at a closed port: any request would be a Connect error.
    let client = Client::builder()
        .base_url("http://127.0.0.1:9")
        .api_key("k")
        .max_retries(0)
        .build()
        .unwrap();
    for limit in [0, 101] {
        let err = client
            .projects()
            .list(&ListProjects::new().limit(limit))
            .unwrap_err();
        assert!(
            matches!(&err, projects_client::Error::InvalidRequest(m) if m.contains("1 to 100") && m.contains(&limit.to_string())),
            "{err:?}"
        );
    }
    let err = client
        .projects()
        .create(&NewProject::new("  "))
        .unwrap_err();
    assert!(
        matches!(err, projects_client::Error::InvalidRequest(_)),
        "{err:?}"
    );
    let err = client.projects().delete("").unwrap_err();
    assert!(
        matches!(err, projects_client::Error::InvalidRequest(_)),
        "{err:?}"
    );
}
