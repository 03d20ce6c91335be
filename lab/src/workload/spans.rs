//! Serde for spans in scenario files ("100ms"): lists and optional ones.

/// A list of spans.
pub mod durations {
    use pfcswitch_link::units::parse_duration;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(spans: &[Duration], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(spans.iter().map(|d| pfcswitch_link::units::format_duration(*d)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Duration>, D::Error> {
        Vec::<String>::deserialize(deserializer)?.iter().map(|t| parse_duration(t).map_err(D::Error::custom)).collect()
    }
}

/// A span that may be absent.
pub mod optional_duration {
    use pfcswitch_link::units::parse_duration;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(span: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match span {
            Some(d) => serializer.serialize_str(&pfcswitch_link::units::format_duration(*d)),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(deserializer)?.map(|t| parse_duration(&t).map_err(D::Error::custom)).transpose()
    }
}
