//! Macros the service crates use to declare their models the same way: identifier
//! newtypes, and string enums that keep unknown values.

/// Declares an identifier newtype over `String`: `Display`, `as_str`, `From<&str>`,
/// `From<String>`, `AsRef<str>`, serde as a JSON string (read from a string or from an
/// integer of up to 64 bits, kept as its exact digits; a larger integer is a decode
/// error, since its digits are lost on the way in), and `segment()`, the one place an id
/// becomes part of a path: percent-encoded, and refused before anything is sent when it
/// is empty or would change the path (`.`, `..`). A newtype declared in a module of the
/// crate names that module after `in` (`pub struct OrderId in orders;`), so that the
/// examples generated for it use the path users use.
///
/// ```
/// core_http::string_id! {
///     /// The id of a post.
///     pub struct PostId;
/// }
/// let id = PostId::from("post_1");
/// assert_eq!(id.to_string(), "post_1");
/// assert_eq!(serde_json::to_string(&id).unwrap(), "\"post_1\"");
/// // An id sent as a JSON integer keeps its exact digits.
/// assert_eq!(serde_json::from_str::<PostId>("12345").unwrap(), PostId::from("12345"));
/// assert_eq!(
///     serde_json::from_str::<PostId>("18446744073709551615").unwrap(),
///     PostId::from("18446744073709551615")
/// );
/// // Beyond 64 bits the digits cannot be kept: an error, which never shows them rounded.
/// let err = serde_json::from_str::<PostId>("18446744073709551616").unwrap_err().to_string();
/// assert!(err.contains("must come as a string") && !err.contains("18446744073709552000"), "{err}");
/// assert_eq!(PostId::from("a/b").segment().unwrap(), "a%2Fb");
/// assert!(PostId::from("").segment().is_err());
/// ```
#[macro_export]
macro_rules! string_id {
    ($(#[$meta:meta])* $vis:vis struct $name:ident $(in $($module:ident)::+)?;) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis struct $name(String);

        impl $name {
            /// Wraps an id.
            pub fn new(id: impl Into<String>) -> Self {
                $name(id.into())
            }

            /// The id as a string.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as one path segment, percent-encoded; an
            /// [`InvalidRequest`](core_http::Error::InvalidRequest) error when it is empty or
            /// would change the path (`.`, `..`), so that nothing is sent.
            #[doc = concat!("\n```\nuse ", env!("CARGO_CRATE_NAME"), $($("::", stringify!($module),)+)? "::", stringify!($name), ";\nassert_eq!(", stringify!($name), "::new(\"a/b c\").segment()?, \"a%2Fb%20c\");\nassert!(", stringify!($name), "::new(\"..\").segment().is_err());\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn segment(&self) -> $crate::Result<::std::string::String> {
                $crate::__private::path_segment(concat!("a ", stringify!($name)), &self.0)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(&self.0)
            }
        }

        impl ::std::convert::AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(id: &str) -> Self {
                $name(id.to_owned())
            }
        }

        impl ::std::convert::From<String> for $name {
            fn from(id: String) -> Self {
                $name(id)
            }
        }

        impl ::std::convert::From<&String> for $name {
            fn from(id: &String) -> Self {
                $name(id.clone())
            }
        }

        impl ::std::convert::From<&$name> for $name {
            fn from(id: &$name) -> Self {
                id.clone()
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                // A JSON string, or an integer kept as its exact decimal text: the
                // documents do not fix an id's JSON type.
                $crate::de::text(d).map($name)
            }
        }
    };
}

/// Declares an enum of string values sent by a server, with an `Unknown(String)` variant
/// that keeps any value this version does not know. Matching is case-insensitive;
/// serialization writes the canonical spelling (or the unknown value as received).
///
/// ```
/// core_http::string_enum! {
///     /// Where a post goes.
///     pub enum Platform {
///         /// X.
///         X = "x" | "twitter",
///         /// LinkedIn.
///         LinkedIn = "linkedin",
///     }
/// }
/// assert_eq!(Platform::from("LinkedIn"), Platform::LinkedIn);
/// assert_eq!(Platform::from("twitter"), Platform::X);
/// assert_eq!(Platform::from("myspace"), Platform::Unknown("myspace".into()));
/// assert_eq!(serde_json::to_string(&Platform::X).unwrap(), "\"x\"");
/// let p: Platform = serde_json::from_str("\"MySpace\"").unwrap();
/// assert_eq!(p.as_str(), "MySpace");
/// ```
#[macro_export]
macro_rules! string_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident $(in $($module:ident)::+)? {
            $( $(#[$vmeta:meta])* $variant:ident = $value:literal $(| $alias:literal)* ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        $vis enum $name {
            $( $(#[$vmeta])* $variant, )+
            /// A value this version does not know, kept exactly as it was received.
            Unknown(String),
        }

        impl $name {
            /// Every known value.
            pub const KNOWN: &'static [$name] = &[$($name::$variant),+];

            /// The wire spelling.
            #[doc = concat!("\n```\nuse ", env!("CARGO_CRATE_NAME"), $($("::", stringify!($module),)+)? "::", stringify!($name), ";\nfor known in ", stringify!($name), "::KNOWN {\n    assert_eq!(", stringify!($name), "::from(known.as_str()), *known);\n}\n// A value added by the service later is kept as it was sent.\nassert_eq!(", stringify!($name), "::from(\"something_new\").as_str(), \"something_new\");\n```")]
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $value, )+
                    $name::Unknown(raw) => raw,
                }
            }

            /// Whether this is a value this version does not know.
            #[doc = concat!("\n```\nuse ", env!("CARGO_CRATE_NAME"), $($("::", stringify!($module),)+)? "::", stringify!($name), ";\nassert!(", stringify!($name), "::from(\"something_new\").is_unknown());\nassert!(!", stringify!($name), "::KNOWN[0].is_unknown());\n```")]
            pub fn is_unknown(&self) -> bool {
                matches!(self, $name::Unknown(_))
            }

            fn from_wire(raw: &str) -> Self {
                $(
                    if raw.eq_ignore_ascii_case($value) $(|| raw.eq_ignore_ascii_case($alias))* {
                        return $name::$variant;
                    }
                )+
                $name::Unknown(raw.to_owned())
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        /// `Unknown("")`: what a field the server left out reads as.
        impl ::std::default::Default for $name {
            fn default() -> Self {
                $name::Unknown(::std::string::String::new())
            }
        }

        impl ::std::convert::From<&str> for $name {
            fn from(raw: &str) -> Self {
                $name::from_wire(raw)
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = ::std::convert::Infallible;
            fn from_str(raw: &str) -> ::std::result::Result<Self, Self::Err> {
                Ok($name::from_wire(raw))
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S: $crate::__private::serde::Serializer>(&self, s: S) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D: $crate::__private::serde::Deserializer<'de>>(d: D) -> ::std::result::Result<Self, D::Error> {
                // `null` reads as an empty `Unknown`, like an absent field.
                let raw = <::std::option::Option<::std::borrow::Cow<'de, str>> as $crate::__private::serde::Deserialize>::deserialize(d)?;
                Ok(raw.map(|raw| $name::from_wire(&raw)).unwrap_or_default())
            }
        }
    };
}

/// `<PREFIX>_PLAN` in a service client's `from_env_with`: the plan's rate limit, for a
/// service with plans; for one whose documents show none (vision, worlds), a set
/// `<PREFIX>_PLAN` is a configuration error rather than a pace silently not kept.
#[doc(hidden)]
#[macro_export]
macro_rules! __plan_from_env {
    ($builder:ident, $prefix:literal, $lookup:ident, $plan:ty) => {
        if let Some(plan) = $lookup(concat!($prefix, "_PLAN")).filter(|p| !p.trim().is_empty()) {
            $builder = $builder.rate_limit(plan.parse::<$plan>()?);
        }
    };
    ($builder:ident, $prefix:literal, $lookup:ident) => {
        if $lookup(concat!($prefix, "_PLAN")).is_some_and(|p| !p.trim().is_empty()) {
            return Err($crate::Error::Config(
                concat!(
                    $prefix,
                    "_PLAN: this service documents no request-rate plans; pace the client with ",
                    "builder().rate_limit(RateLimit::per_minute(n)) instead"
                )
                .into(),
            ));
        }
    };
}

/// `<PREFIX>_RATE_BUDGET` in a service client's `from_env_with`: where its pace's
/// budget is shared (`process`, `machine`, a Redis URL), read by `core-budgets` under the
/// client crate's `shared-budget` feature; without the feature, anything but `process`
/// is a configuration error rather than a budget silently not shared.
#[doc(hidden)]
#[macro_export]
macro_rules! __budget_from_env {
    ($builder:ident, $prefix:literal, $lookup:ident) => {
        if let Some(value) = $lookup(concat!($prefix, "_RATE_BUDGET")) {
            #[cfg(feature = "shared-budget")]
            {
                $builder = $builder.shared(::core_budgets::Budget::from_setting(
                    concat!($prefix, "_RATE_BUDGET"),
                    &value,
                )?);
            }
            #[cfg(not(feature = "shared-budget"))]
            if !matches!(value.trim(), "" | "process") {
                return Err($crate::Error::Config(
                    concat!(
                        $prefix,
                        "_RATE_BUDGET: a budget shared beyond the process needs the client's ",
                        "`shared-budget` feature, which this build does not have"
                    )
                    .into(),
                ));
            }
        }
    };
}

/// Implements a service crate's `Client` (a struct holding one `http:
/// core_http::HttpClient` field, declared in the crate where readers see it): the
/// [`ServiceClient`](crate::service::ServiceClient) link to core-http, `new`, `builder`,
/// `from_env`, `from_env_with`, `with_options`, `raw` and the crate-private `http()`,
/// so that every service client is built and configured the same way. It also checks
/// that the client is `Clone + Send + Sync`.
///
/// Options, after the prefix, in this order:
/// - `plan = Type`: `from_env_with` reads `<PREFIX>_PLAN`, parsed with
///   `Type: FromStr<Err = Error>` and applied as the rate limit
///   (`Option<RateLimit>: From<Type>`);
/// - `oauth = true`: the service takes OAuth 2.0 client credentials, read from the
///   environment when no API key is set;
/// - `idempotency_keys = true`: the service de-duplicates POSTs by `Idempotency-Key`;
/// - `settings = field`: the client has one more field, of a type with `Default` and
///   `Clone`, for the service's own settings (made with its default, kept by clones);
/// - `from_env_hook = path`: `from_env_with` passes the built client and the lookup to
///   `path(client, &lookup) -> Result<Client>` to read the service's own variables.
///
/// ```
/// # use std::str::FromStr;
/// # #[derive(Clone, Copy)] pub struct Plan;
/// # impl FromStr for Plan { type Err = core_http::Error;
/// #     fn from_str(_: &str) -> core_http::Result<Plan> { Ok(Plan) } }
/// # impl From<Plan> for Option<core_http::config::RateLimit> {
/// #     fn from(_: Plan) -> Self { Some(core_http::config::RateLimit::per_minute(60)) } }
/// /// A client of the example service.
/// #[derive(Clone, Debug)]
/// pub struct Client {
///     http: core_http::HttpClient,
/// }
///
/// core_http::service_client!(Client, env_prefix = "EXAMPLE", plan = Plan);
///
/// let client = Client::new("https://api.example.com", "sk_live_...")?;
/// let _ = client.raw();
/// # Ok::<(), core_http::Error>(())
/// ```
#[macro_export]
macro_rules! service_client {
    (
        $name:ident,
        env_prefix = $prefix:literal
        $(, plan = $plan:ty)?
        $(, oauth = $oauth:literal)?
        $(, idempotency_keys = $keys:literal)?
        $(, settings = $settings:ident)?
        $(, from_env_hook = $hook:path)?
        $(,)?
    ) => {
        // Every service client is `Clone + Send + Sync`: checked where it is declared.
        const _: fn() = || {
            fn check<T: ::std::clone::Clone + ::std::marker::Send + ::std::marker::Sync>() {}
            check::<$name>();
        };

        impl $crate::service::ServiceClient for $name {
            const NAME: &'static str = env!("CARGO_PKG_NAME");
            const VERSION: &'static str = env!("CARGO_PKG_VERSION");
            const ENV_PREFIX: &'static str = $prefix;
            $( const OAUTH: bool = $oauth; )?
            $( const HONOURS_IDEMPOTENCY_KEYS: bool = $keys; )?

            fn from_http_client(http: $crate::HttpClient) -> Self {
                $name {
                    http,
                    $( $settings: ::std::default::Default::default(), )?
                }
            }
        }

        impl $name {
            /// A client for `base_url` (see the crate docs for what it includes)
            /// authenticated with `api_key` as a Bearer token, with every other setting at
            /// its default.
            #[doc = concat!("\n```\nlet key = std::env::var(\"", $prefix, "_API_KEY\").unwrap_or_else(|_| \"sk_test\".into());\nlet client = ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), "::new(\"https://api.example.com\", key)?;\n# let _ = client;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn new(
                base_url: impl Into<::std::string::String>,
                api_key: impl Into<$crate::config::Secret>,
            ) -> $crate::Result<$name> {
                $name::builder().base_url(base_url).api_key(api_key).build()
            }

            /// A builder for every setting: timeouts, retries, rate limit, headers,
            /// authentication.
            #[doc = concat!("\n```\nuse std::time::Duration;\nlet client = ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), "::builder()\n    .base_url(\"https://api.example.com\")\n    .api_key(\"sk_test\")\n    .timeout(Duration::from_secs(20))\n    .max_retries(3)\n    .build()?;\n# let _ = client;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn builder() -> $crate::ClientBuilder<$name> {
                $crate::ClientBuilder::new()
            }

            #[doc = concat!(
                "A client from the environment: `", $prefix, "_BASE_URL` and `",
                $prefix, "_API_KEY`, and optionally `", $prefix, "_MAX_RETRIES` and `",
                $prefix, "_TIMEOUT_SECS`; [`", stringify!($name),
                "::from_env_with`] lists the rest."
            )]
            #[doc = concat!("\n```no_run\n// ", $prefix, "_BASE_URL=https://api.example.com ", $prefix, "_API_KEY=sk_... cargo run\nlet client = ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), "::from_env()?;\n# let _ = client;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn from_env() -> $crate::Result<$name> {
                $name::from_env_with(|name| ::std::env::var(name).ok())
            }

            #[doc = concat!(
                "As [`", stringify!($name), "::from_env`], reading variables through ",
                "`lookup` (for tests and configuration files): see ",
                "[`ClientBuilder::from_env`](", "crate::ClientBuilder::from_env)",
                $( " and `", $prefix, "_PLAN`, the plan (`", stringify!($plan),
                "`) whose rate limit the client paces itself under", )?
                "."
            )]
            #[doc = concat!("\n```\nlet client = ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), "::from_env_with(|name| match name {\n    \"", $prefix, "_BASE_URL\" => Some(\"https://api.example.com\".to_owned()),\n    \"", $prefix, "_API_KEY\" => Some(\"sk_test\".to_owned()),\n    \"", $prefix, "_TIMEOUT_SECS\" => Some(\"20\".to_owned()),\n    _ => None,\n})?;\n# let _ = client;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn from_env_with(
                lookup: impl Fn(&str) -> ::std::option::Option<::std::string::String>,
            ) -> $crate::Result<$name> {
                #[allow(unused_mut)]
                let mut builder = $crate::ClientBuilder::<$name>::from_env_with($prefix, &lookup)?;
                $crate::__plan_from_env!(builder, $prefix, lookup $(, $plan)?);
                $crate::__budget_from_env!(builder, $prefix, lookup);
                let client = builder.build()?;
                $( let client = $hook(client, &lookup)?; )?
                Ok(client)
            }

            /// A copy of this client whose calls use these options (timeout, retries,
            /// extra headers); the connection pool and the rate limiter stay shared.
            #[doc = concat!("\n```\nuse std::time::Duration;\nuse ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), ";\nuse ", env!("CARGO_CRATE_NAME"), "::config::RequestOptions;\nlet client = ", stringify!($name), "::new(\"https://api.example.com\", \"sk_test\")?;\n// One slow job: a longer timeout and no retries, for this copy only.\nlet patient = client.with_options(&RequestOptions::new().timeout(Duration::from_secs(300)).max_retries(0));\n# let _ = patient;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn with_options(&self, options: &$crate::config::RequestOptions) -> $name {
                $name {
                    http: self.http.with_options(options),
                    $( $settings: self.$settings.clone(), )?
                }
            }

            /// Runs `call` with this client and returns its value together with the
            /// metadata of the last answer it got (status, headers, request id,
            /// rate-limit figures), as Stainless SDKs' `with_raw_response` does:
            /// `client.with_response(|c| c.<resource>().<method>(..))`.
            #[doc = concat!("\n```no_run\nuse ", env!("CARGO_CRATE_NAME"), "::serde_json::Value;\n# let client = ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), "::new(\"https://api.example.com\", \"sk_test\")?;\nlet answer = client.with_response(|c| c.raw().get::<Value>(\"/v1/anything\", &[]))?;\nprintln!(\"{} request {:?}, limit {:?}\", answer.status, answer.request_id(), answer.rate_limit());\nlet value = answer.into_value();\n# let _ = value;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn with_response<T>(
                &self,
                call: impl FnOnce(&$name) -> $crate::Result<T>,
            ) -> $crate::Result<$crate::transport::WithResponse<T>> {
                self.http.with_response(|http| {
                    let observed = $name {
                        http: http.clone(),
                        $( $settings: self.$settings.clone(), )?
                    };
                    call(&observed)
                })
            }

            /// Requests to paths this crate does not model, with the same
            /// authentication, retries and errors:
            /// `client.raw().get::<serde_json::Value>("/v1/...", &[])`.
            #[doc = concat!("\n```no_run\nuse ", env!("CARGO_CRATE_NAME"), "::serde_json::Value;\n# let client = ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), "::new(\"https://api.example.com\", \"sk_test\")?;\nlet beta: Value = client.raw().get(\"/v1/beta/feature\", &[(\"limit\", \"10\")])?;\nprintln!(\"{beta}\");\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn raw(&self) -> $crate::transport::Raw<'_> {
                self.http.raw()
            }

            #[allow(dead_code)]
            pub(crate) fn http(&self) -> &$crate::HttpClient {
                &self.http
            }
        }
    };
}

/// Re-exports what a user of a service crate meets that core-http defines: at the root,
/// the error types (`Error`, `Result`, `ApiError`, `ErrorKind`, `Delivery`) beside the
/// crate's client and models; the rest under three namespaces: `config` (building and
/// tuning a client), `pagination` (pages and their iterators) and `transport` (the
/// answer's metadata and calls the crate does not model); and the `serde_json` and `time`
/// crates its models use. A user who adds only the service crate needs nothing else. One
/// list, shared by every service crate.
#[macro_export]
macro_rules! reexports {
    () => {
        /// The JSON crate behind `extra` fields and raw calls
        /// (`serde_json::Value`, `serde_json::Map`).
        pub use $crate::__private::serde_json;
        /// The date-time crate behind every timestamp (`time::OffsetDateTime`).
        pub use $crate::__private::time;
        /// RFC 3339 as the service reads and writes it (`timestamp::parse`,
        /// `timestamp::format`), for times in raw calls and logs.
        pub use $crate::timestamp;
        pub use $crate::{
            ApiError, BulkOutcome, CutShort, Delivery, Error, ErrorKind, ItemFailure, Result,
        };

        /// Building and tuning a client: its builder, credentials, retries, rate limit
        /// and where its budget is shared (`Budget`, feature `shared-budget`), per-call
        /// options, the observer, and the clock and sleeper tests may replace.
        pub mod config {
            #[cfg(feature = "shared-budget")]
            #[doc(inline)]
            pub use ::core_budgets::{Budget, RedisUrl};
            #[doc(inline)]
            pub use $crate::config::*;
        }
        /// Paged lists: a page as the service answers it, and the iterators over items
        /// and pages that the list methods return.
        pub use $crate::pagination;
        /// What a call answered besides its model (status, headers, request id, rate
        /// limit: `with_response`), and calls the crate does not model (`raw()`).
        pub use $crate::transport;
        /// Waiting until something reaches a state (a document signed, an order filled):
        /// how long and how often (`Wait`), and why a wait ended otherwise (`WaitError`).
        pub use $crate::wait;
    };
}

/// Declares a service's plans and their documented rate limits: the enum, `rate_limit()`
/// (`None` for an unlimited plan), `From<Plan> for Option<RateLimit>` (so a plan can be
/// given to [`ClientBuilder::rate_limit`](crate::ClientBuilder::rate_limit)) and
/// `FromStr` for the `<PREFIX>_PLAN` variable (case-insensitive; an unknown name is an
/// [`Error::Config`](crate::Error::Config) listing the known ones).
///
/// ```
/// use core_http::config::RateLimit;
///
/// core_http::service_plans! {
///     /// The example service's plans.
///     pub enum Plan for "example" {
///         /// 100 requests per minute, bursts of 150.
///         Free = "free" => Some(RateLimit::per_minute(100).with_burst(150)),
///         /// Unlimited.
///         Enterprise = "enterprise" => None,
///     }
/// }
/// assert_eq!(Plan::Enterprise.rate_limit(), None);
/// assert_eq!("FREE".parse::<Plan>()?, Plan::Free);
/// assert!("gold".parse::<Plan>().unwrap_err().to_string().contains("free or enterprise"));
/// # Ok::<(), core_http::Error>(())
/// ```
#[macro_export]
macro_rules! service_plans {
    (
        $(#[$meta:meta])*
        pub enum $name:ident for $service:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $wire:literal => $limit:expr ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every plan, in the order the service lists them.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The plan's name as `<PREFIX>_PLAN` takes it.
            #[doc = concat!("\n```\nuse ", env!("CARGO_CRATE_NAME"), "::", stringify!($name), ";\nfor plan in ", stringify!($name), "::ALL {\n    assert_eq!(plan.as_str().parse::<", stringify!($name), ">()?, *plan);\n}\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn as_str(self) -> &'static str {
                match self {
                    $( $name::$variant => $wire, )+
                }
            }

            /// The plan's documented limit as a core-http token bucket; `None` when the
            /// plan is unlimited.
            #[doc = concat!("\n```\nuse ", env!("CARGO_CRATE_NAME"), "::{Client, ", stringify!($name), "};\nfor plan in ", stringify!($name), "::ALL {\n    println!(\"{plan}: {:?}\", plan.rate_limit());\n}\n// The client paces itself under the plan's limit.\nlet client = Client::builder()\n    .base_url(\"https://api.example.com\")\n    .api_key(\"sk\")\n    .rate_limit(", stringify!($name), "::ALL[0])\n    .build()?;\n# let _ = client;\n# Ok::<(), ", env!("CARGO_CRATE_NAME"), "::Error>(())\n```")]
            pub fn rate_limit(self) -> ::std::option::Option<$crate::config::RateLimit> {
                match self {
                    $( $name::$variant => $limit, )+
                }
            }
        }

        impl ::std::convert::From<$name> for ::std::option::Option<$crate::config::RateLimit> {
            fn from(plan: $name) -> Self {
                plan.rate_limit()
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::Error;

            fn from_str(s: &str) -> $crate::Result<$name> {
                let wanted = s.trim();
                $name::ALL
                    .iter()
                    .copied()
                    .find(|plan| plan.as_str().eq_ignore_ascii_case(wanted))
                    .ok_or_else(|| {
                        let names: ::std::vec::Vec<&str> =
                            $name::ALL.iter().map(|plan| plan.as_str()).collect();
                        $crate::__private::unknown_plan($service, wanted, &names)
                    })
            }
        }
    };
}

/// Declares a list's parameters as a page-token list's
/// ([`TokenParams`](crate::pagination::TokenParams)): the struct's
/// `page_token: Option<String>` field is the page to start from, so
/// [`TokenPaginator::over`](crate::pagination::TokenPaginator::over) and
/// [`TokenPages::over`](crate::pagination::TokenPages::over) can move it from page to page.
///
/// ```
/// #[derive(Clone, Default)]
/// struct ListThings {
///     kind: Option<String>,
///     page_token: Option<String>,
/// }
/// core_http::token_params!(ListThings);
///
/// use core_http::pagination::{TokenPage, TokenPaginator};
/// let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
/// let seen = asked.clone();
/// let start = ListThings { kind: Some("red".into()), page_token: Some("b".into()) };
/// let client = core_http::HttpClient::builder().base_url("https://api.example.com").build()?;
/// let things: Vec<u32> = TokenPaginator::over(&client, &start, move |p: &ListThings| {
///     seen.lock().unwrap().push((p.kind.clone(), p.page_token.clone()));
///     Ok(match p.page_token.as_deref() {
///         Some("b") => TokenPage::new(vec![2, 3], Some("c".into())),
///         _ => TokenPage::new(vec![4], None),
///     })
/// })
/// .collect::<Result<_, _>>()?;
/// assert_eq!(things, [2, 3, 4]);
/// // Every page asked with the same filter, and the token the page before gave.
/// let red = Some("red".to_owned());
/// assert_eq!(*asked.lock().unwrap(), [(red.clone(), Some("b".into())), (red, Some("c".into()))]);
/// # Ok::<(), core_http::Error>(())
/// ```
#[macro_export]
macro_rules! token_params {
    ($name:ty) => {
        impl $crate::pagination::TokenParams for $name {
            fn token(&self) -> ::std::option::Option<&str> {
                self.page_token.as_deref()
            }

            fn set_token(&mut self, token: ::std::option::Option<&str>) {
                self.page_token = token.map(::std::borrow::ToOwned::to_owned);
            }
        }
    };
}
