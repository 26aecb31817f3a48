//! Bounding boxes: four pixel numbers, read as `[x, y, width, height]`.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

/// A bounding box as the service sends it: four numbers in pixels. The document does
/// not give their order; this crate reads them as `[x, y, width, height]` (x and y of
/// the top-left corner), the convention the sandbox serves.
///
/// The four numbers are kept as read: [`BBox::raw`] gives them back. The document says
/// integers; a number sent as a float (`12.0`, `12.6`) is rounded to the nearest pixel,
/// and one beyond the range of `i64` saturates at its bound.
///
/// ```
/// let bbox: vision_client::analyses::BBox = vision_client::serde_json::from_str("[10, 20, 30, 40]").unwrap();
/// assert_eq!(bbox.xywh(), [10, 20, 30, 40]);
/// assert_eq!(bbox.xyxy(), [10, 20, 40, 60]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BBox([i64; 4]);

impl BBox {
    /// A box from `[x, y, width, height]`.
    ///
    /// ```
    /// let bbox = vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]);
    /// assert_eq!(bbox.xyxy(), [10, 20, 40, 60]);
    /// ```
    pub fn from_xywh(xywh: [i64; 4]) -> BBox {
        BBox(xywh)
    }

    /// The four numbers as read: integers as received, floats rounded.
    ///
    /// ```
    /// let bbox: vision_client::analyses::BBox = vision_client::serde_json::from_str("[10.4, 20.6, 30, 40]")?;
    /// assert_eq!(bbox.raw(), [10, 21, 30, 40]);
    /// # Ok::<(), vision_client::serde_json::Error>(())
    /// ```
    pub fn raw(&self) -> [i64; 4] {
        self.0
    }

    /// `[x, y, width, height]`.
    ///
    /// ```
    /// let bbox = vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]);
    /// assert_eq!(bbox.xywh(), [10, 20, 30, 40]);
    /// ```
    pub fn xywh(&self) -> [i64; 4] {
        self.0
    }

    /// `[x1, y1, x2, y2]`: the top-left and bottom-right corners.
    ///
    /// ```
    /// let bbox = vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]);
    /// let [left, top, right, bottom] = bbox.xyxy();
    /// assert_eq!((left, top, right, bottom), (10, 20, 40, 60));
    /// ```
    pub fn xyxy(&self) -> [i64; 4] {
        let [x, y, w, h] = self.0;
        [x, y, x.saturating_add(w), y.saturating_add(h)]
    }

    /// The left edge.
    ///
    /// ```
    /// assert_eq!(vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]).x(), 10);
    /// ```
    pub fn x(&self) -> i64 {
        self.0[0]
    }

    /// The top edge.
    ///
    /// ```
    /// assert_eq!(vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]).y(), 20);
    /// ```
    pub fn y(&self) -> i64 {
        self.0[1]
    }

    /// The width.
    ///
    /// ```
    /// assert_eq!(vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]).width(), 30);
    /// ```
    pub fn width(&self) -> i64 {
        self.0[2]
    }

    /// The height.
    ///
    /// ```
    /// assert_eq!(vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]).height(), 40);
    /// ```
    pub fn height(&self) -> i64 {
        self.0[3]
    }

    /// Width times height (0 for a degenerate box).
    ///
    /// ```
    /// assert_eq!(vision_client::analyses::BBox::from_xywh([10, 20, 30, 40]).area(), 1200);
    /// ```
    pub fn area(&self) -> i64 {
        self.width().max(0).saturating_mul(self.height().max(0))
    }
}

impl Serialize for BBox {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for BBox {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<BBox, D::Error> {
        struct Four;

        impl<'de> Visitor<'de> for Four {
            type Value = BBox;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a bounding box: an array of four numbers")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BBox, A::Error> {
                let mut out = [0i64; 4];
                for (i, slot) in out.iter_mut().enumerate() {
                    let n: serde_json::Number = seq.next_element()?.ok_or_else(|| {
                        de::Error::custom(format!("a bounding box has 4 numbers, got {i}"))
                    })?;
                    // Integers exactly, floats rounded; beyond i64 saturates.
                    *slot = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                        (Some(v), _, _) => v,
                        (None, Some(_), _) => i64::MAX,
                        (None, None, Some(f)) if f.is_finite() => f.round() as i64,
                        _ => {
                            return Err(de::Error::custom(format!(
                                "bounding box number {n} is not a finite number"
                            )));
                        }
                    };
                }
                if seq.next_element::<de::IgnoredAny>()?.is_some() {
                    return Err(de::Error::custom("a bounding box has 4 numbers, got more"));
                }
                Ok(BBox(out))
            }
        }

        deserializer.deserialize_seq(Four)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reads_integers_and_floats_and_refuses_other_shapes() {
        let b: BBox = serde_json::from_str("[1.0, 2.4, 3.6, 4]").unwrap();
        assert_eq!(b.raw(), [1, 2, 4, 4]);
        assert_eq!(serde_json::to_string(&b).unwrap(), "[1,2,4,4]");
        for bad in ["[1,2,3]", "[1,2,3,4,5]", "\"1,2,3,4\"", "[1,2,3,\"4\"]"] {
            let err = serde_json::from_str::<BBox>(bad).unwrap_err().to_string();
            assert!(
                err.contains("box") || err.contains("number") || err.contains("f64"),
                "{bad}: {err}"
            );
        }
        // Any JSON number reads: integers exactly, the out-of-range saturated.
        let b: BBox =
            serde_json::from_str("[1e300,-9223372036854775808,18446744073709551615,-3]").unwrap();
        assert_eq!(b.raw(), [i64::MAX, i64::MIN, i64::MAX, -3]);
        let b = BBox::from_xywh([10, 10, -5, 20]);
        assert_eq!(b.area(), 0);
        assert_eq!(b.xyxy(), [10, 10, 5, 30]);
    }
}
