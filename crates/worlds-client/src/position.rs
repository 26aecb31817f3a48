//! A world object's position read leniently: three finite numbers (or numeric strings),
//! each coordinate read on its own, anything else `None`, so an odd position never
//! fails the world it is in.

use std::marker::PhantomData;

use serde::{Deserialize, Deserializer};

/// Three finite numbers (or numeric strings); anything else reads as `None`: a number
/// out of range (`1e999`), a text, a list of another length, an object. Each coordinate
/// is read on its own, so an odd one never fails the world it is in.
pub(crate) fn read<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<[f64; 3]>, D::Error> {
    Ok(d.deserialize_any(Lenient(PhantomData::<Position>))?
        .map(|p| p.0))
}

/// What a lenient read is for: a whole position, or one coordinate of it.
trait Shape: Sized {
    /// `None` for anything that is not this shape.
    fn from_number(n: f64) -> Option<Self>;
    /// A list: a position reads its coordinates; a coordinate is not one.
    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(
        seq: A,
    ) -> std::result::Result<Option<Self>, A::Error>;
}

struct Position([f64; 3]);
struct Coordinate(f64);

impl Shape for Coordinate {
    fn from_number(n: f64) -> Option<Self> {
        n.is_finite().then_some(Coordinate(n))
    }

    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(
        mut seq: A,
    ) -> std::result::Result<Option<Self>, A::Error> {
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

impl Shape for Position {
    fn from_number(_: f64) -> Option<Self> {
        None
    }

    fn from_seq<'de, A: serde::de::SeqAccess<'de>>(
        mut seq: A,
    ) -> std::result::Result<Option<Self>, A::Error> {
        let mut numbers = Vec::with_capacity(3);
        let mut readable = true;
        let mut errors = 0;
        loop {
            match seq.next_element::<Maybe<Coordinate>>() {
                Ok(Some(Maybe(Some(Coordinate(n))))) => numbers.push(n),
                Ok(Some(Maybe(None))) => readable = false,
                Ok(None) => break,
                // A number past f64 (`1e999`): the reader has passed it; go on.
                Err(_) if errors < 3 => {
                    errors += 1;
                    readable = false;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(match (readable, numbers.as_slice()) {
            (true, [x, y, z]) => Some(Position([*x, *y, *z])),
            _ => None,
        })
    }
}

/// A value read as `S` when it is one, `None` otherwise, whatever it is.
struct Maybe<S>(Option<S>);

impl<'de, S: Shape> Deserialize<'de> for Maybe<S> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(Lenient(PhantomData::<S>)).map(Maybe)
    }
}

struct Lenient<S>(PhantomData<S>);

impl<'de, S: Shape> serde::de::Visitor<'de> for Lenient<S> {
    type Value = Option<S>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        seq: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        S::from_seq(seq)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<Self::Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(None)
    }

    fn visit_unit<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_none<E>(self) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_bool<E>(self, _: bool) -> std::result::Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Self::Value, E> {
        #[allow(clippy::cast_precision_loss)]
        Ok(S::from_number(v as f64))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Self::Value, E> {
        #[allow(clippy::cast_precision_loss)]
        Ok(S::from_number(v as f64))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Self::Value, E> {
        Ok(S::from_number(v))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Self::Value, E> {
        Ok(v.trim().parse::<f64>().ok().and_then(S::from_number))
    }
}
