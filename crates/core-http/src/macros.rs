//! Macros the service crates use to declare their models the same way: identifier
//! newtypes, and string enums that keep unknown values.

/// Declares an identifier newtype over `String`: `Display`, `as_str`, `From<&str>`,
/// `From<String>`, `AsRef<str>` and transparent serde.
///
/// ```
/// core_http::string_id! {
///     /// The id of a post.
///     pub struct PostId;
/// }
/// let id = PostId::from("post_1");
/// assert_eq!(id.to_string(), "post_1");
/// assert_eq!(serde_json::to_string(&id).unwrap(), "\"post_1\"");
/// ```
#[macro_export]
macro_rules! string_id {
    ($(#[$meta:meta])* $vis:vis struct $name:ident;) => {
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
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&self.0)
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
                <String as $crate::__private::serde::Deserialize>::deserialize(d).map($name)
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
        $vis:vis enum $name:ident {
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
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $value, )+
                    $name::Unknown(raw) => raw,
                }
            }

            /// Whether this is a value this version does not know.
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
                f.write_str(self.as_str())
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
                let raw = <::std::borrow::Cow<'de, str> as $crate::__private::serde::Deserialize>::deserialize(d)?;
                Ok($name::from_wire(&raw))
            }
        }
    };
}
