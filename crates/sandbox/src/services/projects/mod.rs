//! The developer project service (`/projects/v1/projects`): create, list a page, delete.
//! Each API key is its own tenant. Projects are listed oldest first, so a page's offset
//! keeps meaning the same projects while new ones are created.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Extension, Router};
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::Sandbox;
use crate::clock::rfc3339;
use crate::http::{Caller, PageQuery, bad_request, error, json, object_body};
use crate::plans::Limit;
use crate::registry::ServiceDef;
use crate::service::Service;
use crate::state::Shared;

/// The environments a project can be created in; the first is the default.
pub const ENVIRONMENTS: &[&str] = &["development", "staging", "production"];

/// The longest name accepted.
const MAX_NAME: usize = 200;

/// The projects of every tenant.
/// The service, as the registry sees it.
pub(crate) struct Def;

impl ServiceDef for Def {
    fn hint(&self) -> &'static str {
        "cargo run -p projects-client --example projects_quickstart"
    }

    fn router(&self) -> Router<Arc<Shared>> {
        router()
    }

    fn limit(&self, plan: &str) -> Option<Limit> {
        match plan {
            "free" => Some(Limit::per_minute(100).with_burst(150)),
            "pro" => Some(Limit::per_minute(1000).with_burst(1500)),
            _ => None,
        }
    }
}

/// The project service of a running sandbox: `sandbox.projects()`.
#[derive(Debug, Clone, Copy)]
pub struct Projects<'a> {
    sandbox: &'a Sandbox,
}

impl Sandbox {
    /// The developer project service.
    pub fn projects(&self) -> Projects<'_> {
        Projects { sandbox: self }
    }
}

impl Projects<'_> {
    /// The base URL a client uses (paths such as `/v1/projects` go after it).
    pub fn url(&self) -> String {
        self.sandbox.service_url(Service::Projects)
    }
}

#[derive(Debug, Default)]
pub(crate) struct ProjectsState {
    tenants: BTreeMap<String, Vec<Project>>,
}

#[derive(Debug, Clone)]
struct Project {
    id: String,
    name: String,
    description: String,
    environment: String,
    created_at: OffsetDateTime,
}

impl Project {
    fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "environment": self.environment,
            "created_at": rfc3339(self.created_at),
            "status": "active",
        })
    }
}

/// The routes, relative to `/projects`.
fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v1/projects", get(list).post(create))
        .route("/v1/projects/{id}", delete(remove))
}

async fn list(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(query): RawQuery,
) -> Response {
    let page = match PageQuery::parse(query.as_deref()) {
        Ok(page) => page,
        Err(e) => return e,
    };
    shared.with_world(|w| {
        let projects = w
            .services
            .get_mut::<ProjectsState>()
            .tenants
            .entry(caller.key.clone())
            .or_default();
        page.answer(projects, Project::to_json)
    })
}

async fn create(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    let fields = match parse_new(&body) {
        Ok(fields) => fields,
        Err(e) => return e,
    };
    let (name, description, environment) = fields;
    shared.with_world(|w| {
        let project = Project {
            id: w.ids.next("proj"),
            name,
            description,
            environment,
            created_at: w.now(),
        };
        let answer = project.to_json();
        w.services
            .get_mut::<ProjectsState>()
            .tenants
            .entry(caller.key.clone())
            .or_default()
            .push(project);
        json(StatusCode::CREATED, &answer)
    })
}

/// The name, description and environment of a create request, or the 400 explaining
/// what is wrong.
fn parse_new(body: &Bytes) -> Result<(String, String, String), Response> {
    let body = object_body(body)?;
    let name = match body.get("name") {
        Some(Value::String(s)) if !s.trim().is_empty() && s.chars().count() <= MAX_NAME => {
            s.clone()
        }
        Some(Value::String(s)) if !s.trim().is_empty() => {
            return Err(bad_request(
                "invalid_name",
                format!("name must be at most {MAX_NAME} characters"),
            ));
        }
        _ => {
            return Err(bad_request(
                "invalid_name",
                "name is required and must be a non-empty string",
            ));
        }
    };
    let description = match body.get("description") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(bad_request(
                "invalid_description",
                "description must be a string",
            ));
        }
    };
    let environment = match body.get("environment") {
        // Left out: the default. `null` is not a way to leave it out (the field is a
        // string, never null): it is refused below like any other non-environment.
        None => ENVIRONMENTS[0].to_owned(),
        Some(Value::String(s)) if ENVIRONMENTS.contains(&s.to_ascii_lowercase().as_str()) => {
            s.to_ascii_lowercase()
        }
        Some(other) => {
            return Err(bad_request(
                "invalid_environment",
                format!(
                    "unknown environment {other}; known environments: {}",
                    ENVIRONMENTS.join(", ")
                ),
            ));
        }
    };
    Ok((name, description, environment))
}

async fn remove(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| {
        let projects = w
            .services
            .get_mut::<ProjectsState>()
            .tenants
            .entry(caller.key.clone())
            .or_default();
        let Some(index) = projects.iter().position(|p| p.id == id) else {
            return error(
                StatusCode::NOT_FOUND,
                "project_not_found",
                format!("no project with id {id:?}"),
            );
        };
        projects.remove(index);
        StatusCode::NO_CONTENT.into_response()
    })
}
