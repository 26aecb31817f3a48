//! Reading the configuration from the environment, and the checks every build makes.

use std::time::Duration;

use crate::auth::{Auth, OAuth2Config};
use crate::error::{Error, Result};
use crate::redact::{Redactor, is_sensitive_header};
use crate::url::Origin;

use super::Config;

// The bodies of the builder's larger methods, kept out of the generic impl so that they
// are compiled once in core-http rather than again in every client crate.

/// The configuration read from the environment: [`ClientBuilder::from_env_with`].
pub(super) fn env_config(
    mut config: Config,
    prefix: &str,
    oauth: bool,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Config> {
    let var = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
    let key_var = format!("{prefix}_API_KEY");
    let key = var(&key_var);
    // Every variable that is missing, at once, in one order for every client: the base
    // URL, then the key.
    let url_var = format!("{prefix}_BASE_URL");
    let mut missing = Vec::new();
    if var(&url_var).is_none() {
        missing.push(url_var);
    }
    if key.is_none() && !oauth {
        missing.push(key_var.clone());
    }
    if !missing.is_empty() {
        let verb = if missing.len() == 1 { "is" } else { "are" };
        return Err(Error::config(format!(
            "{} {verb} not set",
            missing.join(" and ")
        )));
    }
    apply_env_settings(&mut config, prefix, lookup)?;
    // Values read from the environment lose the whitespace around them (a key read
    // from a file keeps its newline); one with a control character inside is refused.
    if let Some(key) = key {
        crate::auth::check_credential(&key_var, key.trim())?;
        config.auth = Auth::bearer(key.trim());
        return Ok(config);
    }
    let names = ["CLIENT_ID", "CLIENT_SECRET", "TOKEN_URL"].map(|n| format!("{prefix}_{n}"));
    let values = names.clone().map(|n| var(&n));
    match values {
        [Some(id), Some(secret), Some(url)] => {
            let mut oauth = OAuth2Config::new(url.trim(), id.trim(), secret.trim());
            if let Some(scope) = var(&format!("{prefix}_SCOPE")) {
                oauth = oauth.with_scope(scope.trim());
            }
            Ok(Config {
                auth: Auth::oauth2(oauth),
                ..config
            })
        }
        _ => {
            let missing: Vec<&str> = names
                .iter()
                .zip(&values)
                .filter(|(_, v)| v.is_none())
                .map(|(n, _)| n.as_str())
                .collect();
            Err(Error::config(format!(
                "set {key_var}, or {}, {} and {} for OAuth (missing: {})",
                names[0],
                names[1],
                names[2],
                missing.join(", ")
            )))
        }
    }
}

/// What a configuration error says, without its own "configuration error:" prefix, for
/// a message that wraps it in another.
fn without_prefix(e: &Error) -> String {
    match e {
        Error::Config(message) => message.clone(),
        other => other.to_string(),
    }
}

/// Applies `<PREFIX>_BASE_URL`, `<PREFIX>_MAX_RETRIES` and `<PREFIX>_TIMEOUT_SECS`:
/// [`ClientBuilder::env_settings_with`].
pub(super) fn apply_env_settings(
    config: &mut Config,
    prefix: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<()> {
    let url_var = format!("{prefix}_BASE_URL");
    let url = lookup(&url_var)
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| Error::config(format!("{url_var} is not set")))?;
    Origin::parse(url.trim()).map_err(|e| {
        Error::config(format!(
            "{url_var} is not a valid URL: {}",
            without_prefix(&e)
        ))
    })?;
    config.base_url = Some(url.trim().trim_end_matches('/').to_owned());
    let retries_var = format!("{prefix}_MAX_RETRIES");
    if let Some(v) = lookup(&retries_var) {
        let n: u32 = v.trim().parse().map_err(|_| {
            Error::config(format!(
                "{retries_var} must be a whole number of retries, got {v:?}"
            ))
        })?;
        config.retry.max_retries = n;
    }
    let timeout_var = format!("{prefix}_TIMEOUT_SECS");
    if let Some(v) = lookup(&timeout_var) {
        let secs: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s < 1e9)
            .ok_or_else(|| {
                Error::config(format!(
                    "{timeout_var} must be a positive number of seconds, got {v:?}"
                ))
            })?;
        config.timeout = Duration::from_secs_f64(secs);
    }
    Ok(())
}

/// The settings checked, the redactor made: [`ClientBuilder::build`].
pub(super) fn checked(mut config: Config, prefix: &str) -> Result<Config> {
    let base = config.base_url.clone().ok_or_else(|| {
        Error::config(format!(
            "no base URL: set one with .base_url(..) or {prefix}_BASE_URL; the service has no default"
        ))
    })?;
    let origin = Origin::parse(&base)?;
    origin.check_secure(&base, config.allow_insecure_http)?;
    if let Auth::OAuth2ClientCredentials(oauth) = &config.auth {
        let token_origin = Origin::parse(&oauth.token_url).map_err(|e| {
            Error::config(format!(
                "the OAuth token URL is invalid: {}",
                without_prefix(&e)
            ))
        })?;
        token_origin.check_secure(&oauth.token_url, config.allow_insecure_http)?;
    }
    match &config.auth {
        Auth::Bearer(key) => crate::auth::check_credential(
            "the API key (given to Client::new or the builder's api_key(..))",
            key.expose(),
        )?,
        Auth::Header { name, value } => {
            crate::wire::check_header(name, "")?;
            crate::auth::check_credential(
                &format!("the API key (given for the {name} header)"),
                value.expose(),
            )?;
        }
        _ => {}
    }
    for (name, value) in &config.headers {
        crate::wire::check_header(name, value)?;
    }
    config.proxies = config
        .proxy_choice
        .resolve(|name| std::env::var(name).ok())?;
    config.redactor = Redactor::new(credentials(&config));
    Ok(config)
}

/// The credentials a client holds, to keep out of texts.
pub(super) fn credentials(config: &Config) -> Vec<String> {
    let mut out = Vec::new();
    match &config.auth {
        Auth::Bearer(key) => out.push(key.expose().to_owned()),
        Auth::Header { value, .. } => out.push(value.expose().to_owned()),
        Auth::OAuth2ClientCredentials(oauth) => {
            out.push(oauth.client_secret.expose().to_owned());
        }
        // Read per call: each call keeps the key as it is then out of its texts.
        Auth::BearerFrom(_) | Auth::None => {}
    }
    out.extend(config.proxies.secrets());
    for (name, value) in &config.headers {
        if is_sensitive_header(name) {
            out.push(value.clone());
            if let Some((_, token)) = value.split_once(' ') {
                out.push(token.to_owned());
            }
        }
    }
    out
}
