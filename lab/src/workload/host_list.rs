//! A class's `senders` and `receivers`: host names, where `h1..h4` stands for h1, h2, h3, h4
//! (the same prefix, numbers ascending), given as a list or as one string (`"h1..h16"`,
//! which `--set class.NAME.senders=h1..h16` writes and a sweep's axis can show).

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use std::fmt;

/// Expands `h1..h4` to the hosts it names; any other name is itself.
pub fn expand(entry: &str) -> Result<Vec<String>, String> {
    let Some((first, last)) = entry.split_once("..") else { return Ok(vec![entry.to_string()]) };
    let split = |name: &str| {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, number) = name.split_at(name.len() - digits);
        number.parse::<u32>().ok().map(|n| (prefix.to_string(), n))
    };
    match (split(first), split(last)) {
        (Some((prefix, from)), Some((other, to))) if prefix == other && from <= to => {
            Ok((from..=to).map(|n| format!("{prefix}{n}")).collect())
        }
        _ => Err(format!(
            "`{entry}` is not a host range: FIRST..LAST with one prefix and ascending numbers, such as h1..h4"
        )),
    }
}

/// Deserializes a list of names or ranges, or one string, expanded.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    struct Hosts;
    impl<'de> Visitor<'de> for Hosts {
        type Value = Vec<String>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("host names, such as [\"h1\", \"h3\"], \"h1..h4\" or [\"h1..h4\", \"h9\"]")
        }

        fn visit_str<E: de::Error>(self, entry: &str) -> Result<Vec<String>, E> {
            expand(entry).map_err(E::custom)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut hosts = Vec::new();
            while let Some(entry) = seq.next_element::<String>()? {
                hosts.extend(expand(&entry).map_err(de::Error::custom)?);
            }
            Ok(hosts)
        }
    }
    deserializer.deserialize_any(Hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_expand_and_other_names_stay() {
        assert_eq!(expand("h1..h4").unwrap(), ["h1", "h2", "h3", "h4"]);
        assert_eq!(expand("h9..h11").unwrap(), ["h9", "h10", "h11"]);
        assert_eq!(expand("srv3").unwrap(), ["srv3"]);
        for bad in ["h4..h1", "h1..s4", "h..h3", "h1.."] {
            assert!(expand(bad).unwrap_err().contains("not a host range"), "{bad}");
        }
        #[derive(serde::Deserialize)]
        struct Class {
            #[serde(deserialize_with = "deserialize")]
            senders: Vec<String>,
        }
        let parse = |text: &str| toml::from_str::<Class>(text).map(|c| c.senders);
        assert_eq!(parse("senders = \"h1..h3\"").unwrap(), ["h1", "h2", "h3"]);
        assert_eq!(parse("senders = [\"h1..h2\", \"h7\"]").unwrap(), ["h1", "h2", "h7"]);
        assert!(parse("senders = \"h3..h1\"").unwrap_err().to_string().contains("not a host range"));
    }
}
