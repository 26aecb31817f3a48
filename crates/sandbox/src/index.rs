//! What the sandbox says about itself: `GET /` (the services, their base URLs, the
//! variables a client reads and the plans each key is on) and the banner the program
//! prints when it starts. Both come from here, so they never disagree.

use serde_json::{Value, json};

use crate::plans::Limit;
use crate::service::Service;
use crate::services::esign::{ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET};

/// A key on a plan that a service limits differently from its most generous one.
struct PlanOf {
    key: String,
    plan: String,
    limit: Option<Limit>,
}

/// The keys whose plans `service` knows (their limit differs from the default key's).
fn plans_of(service: Service, keys: &[(String, String)]) -> Vec<PlanOf> {
    let def = crate::services::def(service);
    let most = def.limit("default");
    keys.iter()
        .filter(|(_, plan)| def.limit(plan) != most)
        .map(|(key, plan)| PlanOf {
            key: key.clone(),
            plan: plan.clone(),
            limit: def.limit(plan),
        })
        .collect()
}

/// A limit as a person reads it: `100/min`, `10000/h, bursts of 150`, `unlimited`.
fn shown(limit: Option<Limit>) -> String {
    let Some(limit) = limit else {
        return "unlimited".to_owned();
    };
    let per = if limit.window.as_secs() == 3600 {
        "h"
    } else {
        "min"
    };
    let mut text = format!("{}/{per}", limit.count);
    if limit.burst != limit.count {
        text.push_str(&format!(", bursts of {}", limit.burst));
    }
    text
}

/// The variables a client of `service` reads, set for this sandbox.
fn exports(root: &str, service: Service, key: &str) -> Vec<(String, String)> {
    let env = service.prefix().to_ascii_uppercase();
    let mut vars = vec![
        (
            format!("{env}_BASE_URL"),
            format!("{root}/{}", service.prefix()),
        ),
        (format!("{env}_API_KEY"), key.to_owned()),
    ];
    if service == Service::Esign {
        vars.push((format!("{env}_CLIENT_ID"), ESIGN_CLIENT_ID.to_owned()));
        vars.push((
            format!("{env}_CLIENT_SECRET"),
            ESIGN_CLIENT_SECRET.to_owned(),
        ));
    }
    vars
}

/// `GET /`: every service with its base URL, the variables its client reads, and its
/// plans; the control routes' root.
pub(crate) fn index(root: &str, keys: &[(String, String)], sign_after_secs: i64) -> Value {
    let services: Vec<Value> = Service::ALL
        .iter()
        .map(|&service| {
            let def = crate::services::def(service);
            let env: serde_json::Map<String, Value> = exports(root, service, crate::DEFAULT_KEY)
                .into_iter()
                .map(|(k, v)| (k, Value::String(v)))
                .collect();
            let plans: Vec<Value> = plans_of(service, keys)
                .into_iter()
                .map(|p| json!({"key": p.key, "plan": p.plan, "limit": shown(p.limit)}))
                .collect();
            json!({
                "name": service.prefix(),
                "base_url": format!("{root}/{}", service.prefix()),
                "env": env,
                "default_key_limit": shown(def.limit("default")),
                "plans": plans,
            })
        })
        .collect();
    json!({
        "services": services,
        "default_key": crate::DEFAULT_KEY,
        "control": format!("{root}/_sandbox"),
        "esign_signers_sign_after_secs": sign_after_secs,
    })
}

/// What the program prints when it starts: where each service is, the plans behind
/// the keys, and the lines that point a client at it.
pub(crate) fn banner(root: &str, keys: &[(String, String)], sign_after_secs: i64) -> String {
    let mut out = format!(
        "service-clients-sandbox listening on {root}\n\nservices (GET {root}/ lists them as JSON):\n"
    );
    for &service in Service::ALL {
        let def = crate::services::def(service);
        let mut plans: Vec<String> = plans_of(service, keys)
            .into_iter()
            .map(|p| format!("{} ({}) {}", p.plan, p.key, shown(p.limit)))
            .collect();
        plans.push(format!(
            "default ({}) {}",
            crate::DEFAULT_KEY,
            shown(def.limit("default"))
        ));
        out.push_str(&format!(
            "  {:<9}{root}/{:<10} plans: {}\n",
            service.prefix(),
            service.prefix(),
            plans.join("; ")
        ));
    }
    out.push_str(&format!(
        "\nevery key works with every service, each a tenant of its own; a key on a plan a\n\
         service does not have gets that service's most generous plan. E-signature signers\n\
         sign on their own {} after a document is sent (--sign-after SECS). Trading's orders\n\
         fill only while its market is open, weekdays 14:30-21:00 UTC (GET /trading/v1/clock).\n\
         control routes (clock, faults, webhooks, signing): {root}/_sandbox\n\
         \nto point a client at it, in another terminal:\n",
        seconds(sign_after_secs)
    ));
    for &service in Service::ALL {
        let vars: Vec<String> = exports(root, service, crate::DEFAULT_KEY)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        out.push_str(&format!("  export {}\n", vars.join(" ")));
    }
    out
}

/// `2 s`, `1 h`, `1 day`.
fn seconds(secs: i64) -> String {
    match secs {
        86_400 => "a day".to_owned(),
        s if s % 3600 == 0 && s > 0 => format!("{} h", s / 3600),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Vec<(String, String)> {
        crate::DEFAULT_KEYS
            .iter()
            .map(|(k, p)| ((*k).to_owned(), (*p).to_owned()))
            .collect()
    }

    #[test]
    fn the_banner_names_each_services_plans_and_the_lines_for_a_client() {
        let text = banner("http://127.0.0.1:4010", &keys(), 2);
        assert!(text.starts_with("service-clients-sandbox listening on http://127.0.0.1:4010\n"));
        assert!(text.contains("starter (sk_test_starter) 100/min"), "{text}");
        assert!(
            text.contains("free (sk_test_free) 100/min, bursts of 150"),
            "{text}"
        );
        assert!(
            text.contains("business (sk_test_business) 10000/h"),
            "{text}"
        );
        assert!(text.contains("  export TRADING_BASE_URL=http://127.0.0.1:4010/trading TRADING_API_KEY=sk_test_sandbox\n"));
        assert!(
            text.contains(
                "ESIGN_CLIENT_ID=sandbox_client ESIGN_CLIENT_SECRET=sandbox_client_secret"
            )
        );
        assert!(text.contains("sign on their own 2 s after"));
        // A plan of one service is not listed under another.
        let social = text
            .lines()
            .find(|l| l.trim_start().starts_with("social "))
            .unwrap();
        assert!(
            !social.contains("business") && !social.contains("free"),
            "{social}"
        );
    }
}
