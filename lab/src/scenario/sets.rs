//! `--set KEY=VALUE`: a scenario file's TOML table edited before it is deserialized, so that
//! a run (or a sweep's point) changes one setting without a copy of the file, and relative
//! paths in it keep resolving against the file.
//!
//! What KEY may be, in the order it is tried:
//! - `class.NAME.KEY[.…]`: that key of the `[[class]]` named NAME;
//! - a top-level scenario key (`duration`, `speed`, `mtu`, …) or a dotted key into one of its
//!   tables (`transport.window`, `fabric.k`, `qcn.reaction.min_rate`, `overrides.qcn.…`);
//!   tables missing on the way are created;
//! - the shorthands `load` and `sizes`: that key of every class that has it;
//! - a key whose first segment is a section of the switch config that is not a scenario key
//!   (`pfc.xoff`, `buffer.…`, `ecn.…`): written into `overrides`, merged into every switch's
//!   config.
//!
//! VALUE is a TOML value if it parses as one (`0.5`, `32`, `true`, `"x"`, `[1, 2]`), else a
//! string (`100KB`, `50ms`, `websearch`). Unknown keys are refused here, naming the valid
//! ones; unknown keys further down are refused by the scenario's `deny_unknown_fields` when
//! it loads, and [`blame`] names the `--set` behind such an error.

use anyhow::{Context, Result, bail};
use pfcswitch_switch::config::SwitchConfig;
use serde::de::{self, DeserializeOwned, Deserializer, Visitor};

/// The shorthands that set a key on every class that has it.
const SHORTHANDS: [&str; 2] = ["load", "sizes"];

/// Switch-config sections `--set` must not write into `overrides`: the switch's identity and
/// its ports, which a run sets itself.
const SWITCH_OWN: [&str; 2] = ["switch", "port"];

/// One `--set` applied: its text and the table paths it wrote (`transport.window`,
/// `class[1].load`), in the notation of the scenario's deserialization errors.
#[derive(Debug)]
pub(super) struct Applied {
    pub set: String,
    pub paths: Vec<String>,
}

/// Applies `set` (`KEY=VALUE`) to `table`, a scenario file whose top-level keys are
/// `scenario_keys`.
pub(super) fn apply(table: &mut toml::Table, set: &str, scenario_keys: &[&str]) -> Result<Applied> {
    let (key, text) = set.split_once('=').with_context(|| format!("`--set {set}`: expected KEY=VALUE"))?;
    let path: Vec<&str> = key.trim().split('.').map(str::trim).collect();
    if path.iter().any(|segment| segment.is_empty()) {
        bail!("`--set {set}`: `{key}` has an empty segment");
    }
    let value = parse_value(text.trim());
    let context = || format!("`--set {set}`");
    let paths = match path.as_slice() {
        ["class", name, rest @ ..] if !rest.is_empty() => {
            let classes = classes(table).with_context(context)?;
            let Some(index) = classes.iter().position(|c| c.get("name").and_then(toml::Value::as_str) == Some(name))
            else {
                bail!("`--set {set}`: no [[class]] is named `{name}` (classes: {})", class_names(table).join(", "));
            };
            put(classes[index].as_table_mut().expect("checked by classes()"), rest, value).with_context(context)?;
            vec![format!("class[{index}].{}", rest.join("."))]
        }
        ["class", ..] => bail!("`--set {set}`: a class's key is `class.NAME.KEY`"),
        [first, ..] if scenario_keys.contains(first) => {
            put(table, &path, value).with_context(context)?;
            vec![path.join(".")]
        }
        [shorthand] if SHORTHANDS.contains(shorthand) => {
            let mut paths = Vec::new();
            for (index, class) in classes(table).with_context(context)?.iter_mut().enumerate() {
                let class = class.as_table_mut().expect("checked by classes()");
                if class.contains_key(*shorthand) {
                    class.insert(shorthand.to_string(), value.clone());
                    paths.push(format!("class[{index}].{shorthand}"));
                }
            }
            if paths.is_empty() {
                bail!(
                    "`--set {set}`: no [[class]] has `{shorthand}` (the shorthand sets it on every class that has \
                     it; `class.NAME.{shorthand}` sets one)"
                );
            }
            paths
        }
        [first, ..] if switch_sections(scenario_keys).contains(first) => {
            let mut inner = vec!["overrides"];
            inner.extend(&path);
            put(table, &inner, value).with_context(context)?;
            vec![inner.join(".")]
        }
        _ => bail!("`--set {set}`: unknown key `{key}`; {}", valid_keys(table, scenario_keys)),
    };
    Ok(Applied { set: set.to_string(), paths })
}

/// The `--set`s of `applied` that an error at `path` (`transport.windw`, `class[1].z`) is
/// about: those that wrote at, above or below it; all of them if none did.
pub(super) fn blame<'a>(applied: &'a [Applied], path: &str) -> Vec<&'a str> {
    let within = |outer: &str, inner: &str| {
        inner == outer || inner.strip_prefix(outer).is_some_and(|rest| rest.starts_with(['.', '[']))
    };
    let related: Vec<&str> = (applied.iter())
        .filter(|a| a.paths.iter().any(|p| within(p, path) || within(path, p)))
        .map(|a| a.set.as_str())
        .collect();
    if related.is_empty() { applied.iter().map(|a| a.set.as_str()).collect() } else { related }
}

/// `text` as a TOML value if it is one, else as a string.
fn parse_value(text: &str) -> toml::Value {
    let parsed = format!("value = {text}").parse::<toml::Table>().ok().filter(|t| t.len() == 1);
    parsed.and_then(|mut t| t.remove("value")).unwrap_or_else(|| toml::Value::String(text.to_string()))
}

/// Sets `path` in `table` to `value`, creating the tables on the way.
fn put(table: &mut toml::Table, path: &[&str], value: toml::Value) -> Result<()> {
    let (last, parents) = path.split_last().expect("a key has a segment");
    let mut at = table;
    for (depth, segment) in parents.iter().enumerate() {
        let entry = at.entry(segment.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        at = match entry {
            toml::Value::Table(inner) => inner,
            other => bail!("`{}` is a value ({}), not a table", path[..=depth].join("."), other.type_str()),
        };
    }
    at.insert(last.to_string(), value);
    Ok(())
}

/// The `[[class]]` tables.
fn classes(table: &mut toml::Table) -> Result<&mut Vec<toml::Value>> {
    match table.get_mut("class") {
        Some(toml::Value::Array(classes)) if classes.iter().all(toml::Value::is_table) => Ok(classes),
        _ => bail!("the scenario has no [[class]] tables"),
    }
}

fn class_names(table: &toml::Table) -> Vec<String> {
    let classes = table.get("class").and_then(toml::Value::as_array).map_or(&[][..], Vec::as_slice);
    classes.iter().filter_map(|c| c.get("name")?.as_str().map(String::from)).collect()
}

/// The switch config's sections `--set` writes into `overrides`: those that are not scenario
/// keys (`policy`, `qcn` and `fecn` are the scenario's; `overrides.qcn.…` reaches the switch's).
fn switch_sections(scenario_keys: &[&str]) -> Vec<&'static str> {
    let sections = struct_fields::<SwitchConfig>().iter().copied();
    sections.filter(|s| !SWITCH_OWN.contains(s) && !scenario_keys.contains(s)).collect()
}

/// What an unknown key's error lists.
fn valid_keys(table: &toml::Table, scenario_keys: &[&str]) -> String {
    let scenario: Vec<&str> = scenario_keys.iter().copied().filter(|&k| k != "class").collect();
    format!(
        "valid keys: a scenario key or a dotted key into one of its tables ({}); class.NAME.KEY for the \
         [[class]] named NAME ({}); {} on every class that has it; a switch-config key, merged into \
         `overrides` ({}.…)",
        scenario.join(", "),
        class_names(table).join(", "),
        SHORTHANDS.join(" or "),
        switch_sections(scenario_keys).join(".…, ")
    )
}

/// The field names (as serialized) that `T`'s derived `Deserialize` asks for: it is handed a
/// deserializer that records the fields of `deserialize_struct` and stops there.
pub(super) fn struct_fields<T: DeserializeOwned>() -> &'static [&'static str] {
    struct Recorder<'a>(&'a mut &'static [&'static str]);
    impl<'de> Deserializer<'de> for Recorder<'_> {
        type Error = de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("not a struct"))
        }

        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            *self.0 = fields;
            Err(de::Error::custom("fields recorded"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option unit
            unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut fields: &'static [&'static str] = &[];
    // The error is the recorder's way of stopping.
    let _ = T::deserialize(Recorder(&mut fields));
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEYS: [&str; 9] = ["name", "duration", "transport", "overrides", "policy", "qcn", "fecn", "class", "storm"];

    fn scenario() -> toml::Table {
        r#"
        name = "s"
        duration = "3s"
        transport = { window = 16 }
        [[class]]
        name = "query"
        load = 0.3
        sizes = "websearch"
        [[class]]
        name = "background"
        [[class]]
        name = "bulk"
        load = 0.1
        "#
        .parse()
        .unwrap()
    }

    fn applied(set: &str) -> (toml::Table, Applied) {
        let mut table = scenario();
        let applied = apply(&mut table, set, &KEYS).unwrap();
        (table, applied)
    }

    fn error(set: &str) -> String {
        format!("{:#}", apply(&mut scenario(), set, &KEYS).unwrap_err())
    }

    fn class(table: &toml::Table, index: usize) -> &toml::Table {
        table["class"].as_array().unwrap()[index].as_table().unwrap()
    }

    #[test]
    fn top_level_and_dotted_keys() {
        let (table, a) = applied("duration=50ms");
        assert_eq!(table["duration"].as_str(), Some("50ms"));
        assert_eq!(a.paths, ["duration"]);
        let (table, a) = applied("transport.window=32");
        assert_eq!(table["transport"]["window"].as_integer(), Some(32));
        assert_eq!(a.paths, ["transport.window"]);
        // A missing table is created.
        let (table, _) = applied("qcn.reaction.min_rate=5Mbps");
        assert_eq!(table["qcn"]["reaction"]["min_rate"].as_str(), Some("5Mbps"));
        assert!(error("duration.x=1").contains("`duration` is a value (string), not a table"));
    }

    #[test]
    fn values_are_typed_when_they_parse_as_toml() {
        let value = |text| parse_value(text);
        assert_eq!(value("0.5"), toml::Value::Float(0.5));
        assert_eq!(value("32"), toml::Value::Integer(32));
        assert_eq!(value("true"), toml::Value::Boolean(true));
        assert_eq!(value("\"x\""), toml::Value::String("x".into()));
        assert_eq!(value("[1, 2]"), toml::Value::Array(vec![toml::Value::Integer(1), toml::Value::Integer(2)]));
        for text in ["100KB", "websearch", "50ms", "10Gbps", "a b", ""] {
            assert_eq!(value(text), toml::Value::String(text.into()), "{text}");
        }
        // One value only: a line break does not smuggle in a second key.
        assert_eq!(value("1\nx = 2"), toml::Value::String("1\nx = 2".into()));
    }

    #[test]
    fn one_class_by_name() {
        let (table, a) = applied("class.bulk.load=0.7");
        assert_eq!(class(&table, 2)["load"].as_float(), Some(0.7));
        assert_eq!(class(&table, 0)["load"].as_float(), Some(0.3));
        assert_eq!(a.paths, ["class[2].load"]);
        let message = error("class.nope.load=1");
        assert!(message.contains("no [[class]] is named `nope` (classes: query, background, bulk)"), "{message}");
        assert!(error("class.query=1").contains("class.NAME.KEY"));
    }

    #[test]
    fn shorthands_set_every_class_that_has_the_key() {
        let (table, a) = applied("load=0.5");
        assert_eq!(class(&table, 0)["load"].as_float(), Some(0.5));
        assert!(!class(&table, 1).contains_key("load"));
        assert_eq!(class(&table, 2)["load"].as_float(), Some(0.5));
        assert_eq!(a.paths, ["class[0].load", "class[2].load"]);
        let (table, _) = applied("sizes=datamining");
        assert_eq!(class(&table, 0)["sizes"].as_str(), Some("datamining"));
        let mut bare: toml::Table = "name = \"s\"\n[[class]]\nname = \"q\"\n".parse().unwrap();
        let message = format!("{:#}", apply(&mut bare, "sizes=websearch", &KEYS).unwrap_err());
        assert!(message.contains("no [[class]] has `sizes`"), "{message}");
    }

    #[test]
    fn switch_config_keys_go_into_overrides() {
        let (table, a) = applied("pfc.xoff=100KB");
        assert_eq!(table["overrides"]["pfc"]["xoff"].as_str(), Some("100KB"));
        assert_eq!(a.paths, ["overrides.pfc.xoff"]);
        let (table, _) = applied("ecn.min=20KB");
        assert_eq!(table["overrides"]["ecn"]["min"].as_str(), Some("20KB"));
        // `qcn` is the scenario's own table, not the switch config's.
        let (table, _) = applied("qcn.switch.cp=input");
        assert!(!table.contains_key("overrides"));
        assert_eq!(table["qcn"]["switch"]["cp"].as_str(), Some("input"));
    }

    #[test]
    fn unknown_keys_are_refused_naming_the_valid_ones() {
        let message = error("frobnicate=3");
        assert!(message.contains("unknown key `frobnicate`"), "{message}");
        for valid in ["duration", "transport", "query, background, bulk", "load or sizes", "pfc.…", "buffer.…"] {
            assert!(message.contains(valid), "{valid} missing from: {message}");
        }
        // The switch's identity and ports are the run's.
        assert!(error("port.speed=1").contains("unknown key"));
        assert!(error("switch.name=x").contains("unknown key"));
        assert!(error("duration").contains("expected KEY=VALUE"));
        assert!(error("transport..window=1").contains("empty segment"));
    }

    #[test]
    fn errors_are_blamed_on_the_set_that_wrote_there() {
        let mut table = scenario();
        let applied: Vec<Applied> = ["duration=1s", "transport.windw=3", "load=0.2"]
            .iter()
            .map(|s| apply(&mut table, s, &KEYS).unwrap())
            .collect();
        assert_eq!(blame(&applied, "transport.windw"), ["transport.windw=3"]);
        assert_eq!(blame(&applied, "class[2].load"), ["load=0.2"]);
        assert_eq!(blame(&applied, "class[1].kind"), ["duration=1s", "transport.windw=3", "load=0.2"]);
        // Not a mere prefix of the name.
        assert_eq!(blame(&applied, "durations").len(), 3);
    }

    #[test]
    fn struct_fields_are_the_serialized_names() {
        let fields = struct_fields::<SwitchConfig>();
        for section in ["switch", "port", "pfc", "buffer", "ecn", "qcn", "fecn", "policy"] {
            assert!(fields.contains(&section), "{section} missing from {fields:?}");
        }
        assert_eq!(switch_sections(&KEYS), ["pfc", "buffer", "pipeline", "scheduler", "fdb", "pfcwd", "ecn", "int"]);
    }
}
