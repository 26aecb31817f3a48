//! The social publishing service (`/social/v1/...`): posts (immediate or scheduled, one
//! per platform), the schedule, an analytics overview that moves as posts publish, and
//! connected accounts. Each API key is its own tenant with its own accounts and posts.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Extension, Router};
use serde_json::{Value, json};
use time::{Date, OffsetDateTime};

use crate::Sandbox;
use crate::clock::{parse_rfc3339, rfc3339};
use crate::http::{Caller, PageQuery, Params, bad_request, error, json, object_body};
use crate::ids::{Ids, stable_hash};
use crate::plans::Limit;
use crate::registry::ServiceDef;
use crate::service::Service;
use crate::state::{Shared, World};

/// The platform identifiers the sandbox knows, with the name shown on accounts.
pub const PLATFORMS: &[(&str, &str)] = &[
    ("x", "X"),
    ("linkedin", "LinkedIn"),
    ("facebook", "Facebook"),
    ("instagram", "Instagram"),
    ("threads", "Threads"),
    ("bluesky", "Bluesky"),
    ("mastodon", "Mastodon"),
];

/// The longest post each platform takes, in characters (Unicode scalar values): the
/// platforms' own published limits. The service's document names no limit; the sandbox
/// keeps the platforms' so that a post a platform would refuse is refused here too.
pub const POST_LIMITS: &[(&str, usize)] = &[
    ("x", 280),
    ("linkedin", 3000),
    ("facebook", 63_206),
    ("instagram", 2200),
    ("threads", 500),
    ("bluesky", 300),
    ("mastodon", 500),
];

/// The reporting windows of the analytics overview, and the default.
const PERIODS: &[(&str, i64)] = &[("day", 1), ("week", 7), ("month", 30), ("year", 365)];
const DEFAULT_PERIOD: &str = "month";

/// How many missed daily `analytics.updated` events one clock jump may emit.
const MAX_DAILY_CATCH_UP: usize = 31;

/// The service, as the registry sees it.
pub(crate) struct Def;

impl ServiceDef for Def {
    fn hint(&self) -> &'static str {
        "cargo run -p social-client --example social_quickstart"
    }

    fn router(&self) -> Router<Arc<Shared>> {
        router()
    }

    fn limit(&self, plan: &str) -> Option<Limit> {
        Some(match plan {
            "starter" => Limit::per_minute(100),
            "pro" => Limit::per_minute(1000),
            _ => Limit::per_minute(10_000),
        })
    }

    fn tick(&self, world: &mut World, now: OffsetDateTime) -> Vec<(&'static str, Value)> {
        tick(world, now)
    }
}

/// The social service of a running sandbox: `sandbox.social()`.
#[derive(Debug, Clone, Copy)]
pub struct Social<'a> {
    sandbox: &'a Sandbox,
}

impl Sandbox {
    /// The social publishing service.
    pub fn social(&self) -> Social<'_> {
        Social { sandbox: self }
    }
}

impl Social<'_> {
    /// The base URL a client uses (paths such as `/v1/posts` go after it).
    pub fn url(&self) -> String {
        self.sandbox.service_url(Service::Social)
    }
}

/// The social service's state: one tenant per API key.
#[derive(Debug, Default)]
pub(crate) struct SocialState {
    tenants: BTreeMap<String, Tenant>,
}

#[derive(Debug)]
struct Tenant {
    posts: Vec<Post>,
    accounts: Vec<Account>,
    followers_base: u64,
    analytics_day: Date,
}

#[derive(Debug, Clone)]
struct Post {
    id: String,
    content: String,
    platform: String,
    account_id: String,
    status: &'static str,
    created_at: OffsetDateTime,
    scheduled_at: Option<OffsetDateTime>,
    published_at: Option<OffsetDateTime>,
    schedule_id: Option<String>,
}

impl Post {
    fn to_json(&self) -> Value {
        let mut post = json!({
            "id": self.id,
            "content": self.content,
            "platform": self.platform,
            "account_id": self.account_id,
            "status": self.status,
            "created_at": rfc3339(self.created_at),
        });
        if let Some(t) = self.scheduled_at {
            post["scheduled_at"] = json!(rfc3339(t));
        }
        if let Some(t) = self.published_at {
            post["published_at"] = json!(rfc3339(t));
        }
        post
    }

    fn impressions(&self) -> u64 {
        100 + stable_hash(&self.id) % 900
    }

    fn clicks(&self) -> u64 {
        self.impressions() * (1 + stable_hash(&self.content) % 5) / 100
    }
}

#[derive(Debug, Clone)]
struct Account {
    id: String,
    platform: &'static str,
    username: String,
    display_name: String,
    connected_at: OffsetDateTime,
    disconnected_at: Option<OffsetDateTime>,
}

impl Account {
    fn to_json(&self) -> Value {
        let mut account = json!({
            "id": self.id,
            "platform": self.platform,
            "username": self.username,
            "display_name": self.display_name,
            "status": if self.disconnected_at.is_some() { "disconnected" } else { "connected" },
            "connected_at": rfc3339(self.connected_at),
        });
        if let Some(t) = self.disconnected_at {
            account["disconnected_at"] = json!(rfc3339(t));
        }
        account
    }

    fn connected(&self) -> bool {
        self.disconnected_at.is_none()
    }
}

impl Tenant {
    fn new(key: &str, ids: &mut Ids, now: OffsetDateTime) -> Tenant {
        let accounts = PLATFORMS
            .iter()
            .map(|(platform, name)| Account {
                id: ids.next("acct"),
                platform,
                username: format!("sandbox_{platform}"),
                display_name: format!("Sandbox on {name}"),
                connected_at: now,
                disconnected_at: None,
            })
            .collect();
        Tenant {
            posts: Vec::new(),
            accounts,
            followers_base: 1_000 + stable_hash(key) % 500,
            analytics_day: now.date(),
        }
    }

    fn overview(&self, period: &str, days: i64, at: OffsetDateTime) -> Value {
        let since = at - time::Duration::days(days);
        let published = || {
            self.posts
                .iter()
                .filter(|p| p.published_at.is_some_and(|t| t <= at))
        };
        let in_window: Vec<&Post> = published()
            .filter(|p| p.published_at.is_some_and(|t| t > since))
            .collect();
        let impressions: u64 = in_window.iter().map(|p| p.impressions()).sum();
        let clicks: u64 = in_window.iter().map(|p| p.clicks()).sum();
        let followers = self.followers_base + 25 * published().count() as u64;
        let rate = if impressions == 0 {
            0.0
        } else {
            (clicks as f64 / impressions as f64 * 10_000.0).round() / 10_000.0
        };
        json!({
            "followers": followers,
            "engagement_rate": rate,
            "impressions": impressions,
            "clicks": clicks,
            "period": period,
        })
    }
}

fn tenant<'w>(world: &'w mut World, key: &str) -> &'w mut Tenant {
    let now = world.clock.now();
    let World { services, ids, .. } = world;
    services
        .get_mut::<SocialState>()
        .tenants
        .entry(key.to_owned())
        .or_insert_with(|| Tenant::new(key, ids, now))
}

/// The routes, relative to `/social`.
fn router() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v1/posts", get(list_posts).post(create_posts))
        .route("/v1/schedule", get(schedule))
        .route("/v1/analytics/overview", get(analytics))
        .route("/v1/accounts", get(accounts))
        .route("/v1/accounts/{id}", delete(disconnect))
}

async fn create_posts(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> Response {
    shared.with_world(|w| create(w, &caller.key, &body).unwrap_or_else(|e| e))
}

fn create(world: &mut World, key: &str, body: &Bytes) -> Result<Response, Response> {
    let body = object_body(body)?;
    let content = match body.get("content") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            return Err(bad_request(
                "invalid_content",
                "content is required and must be a non-empty string",
            ));
        }
    };
    let platforms: Vec<String> = match body.get("platforms") {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut platforms = Vec::new();
            for item in items {
                let Some(name) = item.as_str() else {
                    return Err(bad_request(
                        "invalid_platforms",
                        "platforms must be an array of platform identifiers (strings)",
                    ));
                };
                let name = name.to_ascii_lowercase();
                if !PLATFORMS.iter().any(|(p, _)| *p == name) {
                    let known: Vec<&str> = PLATFORMS.iter().map(|(p, _)| *p).collect();
                    return Err(bad_request(
                        "unknown_platform",
                        format!(
                            "unknown platform {name:?}; known platforms: {}",
                            known.join(", ")
                        ),
                    ));
                }
                if !platforms.contains(&name) {
                    platforms.push(name);
                }
            }
            platforms
        }
        _ => {
            return Err(bad_request(
                "invalid_platforms",
                "platforms is required: a non-empty array of platform identifiers",
            ));
        }
    };
    let length = content.chars().count();
    let too_long = POST_LIMITS
        .iter()
        .find(|&&(p, limit)| length > limit && platforms.iter().any(|q| q == p));
    if let Some((platform, limit)) = too_long {
        return Err(bad_request(
            "content_too_long",
            format!("content is {length} characters; {platform} takes at most {limit}"),
        ));
    }
    let now = world.now();
    let scheduled_at = match body.get("scheduled_at") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match parse_rfc3339(s) {
            Some(t) if t > now => Some(t),
            Some(_) => {
                return Err(bad_request(
                    "scheduled_at_in_past",
                    format!(
                        "scheduled_at {s} is not in the future (now is {})",
                        rfc3339(now)
                    ),
                ));
            }
            None => return Err(invalid_scheduled_at(s)),
        },
        Some(other) => return Err(invalid_scheduled_at(&other.to_string())),
    };

    let tenant_accounts: Vec<(String, String)> = {
        let tenant = tenant(world, key);
        let mut found = Vec::new();
        for platform in &platforms {
            match tenant
                .accounts
                .iter()
                .find(|a| a.platform == platform && a.connected())
            {
                Some(account) => found.push((platform.clone(), account.id.clone())),
                None => {
                    return Err(bad_request(
                        "platform_not_connected",
                        format!(
                            "no connected {platform} account; connect one before posting to it"
                        ),
                    ));
                }
            }
        }
        found
    };

    let mut created = Vec::new();
    for (platform, account_id) in tenant_accounts {
        let post = Post {
            id: world.ids.next("post"),
            content: content.clone(),
            platform,
            account_id,
            status: if scheduled_at.is_some() {
                "scheduled"
            } else {
                "published"
            },
            created_at: now,
            scheduled_at,
            published_at: if scheduled_at.is_some() {
                None
            } else {
                Some(now)
            },
            schedule_id: scheduled_at.map(|_| world.ids.next("sched")),
        };
        created.push(post);
    }
    tenant(world, key).posts.extend(created.iter().cloned());
    let event = if scheduled_at.is_some() {
        "post.scheduled"
    } else {
        "post.published"
    };
    for post in &created {
        world.emit(event, post.to_json());
    }
    let data: Vec<Value> = created.iter().map(Post::to_json).collect();
    Ok(json(StatusCode::CREATED, &json!({ "data": data })))
}

fn invalid_scheduled_at(given: &str) -> Response {
    bad_request(
        "invalid_scheduled_at",
        format!(
            "scheduled_at must be an RFC 3339 timestamp such as 2026-01-01T09:00:00Z, got {given}"
        ),
    )
}

async fn list_posts(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    RawQuery(query): RawQuery,
) -> Response {
    let page = match PageQuery::parse(query.as_deref()) {
        Ok(page) => page,
        Err(e) => return e,
    };
    shared.with_world(|w| page.answer(&tenant(w, &caller.key).posts, Post::to_json))
}

async fn schedule(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    shared.with_world(|w| {
        let tenant = tenant(w, &caller.key);
        let mut entries: Vec<&Post> = tenant
            .posts
            .iter()
            .filter(|p| p.status == "scheduled")
            .collect();
        entries.sort_by(|a, b| (a.scheduled_at, &a.id).cmp(&(b.scheduled_at, &b.id)));
        let data: Vec<Value> = entries
            .iter()
            .map(|p| {
                json!({
                    "id": p.schedule_id,
                    "post_id": p.id,
                    "scheduled_at": p.scheduled_at.map(rfc3339),
                    "timezone": "UTC",
                })
            })
            .collect();
        json(StatusCode::OK, &json!({ "data": data }))
    })
}

async fn analytics(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    params: Params,
) -> Response {
    let pairs = params.0.as_slice();
    let period = pairs
        .iter()
        .find(|(k, _)| k == "period")
        .map(|(_, v)| v.as_str())
        .unwrap_or(DEFAULT_PERIOD);
    let Some((period, days)) = PERIODS.iter().find(|(p, _)| *p == period).copied() else {
        let known: Vec<&str> = PERIODS.iter().map(|(p, _)| *p).collect();
        return bad_request(
            "invalid_period",
            format!(
                "unknown period {period:?}; known periods: {}",
                known.join(", ")
            ),
        );
    };
    shared.with_world(|w| {
        let now = w.now();
        json(
            StatusCode::OK,
            &tenant(w, &caller.key).overview(period, days, now),
        )
    })
}

async fn accounts(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
) -> Response {
    shared.with_world(|w| {
        let data: Vec<Value> = tenant(w, &caller.key)
            .accounts
            .iter()
            .filter(|a| a.connected())
            .map(Account::to_json)
            .collect();
        json(StatusCode::OK, &json!({ "data": data }))
    })
}

async fn disconnect(
    State(shared): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> Response {
    shared.with_world(|w| {
        let now = w.now();
        let tenant = tenant(w, &caller.key);
        let Some(account) = tenant
            .accounts
            .iter_mut()
            .find(|a| a.id == id && a.connected())
        else {
            return error(
                StatusCode::NOT_FOUND,
                "account_not_found",
                format!("no connected account with id {id:?}"),
            );
        };
        account.disconnected_at = Some(now);
        let data = account.to_json();
        w.emit("account.disconnected", data);
        StatusCode::NO_CONTENT.into_response()
    })
}

/// Publishes the posts whose time has come and emits the daily analytics refreshes.
fn tick(world: &mut World, now: OffsetDateTime) -> Vec<(&'static str, Value)> {
    let mut events = Vec::new();
    for tenant in world.services.get_mut::<SocialState>().tenants.values_mut() {
        let mut due: Vec<usize> = (0..tenant.posts.len())
            .filter(|&i| {
                let p = &tenant.posts[i];
                p.status == "scheduled" && p.scheduled_at.is_some_and(|t| t <= now)
            })
            .collect();
        due.sort_by_key(|&i| (tenant.posts[i].scheduled_at, i));
        for i in due {
            let connected = {
                let post = &tenant.posts[i];
                tenant
                    .accounts
                    .iter()
                    .any(|a| a.id == post.account_id && a.connected())
            };
            let post = &mut tenant.posts[i];
            if connected {
                post.status = "published";
                post.published_at = post.scheduled_at;
                events.push(("post.published", post.to_json()));
            } else {
                // The account was disconnected while the post waited: nothing to publish to.
                post.status = "failed";
            }
        }
        let today = now.date();
        let missed = (today - tenant.analytics_day).whole_days();
        if missed > MAX_DAILY_CATCH_UP as i64 {
            tenant.analytics_day = today - time::Duration::days(MAX_DAILY_CATCH_UP as i64);
        }
        while tenant.analytics_day < today {
            let Some(next) = tenant.analytics_day.next_day() else {
                break;
            };
            tenant.analytics_day = next;
            let midnight = next.midnight().assume_utc();
            events.push(("analytics.updated", tenant.overview("day", 1, midnight)));
        }
    }
    events
}
